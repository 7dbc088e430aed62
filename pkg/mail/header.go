package mail

import (
	"encoding/base64"
	"errors"
	"fmt"
	"mime"
	netmail "net/mail"
	"strings"
	"unicode"
	"unicode/utf8"
)

const (
	// maxNameRunes bounds a display name, so that a quoted ASCII name (which
	// is never folded) keeps its header line far below RFC 5322's 998.
	maxNameRunes = 200
	// maxAddressLen is RFC 5321's limit on a path, less its angle brackets.
	maxAddressLen = 254
	// foldAt is RFC 5322's recommended line length.
	foldAt = 78
)

// cleanText makes s safe for a header's free text: invalid UTF-8 becomes
// U+FFFD, every control character (CR, LF, NUL, tab, NEL, …) and the Unicode
// line and paragraph separators become spaces, runs of spaces become one,
// and the ends are trimmed. Line breaks in user input therefore cannot start
// a header; they read as spaces.
func cleanText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		if r == ' ' || unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// encodeText returns s cleaned (cleanText) and, when it is not plain ASCII
// or could not be folded or would be read as encoded words, as RFC 2047
// encoded words: Q encoding for non-ASCII text, B encoding for ASCII text
// that must be encoded anyway.
func encodeText(s string) string {
	s = cleanText(s)
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if !ascii {
		return mime.QEncoding.Encode("utf-8", s)
	}
	if strings.Contains(s, "=?") || hasLongWord(s, foldAt-len("Subject: ")) {
		return encodeWordsB(s)
	}
	return s
}

func hasLongWord(s string, max int) bool {
	for w := range strings.SplitSeq(s, " ") {
		if len(w) > max {
			return true
		}
	}
	return false
}

// encodeWordsB encodes ASCII s as B encoded words of at most 75 characters
// (mime's encoders leave ASCII alone, even when it must be encoded).
func encodeWordsB(s string) string {
	const chunk = 45 // 60 base64 characters + 12 of "=?utf-8?b??=" = 72
	var b strings.Builder
	for len(s) > 0 {
		n := min(chunk, len(s))
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString("=?utf-8?b?")
		b.WriteString(base64.StdEncoding.EncodeToString([]byte(s[:n])))
		b.WriteString("?=")
		s = s[n:]
	}
	return b.String()
}

// formatAddress validates a and formats it with net/mail.Address.String.
// The address must be an ASCII dot-atom local part @ domain name (no quoted
// local parts, no domain literals, no internationalised addresses) that
// net/mail.ParseAddress reads back unchanged; the display name may be
// anything: it is cleaned (cleanText), cut to 200 characters and quoted or
// encoded by String.
func formatAddress(field string, a *netmail.Address) (string, error) {
	if err := checkAddrSpec(a.Address); err != nil {
		return "", fmt.Errorf("%s: %w", field, err)
	}
	name := cleanText(a.Name)
	if utf8.RuneCountInString(name) > maxNameRunes {
		name = strings.TrimRight(string([]rune(name)[:maxNameRunes]), " ")
	}
	s := (&netmail.Address{Name: name, Address: a.Address}).String()
	parsed, err := netmail.ParseAddress(s)
	if err != nil {
		return "", fmt.Errorf("%s: invalid address %q: %w", field, a.Address, err)
	}
	if parsed.Address != a.Address {
		return "", fmt.Errorf("%s: invalid address %q", field, a.Address)
	}
	return s, nil
}

// CheckAddress reports whether addr can be written in a header and an
// envelope by this package (To, From, Reply-To): an ASCII dot-atom local
// part @ domain name, at most 254 bytes, that net/mail reads back
// unchanged. Internationalised addresses (jösé@example.com,
// anna@bücher.example), quoted local parts and domain literals are
// refused. Callers with an optional address from outside, such as a lead's
// Reply-To, check it first and leave it out when refused, rather than fail
// the whole message. The error names the address.
func CheckAddress(addr string) error {
	_, err := formatAddress("address", &netmail.Address{Address: addr})
	return err
}

