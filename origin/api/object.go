package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"unicode/utf8"
)

// Member is one top-level member of a JSON object, as SplitObject found
// it.
type Member struct {
	// Name is the member's name, unescaped.
	Name string
	// Raw is the member's value as written.
	Raw json.RawMessage
	// Repeated is true when an earlier member has the same name.
	Repeated bool
}

// ObjectError is what SplitObject finds wrong with a body.
type ObjectError struct {
	// Problem completes "the body …" for a client: "is not valid UTF-8",
	// "is empty: send a JSON object", "is not valid JSON", "must be a JSON
	// object" or "has data after the JSON object".
	Problem string
	// Syntax is the decoder's error when Problem is "is not valid JSON",
	// nil otherwise.
	Syntax error
}

func (e *ObjectError) Error() string {
	if e.Syntax != nil {
		return "body " + e.Problem + ": " + e.Syntax.Error()
	}
	return "body " + e.Problem
}

// Unwrap returns the decoder's error, if any.
func (e *ObjectError) Unwrap() error { return e.Syntax }

// SplitObject reads body as one JSON object and returns its members in the
// order written, marking repeated names, for a handler that reports every
// problem of a request at once (an unknown, repeated or mistyped field
// each) rather than the first a decoder meets. A leading UTF-8 byte order
// mark, as some clients send, is skipped; numbers are kept as written.
// A body that is not one JSON object, and nothing after it but white
// space, is an *ObjectError.
func SplitObject(body []byte) ([]Member, error) {
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	if !utf8.Valid(body) {
		return nil, &ObjectError{Problem: "is not valid UTF-8"}
	}
	invalid := func(err error) ([]Member, error) {
		return nil, &ObjectError{Problem: "is not valid JSON", Syntax: err}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	tok, err := dec.Token()
	if errors.Is(err, io.EOF) {
		return nil, &ObjectError{Problem: "is empty: send a JSON object"}
	}
	if err != nil {
		return invalid(err)
	}
	if tok != json.Delim('{') {
		return nil, &ObjectError{Problem: "must be a JSON object"}
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
		return nil, &ObjectError{Problem: "has data after the JSON object"}
	}
	return members, nil
}
