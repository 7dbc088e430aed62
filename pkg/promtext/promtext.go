// Package promtext writes a process's metrics in the Prometheus text
// exposition format (version 0.0.4) with a HELP and a TYPE line for every
// family, as Prometheus' own parser and tools expect.
//
// The metrics live in github.com/VictoriaMetrics/metrics' sets; importing
// this package turns on that library's metadata (TYPE lines, and HELP lines
// without text), and [Write] fills each HELP line with the text the family's
// package gave [Describe]. Every family of Listgate's is named
// listgate_<program>_<what>[_<unit>] (listgate_edge_…, listgate_origin_…),
// counters end in _total, durations are in seconds; the Go runtime's and the
// process's families keep their standard go_ and process_ names.
package promtext

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/VictoriaMetrics/metrics"
)

func init() { metrics.ExposeMetadata(true) }

// ContentType is the media type of what Write writes.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

var (
	mu   sync.RWMutex
	help = map[string]string{}
)

// Describe records the HELP text of a metric family (its name without
// labels, and for a histogram without _bucket/_sum/_count). Call it where
// the family is defined, at package initialization. A second call for the
// same family replaces the text. Safe for concurrent use.
func Describe(family, text string) {
	mu.Lock()
	help[family] = text
	mu.Unlock()
}

// Help returns the text Describe recorded for family, and whether there
// was one.
func Help(family string) (string, bool) {
	mu.RLock()
	defer mu.RUnlock()
	t, ok := help[family]
	return t, ok
}

// Write writes every metric of the process — the registered sets, the Go
// runtime and the process — and then what each of more writes (families
// written by hand, with WriteFamily), each HELP line with its family's text.
// A family nobody described keeps an empty HELP line (the standard go_ and
// process_ ones get a generic text).
func Write(w io.Writer, more ...func(io.Writer)) {
	var buf bytes.Buffer
	metrics.WritePrometheus(&buf, true)
	for _, f := range more {
		f(&buf)
	}
	bw := bufio.NewWriterSize(w, 32<<10)
	for line := range bytes.Lines(buf.Bytes()) {
		if name, ok := bytes.CutPrefix(line, []byte("# HELP ")); ok {
			name = bytes.TrimRight(name, "\n")
			if bytes.IndexByte(name, ' ') < 0 {
				writeHelp(bw, string(name))
				continue
			}
		}
		bw.Write(line)
	}
	bw.Flush()
}

func writeHelp(w *bufio.Writer, family string) {
	text, ok := Help(family)
	if !ok {
		switch {
		case strings.HasPrefix(family, "go_"):
			text = "Go runtime metric."
		case strings.HasPrefix(family, "process_"):
			text = "Process metric."
		}
	}
	w.WriteString("# HELP ")
	w.WriteString(family)
	if text != "" {
		w.WriteByte(' ')
		w.WriteString(escapeHelp(text))
	}
	w.WriteByte('\n')
}

// escapeHelp escapes a HELP text as the format requires: backslash and
// line feed.
func escapeHelp(s string) string {
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`).Replace(s)
}

// Sample is one sample of a family written by hand: its labels, as
// `name="value",…` without braces (empty for none), and its value.
type Sample struct {
	Labels string
	Value  float64
}

// WriteFamily writes one family by hand — its HELP and TYPE lines once,
// then its samples — for values that live outside the metrics sets (a
// pool's or a cache's own counters). typ is counter, gauge or untyped.
func WriteFamily(w io.Writer, family, typ string, samples ...Sample) {
	fmt.Fprintf(w, "# HELP %s\n# TYPE %s %s\n", family, family, typ)
	var b []byte
	for _, s := range samples {
		b = append(b[:0], family...)
		if s.Labels != "" {
			b = append(b, '{')
			b = append(b, s.Labels...)
			b = append(b, '}')
		}
		b = append(b, ' ')
		b = strconv.AppendFloat(b, s.Value, 'g', -1, 64)
		b = append(b, '\n')
		w.Write(b)
	}
}
