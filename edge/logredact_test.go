package main

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/listgate/listgate/pkg/logfmt"
)

// fasthttp's error lines quote the bytes of a request it could not parse,
// which can hold a key: redactingLogger removes them in either log format.
func TestRedactingLoggerBothFormats(t *testing.T) {
	const key = "lgk_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
	for _, format := range []string{logfmt.JSON, logfmt.Text} {
		var buf bytes.Buffer
		log := slog.New(logfmt.NewHandler(&buf, format, nil))
		redactingLogger{log}.Printf("error when serving connection %q<->%q: cannot parse header %q: Bearer %s",
			"127.0.0.1:8080", "127.0.0.1:50000", "Authorization: Bearer "+key+"\r", key)
		out := buf.String()
		if strings.Contains(out, key[4:]) || !strings.Contains(out, "127.0.0.1:50000") || !strings.Contains(out, "[redacted]") {
			t.Errorf("%s: %s", format, out)
		}
		if format == logfmt.Text && strings.HasPrefix(out, "{") {
			t.Errorf("text format wrote JSON: %s", out)
		}
	}
}
