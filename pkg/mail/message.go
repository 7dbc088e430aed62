package mail

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	netmail "net/mail"
	"net/textproto"
	"slices"
	"strings"
	"time"
)

// Message is one e-mail to one recipient, with a plain-text body and
// optionally an HTML alternative. Its zero value is not sendable: To is
// required, and From unless a [Sender] fills it in.
//
// Addresses and text may come from untrusted input: [Message.Bytes]
// validates the addresses and cleans and encodes the text, so that no input
// can add a header line.
type Message struct {
	// From is the header From. Sender.Send sets it to the URL's from= when
	// it is nil or has no Address.
	From *netmail.Address
	// To is the one recipient, in the header and the envelope. Required.
	To *netmail.Address
	// ReplyTo, when not nil and its Address is not empty, is written as
	// Reply-To: for a lead, the enquirer's name and e-mail address.
	ReplyTo *netmail.Address
	// Subject is free text; line breaks and other control characters in it
	// become spaces, and non-ASCII text is RFC 2047 encoded.
	Subject string
	// Text is the text/plain body. Line breaks may be LF, CRLF or CR.
	Text string
	// HTML is the text/html alternative; when empty the message is a single
	// text/plain part rather than multipart/alternative, and its text gets
	// a final line break if it lacks one.
	HTML string
	// Headers are extra header fields, e.g. "X-Listgate-Lead-Id", written in
	// name order after Subject. Values are free text like Subject. Names
	// must be valid field names of at most 64 bytes and must not be one that
	// Bytes writes (Date, Message-ID, From, To, Reply-To, Subject,
	// MIME-Version, Content-*) nor another address or trace field (Sender,
	// Cc, Bcc, Return-Path, Received, Resent-*).
	Headers map[string]string
}

// reserved are the header names Headers may not use (lower case); every
// name starting with "content-" or "resent-" is reserved too.
var reserved = []string{
	"date", "message-id", "from", "to", "reply-to", "subject", "mime-version",
	"sender", "cc", "bcc", "return-path", "received",
}

// Bytes composes m as an RFC 5322 message with CRLF line endings: Date (now,
// RFC 1123 with numeric zone), a new random Message-ID
// <…@messageIDDomain>, From, To, Reply-To, Subject, the extra Headers,
// MIME-Version, then the body: multipart/alternative with text/plain and
// text/html parts (or text/plain alone when HTML is empty), UTF-8,
// quoted-printable.
//
// It fails when To or From is missing or invalid, when ReplyTo is set and
// invalid, when messageIDDomain is not a domain name, or when an extra
// header name is invalid or reserved. Every header line is printable
// ASCII; no value can carry CR, LF or NUL.
func (m Message) Bytes(now time.Time, messageIDDomain string) ([]byte, error) {
	if err := checkDomain(messageIDDomain); err != nil {
		return nil, fmt.Errorf("message-id domain: %w", err)
	}
	if m.From == nil || m.From.Address == "" {
		return nil, errors.New("from: address is required")
	}
	if m.To == nil || m.To.Address == "" {
		return nil, errors.New("to: address is required")
	}
	from, err := formatAddress("from", m.From)
	if err != nil {
		return nil, err
	}
	to, err := formatAddress("to", m.To)
	if err != nil {
		return nil, err
	}
	var w headerWriter
	w.add("Date", now.Format(time.RFC1123Z))
	w.add("Message-ID", "<"+rand.Text()+"@"+messageIDDomain+">")
	w.add("From", from)
	w.add("To", to)
	if m.ReplyTo != nil && m.ReplyTo.Address != "" {
		replyTo, err := formatAddress("reply-to", m.ReplyTo)
		if err != nil {
			return nil, err
		}
		w.add("Reply-To", replyTo)
	}
	w.add("Subject", encodeText(m.Subject))
	if err := m.addHeaders(&w); err != nil {
		return nil, err
	}
	body := m.body(&w)
	if w.err != nil {
		return nil, w.err
	}
	out := make([]byte, 0, w.b.Len()+2+len(body))
	out = append(out, w.b.String()...)
	out = append(out, "\r\n"...)
	return append(out, body...), nil
}

// body writes the MIME header fields to w and returns the body they
// describe.
func (m Message) body(w *headerWriter) []byte {
	w.add("MIME-Version", "1.0")
	var body bytes.Buffer
	if m.HTML == "" {
		w.add("Content-Type", "text/plain; charset=utf-8")
		w.add("Content-Transfer-Encoding", "quoted-printable")
		text := m.Text
		if !strings.HasSuffix(text, "\n") && !strings.HasSuffix(text, "\r") {
			text += "\n" // the message ends with CRLF
		}
		writeQP(&body, text)
		return body.Bytes()
	}
	mw := multipart.NewWriter(&body)
	w.add("Content-Type", mime.FormatMediaType("multipart/alternative", map[string]string{"boundary": mw.Boundary()}))
	writePart(mw, "text/plain; charset=utf-8", m.Text)
	writePart(mw, "text/html; charset=utf-8", m.HTML)
	mw.Close() // writes to a bytes.Buffer: cannot fail
	return body.Bytes()
}

// addHeaders writes m.Headers in name order after checking their names.
func (m Message) addHeaders(w *headerWriter) error {
	names := make([]string, 0, len(m.Headers))
	seen := make(map[string]bool, len(m.Headers))
	for name := range m.Headers {
		if err := checkFieldName(name); err != nil {
			return err
		}
		lower := strings.ToLower(name)
		if slices.Contains(reserved, lower) || strings.HasPrefix(lower, "content-") || strings.HasPrefix(lower, "resent-") {
			return fmt.Errorf("header %s: reserved, set by Message itself or not allowed", name)
		}
		if seen[lower] {
			return fmt.Errorf("header %s: given twice", name)
		}
		seen[lower] = true
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		w.add(name, encodeText(m.Headers[name]))
	}
	return nil
}

// writePart adds one quoted-printable part of the given content type.
func writePart(mw *multipart.Writer, contentType, text string) {
	h := textproto.MIMEHeader{}
	h.Set("Content-Type", contentType)
	h.Set("Content-Transfer-Encoding", "quoted-printable")
	pw, _ := mw.CreatePart(h) // writes to a bytes.Buffer: cannot fail
	writeQP(pw, text)
}

// writeQP writes text, made valid UTF-8, as quoted-printable with CRLF line
// breaks (quotedprintable.Writer turns LF, CR and CRLF into CRLF).
func writeQP(w io.Writer, text string) {
	qp := quotedprintable.NewWriter(w)
	qp.Write([]byte(strings.ToValidUTF8(text, "\uFFFD"))) // to a buffer: cannot fail
	qp.Close()
}
