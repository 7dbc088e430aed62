package logfmt

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"regexp"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct{ in, def, want string }{
		{"", JSON, JSON}, {"", Text, Text}, {"json", Text, JSON}, {"TEXT", JSON, Text}, {" text ", JSON, Text},
	} {
		if got, err := Parse(tc.in, tc.def); err != nil || got != tc.want {
			t.Errorf("Parse(%q, %q) = %q, %v; want %q", tc.in, tc.def, got, err, tc.want)
		}
	}
	for _, bad := range []string{"logfmt", "yaml", "j"} {
		if _, err := Parse(bad, JSON); err == nil || !strings.Contains(err.Error(), "LISTGATE_LOG_FORMAT") {
			t.Errorf("Parse(%q): %v", bad, err)
		}
	}
}

const key = "lgk_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"

// log writes the same records through a handler of format.
func log(format string, level slog.Level) string {
	var buf bytes.Buffer
	l := slog.New(NewHandler(&buf, format, &slog.HandlerOptions{Level: level})).With("service", "origin")
	l.Debug("hidden at info")
	l.Info("origin listening", "addr", "127.0.0.1:8081")
	l.WithGroup("req").Warn("bad key "+key, "path", "/v1/sites/x", "auth", "Bearer "+key, "err", errors.New("introspect "+key))
	l.Error("multi\nline", "secret", "whsec_c2VjcmV0c2VjcmV0c2VjcmV0", "n", 3)
	return buf.String()
}

// The text format is one short line a record: time of day, level,
// message, attributes; the level still filters.
func TestTextFormat(t *testing.T) {
	out := log(Text, slog.LevelInfo)
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines:\n%s", len(lines), out)
	}
	line := regexp.MustCompile(`^\d\d:\d\d:\d\d\.\d{3} (INFO |WARN |ERROR) \S`)
	for _, l := range lines {
		if !line.MatchString(l) || strings.HasPrefix(l, "{") {
			t.Errorf("not a text line: %q", l)
		}
	}
	if !strings.HasSuffix(lines[0], "INFO  origin listening service=origin addr=127.0.0.1:8081") {
		t.Errorf("line %q", lines[0])
	}
	if !strings.Contains(lines[1], `req.path=/v1/sites/x`) || !strings.Contains(lines[2], `ERROR multi\nline`) {
		t.Errorf("lines:\n%s", out)
	}
	if strings.Contains(out, "hidden at info") {
		t.Error("a debug record at level info")
	}
	if out := log(Text, slog.LevelDebug); !strings.Contains(out, "DEBUG hidden at info") {
		t.Errorf("no debug record at level debug:\n%s", out)
	}
}

func TestJSONFormat(t *testing.T) {
	out := log(JSON, slog.LevelInfo)
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines:\n%s", len(lines), out)
	}
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil || m["service"] != "origin" || m["msg"] == nil {
			t.Errorf("not a JSON record: %q %v", l, err)
		}
	}
}

// Keys and webhook secrets never reach a line, in either format: in the
// message, a string value, an error.
func TestSecretsAreScrubbed(t *testing.T) {
	for _, format := range []string{Text, JSON} {
		out := log(format, slog.LevelInfo)
		if strings.Contains(out, key[4:]) || strings.Contains(out, "c2VjcmV0c2VjcmV0") {
			t.Errorf("%s: a secret in the log:\n%s", format, out)
		}
		if strings.Count(out, "lgk_[redacted]") != 3 || !strings.Contains(out, "whsec_[redacted]") {
			t.Errorf("%s: not redacted where expected:\n%s", format, out)
		}
	}
	if got := Scrub("key_id=" + "7f1c2d3e-aaaa"); got != "key_id=7f1c2d3e-aaaa" {
		t.Errorf("Scrub changed %q", got)
	}
}

// A JSON line (the edge's, under origin dev) becomes the same text line
// the text handler writes; anything else stays as it is.
func TestRetext(t *testing.T) {
	var buf bytes.Buffer
	slog.New(NewHandler(&buf, JSON, nil)).With("service", "edge").WithGroup("g").Warn("origin unreachable "+key, "n", 3, "ok", true, "f", 1.5)
	got := string(Retext(buf.Bytes()))
	want := regexp.MustCompile(`^\d\d:\d\d:\d\d\.\d{3} WARN  origin unreachable lgk_\[redacted\] service=edge g\.f=1\.5 g\.n=3 g\.ok=true\n$`)
	if !want.MatchString(got) {
		t.Errorf("Retext(%q) = %q", buf.String(), got)
	}
	if got := string(Retext([]byte("panic: " + key + "\n"))); got != "panic: lgk_[redacted]\n" {
		t.Errorf("Retext of a plain line with a key: %q", got)
	}
	for _, line := range []string{"plain text\n", "{broken\n", ""} {
		if got := string(Retext([]byte(line))); got != line {
			t.Errorf("Retext(%q) = %q", line, got)
		}
	}
}

// Retext never panics on what a child writes.
func FuzzRetext(f *testing.F) {
	f.Add([]byte(`{"time":"2026-11-26T10:00:00Z","level":"INFO","msg":"x","a":{"b":[1,2]},"c":null}`))
	f.Add([]byte(`{"level":"nope","msg":3}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		out := Retext(line)
		if bytes.Contains(out, []byte(key)) {
			t.Fatal("a key passed through")
		}
	})
}