// checkAddrSpec is the character-level part of formatAddress's rule: two
// dot-atoms (atext separated by single dots) joined by one @, at most 254
// bytes.
func checkAddrSpec(addr string) error {
	switch {
	case addr == "":
		return errors.New("empty address")
	case len(addr) > maxAddressLen:
		return fmt.Errorf("address longer than %d bytes", maxAddressLen)
	case strings.Count(addr, "@") != 1:
		return fmt.Errorf("invalid address %q: want one @", addr)
	}
	for i := 0; i < len(addr); i++ {
		if c := addr[i]; !isAtext(c) && c != '.' && c != '@' {
			return fmt.Errorf("invalid address %q: character %q not allowed", addr, c)
		}
	}
	local, domain, _ := strings.Cut(addr, "@")
	for _, atoms := range []string{local, domain} {
		if atoms == "" || atoms[0] == '.' || atoms[len(atoms)-1] == '.' || strings.Contains(atoms, "..") {
			return fmt.Errorf("invalid address %q: want dot-atom@dot-atom", addr)
		}
	}
	return nil
}

// isAtext reports whether c is an RFC 5322 atext character (ASCII only).
func isAtext(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-/=?^_`{|}~", c) >= 0
}

// checkDomain accepts a domain name of letters, digits, hyphens and dots,
// at most 253 bytes, with no empty label: what Message-ID's right side is.
func checkDomain(d string) error {
	if d == "" || len(d) > 253 {
		return fmt.Errorf("invalid domain %q", d)
	}
	for label := range strings.SplitSeq(d, ".") {
		if label == "" || len(label) > 63 {
			return fmt.Errorf("invalid domain %q", d)
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-') {
				return fmt.Errorf("invalid domain %q", d)
			}
		}
	}
	return nil
}

// checkFieldName accepts an RFC 5322 field name (printable ASCII but ':')
// of at most 64 bytes.
func checkFieldName(name string) error {
	if name == "" || len(name) > 64 {
		return fmt.Errorf("invalid header name %q", name)
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c <= ' ' || c > '~' || c == ':' {
			return fmt.Errorf("invalid header name %q", name)
		}
	}
	return nil
}

// headerWriter writes header fields with CRLF line endings, folded at
// spaces (never inside a quoted string) to keep lines near 78 characters.
type headerWriter struct {
	b   strings.Builder
	err error
}

// add writes "name: value". A value holding anything but printable ASCII
// and spaces is refused (the first refusal is kept in w.err): values reach
// here encoded, so this is the last guard against header injection.
func (w *headerWriter) add(name, value string) {
	if w.err != nil {
		return
	}
	for i := 0; i < len(value); i++ {
		if c := value[i]; c < ' ' || c > '~' {
			w.err = fmt.Errorf("header %s: byte %q not allowed", name, c)
			return
		}
	}
	w.b.WriteString(name)
	w.b.WriteString(":")
	line := len(name) + 1
	for _, tok := range foldTokens(value) {
		if line+1+len(tok) > foldAt { // may fold right after the colon
			w.b.WriteString("\r\n")
			line = 0
		}
		w.b.WriteByte(' ')
		w.b.WriteString(tok)
		line += 1 + len(tok)
	}
	w.b.WriteString("\r\n")
}

// foldTokens splits s at the single spaces where a fold may go: outside
// quoted strings, between two non-space characters (so that unfolding,
// which turns CRLF and the following spaces into one space, gives s back).
func foldTokens(s string) []string {
	var toks []string
	start, quoted, escaped := 0, false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case escaped:
			escaped = false
		case quoted && c == '\\':
			escaped = true
		case c == '"':
			quoted = !quoted
		case c == ' ' && !quoted && i > start && s[i-1] != ' ' && i+1 < len(s) && s[i+1] != ' ':
			toks = append(toks, s[start:i])
			start = i + 1
		}
	}
	return append(toks, s[start:])
}
