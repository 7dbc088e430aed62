// Package logfmt builds the slog handlers of both programs from
// LISTGATE_LOG_FORMAT: "json" (one JSON object a line, the default: for
// log collectors) or "text" (one short human line a record: for a
// terminal, the default of `origin dev`). Both handlers scrub API keys and
// webhook secrets from messages and string values, wherever a caller put
// them by mistake.
package logfmt

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
)

// Env is the variable that selects the format.
const Env = "LISTGATE_LOG_FORMAT"

// Formats.
const (
	JSON = "json"
	Text = "text"
)

// Parse checks a LISTGATE_LOG_FORMAT value; empty is def.
func Parse(value, def string) (string, error) {
	switch v := strings.ToLower(strings.TrimSpace(value)); v {
	case "":
		return def, nil
	case JSON, Text:
		return v, nil
	default:
		return "", fmt.Errorf("%s=%q: must be json or text", Env, value)
	}
}

// NewHandler returns the handler of format (JSON unless Text) writing to w.
func NewHandler(w io.Writer, format string, opts *slog.HandlerOptions) slog.Handler {
	o := slog.HandlerOptions{}
	if opts != nil {
		o = *opts
	}
	next := o.ReplaceAttr
	o.ReplaceAttr = func(groups []string, a slog.Attr) slog.Attr {
		if next != nil {
			a = next(groups, a)
		}
		return scrubAttr(a)
	}
	if format == Text {
		return newTextHandler(w, &o)
	}
	// ReplaceAttr sees the message too ("msg").
	return slog.NewJSONHandler(w, &o)
}

// secret matches what must never reach a log: API keys (lgk_ and 36
// base62 characters) and webhook secrets (whsec_ and base64).
var secret = regexp.MustCompile(`lgk_[0-9A-Za-z]{8,}|whsec_[0-9A-Za-z+/=]{8,}`)

// Scrub replaces API keys and webhook secrets in s.
func Scrub(s string) string {
	if !strings.Contains(s, "lgk_") && !strings.Contains(s, "whsec_") {
		return s
	}
	return secret.ReplaceAllStringFunc(s, func(m string) string {
		prefix, _, _ := strings.Cut(m, "_")
		return prefix + "_[redacted]"
	})
}

func scrubAttr(a slog.Attr) slog.Attr {
	switch a.Value.Kind() {
	case slog.KindString:
		if s := a.Value.String(); Scrub(s) != s {
			a.Value = slog.StringValue(Scrub(s))
		}
	case slog.KindAny:
		if err, ok := a.Value.Any().(error); ok {
			if s := err.Error(); Scrub(s) != s {
				a.Value = slog.StringValue(Scrub(s))
			}
		}
	}
	return a
}

// textHandler writes "15:04:05.000 INFO  message key=value ..." lines: the
// time of day, the level, the message, then the attributes as slog's text
// handler writes them (quoted when they need it, groups as a.b=).
type textHandler struct {
	mu    *sync.Mutex
	w     io.Writer
	buf   *bytes.Buffer
	attrs slog.Handler // a TextHandler into buf without time, level, message
	level slog.Leveler
}

func newTextHandler(w io.Writer, opts *slog.HandlerOptions) *textHandler {
	buf := new(bytes.Buffer)
	inner := *opts
	next := opts.ReplaceAttr
	inner.ReplaceAttr = func(groups []string, a slog.Attr) slog.Attr {
		if len(groups) == 0 && (a.Key == slog.TimeKey || a.Key == slog.LevelKey || a.Key == slog.MessageKey) {
			return slog.Attr{}
		}
		return next(groups, a)
	}
	inner.Level = slog.LevelDebug // the level is checked here
	level := opts.Level
	if level == nil {
		level = slog.LevelInfo
	}
	return &textHandler{mu: new(sync.Mutex), w: w, buf: buf, attrs: slog.NewTextHandler(buf, &inner), level: level}
}

func (h *textHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level.Level() }

func (h *textHandler) Handle(ctx context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.buf.Reset()
	if err := h.attrs.Handle(ctx, r); err != nil {
		return err
	}
	attrs := bytes.TrimRight(h.buf.Bytes(), "\n")
	t := r.Time
	if t.IsZero() {
		t = time.Now()
	}
	line := make([]byte, 0, 64+len(r.Message)+len(attrs))
	line = t.AppendFormat(line, "15:04:05.000")
	line = append(line, ' ')
	line = append(line, fmt.Sprintf("%-5s", r.Level.String())...)
	line = append(line, ' ')
	line = append(line, strings.ReplaceAll(Scrub(r.Message), "\n", `\n`)...)
	if len(attrs) > 0 {
		line = append(line, ' ')
		line = append(line, attrs...)
	}
	line = append(line, '\n')
	_, err := h.w.Write(line)
	return err
}

func (h *textHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.attrs = h.attrs.WithAttrs(attrs)
	return &c
}

func (h *textHandler) WithGroup(name string) slog.Handler {
	c := *h
	c.attrs = h.attrs.WithGroup(name)
	return &c
}

// Retext rewrites one line of the JSON format as the text format (for a
// child process that must log JSON, as `origin dev` runs the edge); a line
// that is not a JSON object comes back as it is, scrubbed.
func Retext(line []byte) []byte {
	orig := line
	line = []byte(Scrub(string(line)))
	if len(orig) == 0 {
		line = orig
	}
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return line
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return line
	}
	var (
		when  time.Time
		level = slog.LevelInfo
		msg   string
		attrs []slog.Attr
	)
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return line
		}
		key, _ := t.(string)
		var v any
		if err := dec.Decode(&v); err != nil {
			return line
		}
		switch s, _ := v.(string); key {
		case slog.TimeKey:
			when, _ = time.Parse(time.RFC3339Nano, s)
		case slog.LevelKey:
			_ = level.UnmarshalText([]byte(s))
		case slog.MessageKey:
			msg = s
		default:
			attrs = append(attrs, jsonAttr(key, v))
		}
	}
	if when.IsZero() {
		when = time.Now()
	}
	var out bytes.Buffer
	h := newTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug, ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr { return scrubAttr(a) }})
	r := slog.NewRecord(when, level, msg, 0)
	r.AddAttrs(attrs...)
	if err := h.Handle(context.Background(), r); err != nil {
		return line
	}
	return out.Bytes()
}

// jsonAttr is a decoded JSON value as an attribute: objects as groups.
func jsonAttr(key string, v any) slog.Attr {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		group := make([]any, 0, len(keys))
		for _, k := range keys {
			group = append(group, jsonAttr(k, x[k]))
		}
		return slog.Group(key, group...)
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return slog.Int64(key, i)
		}
		f, _ := x.Float64()
		return slog.Float64(key, f)
	case nil:
		return slog.Any(key, nil)
	case string:
		return slog.String(key, x)
	case bool:
		return slog.Bool(key, x)
	default:
		b, _ := json.Marshal(x)
		return slog.String(key, string(b))
	}
}
