package reaxml

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
)

// maxRootTag bounds the root start tag RedactCredentials holds in memory.
const maxRootTag = 1 << 20

// ErrRootTagTooLong is returned by RedactCredentials when the root start
// tag is longer than 1 MiB; nothing after the prolog has been written then.
var ErrRootTagTooLong = errors.New("reaxml: root start tag longer than 1 MiB")

// RedactCredentials copies the feed in src to dst with the username and
// password attributes of the root element removed (names compared without
// case or namespace prefix). Everything else is copied byte for byte; the
// line breaks inside removed attributes are kept so line numbers in the copy
// match the original. It streams: memory does not grow with the feed.
//
// It returns the first read or write error. Input that has no root element
// is copied unchanged.
func RedactCredentials(dst io.Writer, src io.Reader) error {
	br := bufio.NewReaderSize(src, 32<<10)
	bw := bufio.NewWriterSize(dst, 32<<10)
	err := redact(bw, br)
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	return err
}

func redact(w *bufio.Writer, r *bufio.Reader) error {
	found, err := copyProlog(w, r)
	if err != nil || !found {
		return ignoreEOF(err)
	}
	tag, err := readTag(r)
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	if _, werr := w.Write(redactTag(tag)); werr != nil {
		return werr
	}
	if err != nil {
		return nil // the input ended inside the root tag
	}
	_, err = io.Copy(w, r)
	return err
}

func ignoreEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// copyProlog copies everything before the root start tag: text, the XML
// declaration, processing instructions, comments and the DOCTYPE (with an
// internal subset). It reports whether it stopped at a root start tag, whose
// '<' it has consumed but not written.
func copyProlog(w *bufio.Writer, r *bufio.Reader) (bool, error) {
	for {
		c, err := r.ReadByte()
		if err != nil {
			return false, err
		}
		if c != '<' {
			w.WriteByte(c)
			continue
		}
		next, err := r.Peek(1)
		if err != nil {
			w.WriteByte(c)
			return false, err
		}
		switch next[0] {
		case '?':
			w.WriteByte(c)
			err = copyThrough(w, r, "?>")
		case '!':
			w.WriteByte(c)
			err = copyMarkup(w, r)
		default:
			return true, nil
		}
		if err != nil {
			return false, err
		}
	}
}

// copyThrough copies up to and including end.
func copyThrough(w *bufio.Writer, r *bufio.Reader, end string) error {
	matched := 0
	for matched < len(end) {
		c, err := r.ReadByte()
		if err != nil {
			return err
		}
		w.WriteByte(c)
		switch {
		case c == end[matched]:
			matched++
		case c == end[0]:
			matched = 1
		default:
			matched = 0
		}
	}
	return nil
}

// copyMarkup copies a <!…> construct after its '<': a comment, CDATA, or a
// declaration such as DOCTYPE with nested <…> and quoted strings.
func copyMarkup(w *bufio.Writer, r *bufio.Reader) error {
	if head, _ := r.Peek(3); string(head) == "!--" {
		return copyThrough(w, r, "-->")
	}
	if head, _ := r.Peek(8); string(head) == "![CDATA[" {
		return copyThrough(w, r, "]]>")
	}
	depth := 1
	var quote byte
	for depth > 0 {
		c, err := r.ReadByte()
		if err != nil {
			return err
		}
		w.WriteByte(c)
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '<':
			if head, _ := r.Peek(3); string(head) == "!--" {
				if err := copyThrough(w, r, "-->"); err != nil {
					return err
				}
				continue
			}
			depth++
		case c == '>':
			depth--
		}
	}
	return nil
}

// readTag reads the root start tag after its '<', through the closing '>'
// outside quotes, and returns it with the '<'.
func readTag(r *bufio.Reader) ([]byte, error) {
	tag := []byte{'<'}
	var quote byte
	for {
		c, err := r.ReadByte()
		if err != nil {
			return tag, err
		}
		tag = append(tag, c)
		if len(tag) > maxRootTag {
			return nil, ErrRootTagTooLong
		}
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '>':
			return tag, nil
		}
	}
}

// redactTag removes username and password attributes from a start tag,
// keeping the line breaks they contained.
func redactTag(tag []byte) []byte {
	out := make([]byte, 0, len(tag))
	i := 1
	for i < len(tag) && !isTagSpace(tag[i]) && tag[i] != '>' && tag[i] != '/' {
		i++
	}
	out = append(out, tag[:i]...)
	for i < len(tag) {
		start := i
		for i < len(tag) && isTagSpace(tag[i]) {
			i++
		}
		nameStart := i
		for i < len(tag) && !isTagSpace(tag[i]) && tag[i] != '=' && tag[i] != '>' && tag[i] != '/' {
			i++
		}
		name := string(tag[nameStart:i])
		if name == "" { // '/', '>' or junk: copy one byte and go on
			if i < len(tag) {
				i++
			}
			out = append(out, tag[start:i]...)
			continue
		}
		i = attrValueEnd(tag, i)
		if isCredential(name) {
			out = append(out, bytes.Repeat([]byte{'\n'}, bytes.Count(tag[start:i], []byte{'\n'}))...)
		} else {
			out = append(out, tag[start:i]...)
		}
	}
	return out
}

// attrValueEnd returns the end of the optional `= value` after an attribute
// name ending at i.
func attrValueEnd(tag []byte, i int) int {
	j := i
	for j < len(tag) && isTagSpace(tag[j]) {
		j++
	}
	if j >= len(tag) || tag[j] != '=' {
		return i // a name without a value (non-strict XML)
	}
	j++
	for j < len(tag) && isTagSpace(tag[j]) {
		j++
	}
	if j < len(tag) && (tag[j] == '"' || tag[j] == '\'') {
		q := tag[j]
		end := bytes.IndexByte(tag[j+1:], q)
		if end < 0 {
			return len(tag) // unterminated: the rest is the value
		}
		return j + 1 + end + 1
	}
	// Unquoted (non-strict XML): the characters encoding/xml accepts.
	for j < len(tag) && isUnquotedValueByte(tag[j]) {
		j++
	}
	return j
}

func isUnquotedValueByte(b byte) bool {
	return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' ||
		b == '_' || b == ':' || b == '-'
}

func isCredential(name string) bool {
	if i := strings.LastIndexByte(name, ':'); i >= 0 {
		name = name[i+1:]
	}
	return strings.EqualFold(name, "username") || strings.EqualFold(name, "password")
}

func isTagSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
