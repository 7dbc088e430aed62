package e2e

import (
	"regexp"
	"strings"
	"testing"
)

// testNoKeysInPages checks every page, XHR and fetch response the two tabs
// got from WordPress (the pairing poll's included) for the paired key, the
// lead key and the demo read key.
func testNoKeysInPages(t *testing.T, e *env) {
	var paired string
	e.wp.option(t, "listgate_api_key", &paired)
	if !strings.HasPrefix(paired, "lgk_") {
		t.Fatalf("listgate_api_key is %q", paired)
	}
	keys := map[string]string{"the paired key": paired, "the lead key": e.leadKey, "the demo read key": e.lg.readKey}
	checked := 0
	for _, r := range e.pages {
		bodies, failed := r.wait()
		for _, f := range failed {
			t.Errorf("recording responses: %s", f)
		}
		for where, body := range bodies {
			checked++
			for name, key := range keys {
				if strings.Contains(body, key) {
					t.Errorf("%s is in the response of %s", name, where)
				}
			}
		}
	}
	// Sign-in, settings, pairing polls, grids, the listing, enquiries...
	if checked < 15 {
		t.Errorf("only %d responses were checked: is the recorder working?", checked)
	}
	t.Logf("%d responses checked for keys", checked)
}

// phpProblem starts a debug.log entry of a PHP error, warning or notice.
var phpProblem = regexp.MustCompile(`PHP (Fatal error|Parse error|Recoverable fatal error|Warning|Notice|Deprecated|Strict Standards)`)

// testNoPHPErrors checks WordPress's debug.log for PHP errors, warnings
// and notices that mention the plugin, and for fatal errors anywhere.
func testNoPHPErrors(t *testing.T, e *env) { checkNoPHPErrors(t, e.wp) }

// checkNoPHPErrors fails t when wp's debug.log has a PHP error, warning or
// notice that mentions the plugin, or a fatal error anywhere.
func checkNoPHPErrors(t *testing.T, wp *wordpress) {
	t.Helper()
	log := wp.ReadDebugLog()
	var bad []string
	for _, entry := range logEntries(log) {
		if !phpProblem.MatchString(entry) {
			continue
		}
		if strings.Contains(entry, "plugins/listgate") || strings.Contains(entry, "PHP Fatal") {
			bad = append(bad, entry)
		}
	}
	if len(bad) > 0 {
		t.Errorf("debug.log has %d PHP problems of the plugin:\n%s\n--- whole debug.log ---\n%s",
			len(bad), strings.Join(bad, "\n"), log)
	}
}

// logEntries splits a PHP error log into entries: each starts with a
// "[date] " line, and stack traces continue it on the following lines.
func logEntries(log string) []string {
	var entries []string
	for _, line := range strings.Split(log, "\n") {
		if strings.HasPrefix(line, "[") || len(entries) == 0 {
			entries = append(entries, line)
			continue
		}
		entries[len(entries)-1] += "\n" + line
	}
	return entries
}
