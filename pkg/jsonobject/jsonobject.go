// Package jsonobject reads a request body that must be one JSON object,
// member by member, for code that reports every problem of a request at
// once (an unknown, repeated or mistyped field each) rather than the first
// one a decoder meets: the lead rules (origin/leads/rules) and the pairing
// routes (pairing/pairinghttp). It is plain Go on encoding/json, with no
// HTTP or database types, so the rules may use it.
package jsonobject

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"unicode/utf8"
)

// Member is one top-level member of a JSON object, as Split found it.
type Member struct {
	// Name is the member's name, unescaped.
	Name string
	// Raw is the member's value as written.
	Raw json.RawMessage
	// Repeated is true when an earlier member has the same name.
	Repeated bool
}

// Error is what Split finds wrong with a body.
type Error struct {
	// Problem completes "the body …" for a client: "is not valid UTF-8",
	// "is empty: send a JSON object", "is not valid JSON", "must be a JSON
	// object" or "has data after the JSON object".
	Problem string
	// Syntax is the decoder's error when Problem is "is not valid JSON",
	// nil otherwise.
	Syntax error
}

func (e *Error) Error() string {
	if e.Syntax != nil {
		return "body " + e.Problem + ": " + e.Syntax.Error()
	}
	return "body " + e.Problem
}

// Unwrap returns the decoder's error, if any.
func (e *Error) Unwrap() error { return e.Syntax }

// Split reads body as one JSON object and returns its members in the
// order written, marking repeated names. A leading UTF-8 byte order mark,
// as some clients send, is skipped; values are kept as written. A body
// that is not one JSON object with nothing after it but white space is an
// *Error.
func Split(body []byte) ([]Member, error) {
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	if !utf8.Valid(body) {
		return nil, &Error{Problem: "is not valid UTF-8"}
	}
	invalid := func(err error) ([]Member, error) {
		return nil, &Error{Problem: "is not valid JSON", Syntax: err}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	tok, err := dec.Token()
	if errors.Is(err, io.EOF) {
		return nil, &Error{Problem: "is empty: send a JSON object"}
	}
	if err != nil {
		return invalid(err)
	}
	if tok != json.Delim('{') {
		return nil, &Error{Problem: "must be a JSON object"}
	}
	var members []Member
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return invalid(err)
		}
		name, _ := tok.(string) // inside an object, Token returns keys as strings
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return invalid(err)
		}
		members = append(members, Member{Name: name, Raw: raw, Repeated: seen[name]})
		seen[name] = true
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return invalid(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, &Error{Problem: "has data after the JSON object"}
	}
	return members, nil
}

// String decodes raw, one member's value, as a string: present is false
// for null (s is ""), ok is false for a value of another type or raw that
// is not valid JSON.
func String(raw json.RawMessage) (s string, present, ok bool) {
	if string(raw) == "null" {
		return "", false, true
	}
	if len(raw) == 0 || raw[0] != '"' {
		return "", true, false
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", true, false
	}
	return s, true, true
}
