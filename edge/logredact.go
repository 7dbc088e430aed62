package main

import (
	"fmt"
	"log/slog"
	"regexp"
)

// quoted matches the %q-quoted strings in fasthttp's error lines; addrs
// those that are only an address, which stay.
var (
	quoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	addrs  = regexp.MustCompile(`^"[0-9A-Fa-f.:\[\]]*"$`)
	// keyLike is an API key or a bearer credential anywhere in a line.
	keyLike = regexp.MustCompile(`lgk_[0-9A-Za-z]+|(?i)bearer\s+\S+`)
)

// redactingLogger is fasthttp.Server.Logger: fasthttp quotes the bytes of
// a request it cannot parse in some errors (a header value with a stray
// CR, a control byte), SecureErrorLogMessage or not, and those bytes can
// be an API key. Every quoted string but a bare address is replaced.
type redactingLogger struct{ log *slog.Logger }

func (l redactingLogger) Printf(format string, args ...any) {
	msg := quoted.ReplaceAllStringFunc(fmt.Sprintf(format, args...), func(q string) string {
		if addrs.MatchString(q) {
			return q
		}
		return `"[redacted]"`
	})
	// A value fasthttp did not quote: keys and bearer credentials.
	msg = keyLike.ReplaceAllString(msg, "[redacted]")
	l.log.Warn(msg)
}
