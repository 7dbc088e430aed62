package api_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/listgate/listgate/origin/api"
	"github.com/listgate/listgate/pkg/apierror"
)

func TestWriteJSON(t *testing.T) {
	rec := httptest.NewRecorder()
	rec.Header().Set("Cache-Control", "no-store")
	if err := api.WriteJSON(rec, http.StatusCreated, map[string]any{"a": 1, "b": "é"}); err != nil {
		t.Fatal(err)
	}
	want := `{"a":1,"b":"é"}` + "\n"
	if rec.Code != 201 || rec.Body.String() != want {
		t.Errorf("%d %q, want 201 %q", rec.Code, rec.Body, want)
	}
	for k, v := range map[string]string{"Content-Type": "application/json; charset=utf-8",
		"Content-Length": "17", "Cache-Control": "no-store"} {
		if got := rec.Header().Get(k); got != v {
			t.Errorf("%s: %q, want %q", k, got, v)
		}
	}
	rec = httptest.NewRecorder()
	if err := api.WriteJSON(rec, 200, func() {}); err == nil || rec.Body.Len() != 0 || rec.Header().Get("Content-Type") != "" {
		t.Errorf("unencodable value: err %v, wrote %q %v", err, rec.Body, rec.Header())
	}
}

func TestReadBody(t *testing.T) {
	for name, tc := range map[string]struct {
		body    io.Reader
		length  int64 // Content-Length; -1 for unknown
		code    apierror.Code
		wantLen int
	}{
		"within":           {strings.NewReader("12345"), 5, "", 5},
		"at the limit":     {strings.NewReader("1234567890"), 10, "", 10},
		"declared over":    {strings.NewReader("12345678901"), 11, apierror.CodePayloadTooLarge, 0},
		"streamed over":    {strings.NewReader("12345678901"), -1, apierror.CodePayloadTooLarge, 0},
		"cut short":        {io.MultiReader(strings.NewReader("12"), errReader{}), -1, apierror.CodeValidationError, 0},
		"empty":            {strings.NewReader(""), 0, "", 0},
		"unknown, in size": {strings.NewReader("123"), -1, "", 3},
	} {
		t.Run(name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/", tc.body)
			r.ContentLength = tc.length
			b, err := api.ReadBody(httptest.NewRecorder(), r, 10)
			if apierror.CodeOf(err) != tc.code && !(tc.code == "" && err == nil) {
				t.Fatalf("err %v, want code %q", err, tc.code)
			}
			if len(b) != tc.wantLen {
				t.Errorf("read %d bytes, want %d", len(b), tc.wantLen)
			}
		})
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("connection reset") }

func TestDecodeStrict(t *testing.T) {
	type req struct {
		Name *string `json:"name"`
		N    int     `json:"n"`
	}
	for name, tc := range map[string]struct {
		body  string
		check func(error) bool
	}{
		"good":           {`{"name":"a","n":2}`, func(err error) bool { return err == nil }},
		"white space":    {" {\"n\":1} \n\t", func(err error) bool { return err == nil }},
		"unknown field":  {`{"name":"a","x":1}`, func(err error) bool { return err != nil && !errors.Is(err, api.ErrTrailingData) }},
		"wrong type":     {`{"n":"two"}`, isTypeError("n")},
		"malformed":      {`{"name":`, func(err error) bool { return err != nil && !errors.Is(err, api.ErrTrailingData) }},
		"two values":     {`{"n":1}{"n":2}`, is(api.ErrTrailingData)},
		"garbage after":  {`{"n":1} x`, is(api.ErrTrailingData)},
		"empty":          {``, func(err error) bool { return err != nil }},
		"over the limit": {`{"name":"` + strings.Repeat("a", 100) + `"}`, isMaxBytes},
		"after, over":    {`{"n":1}` + strings.Repeat(" ", 100) + "x", isMaxBytes},
	} {
		t.Run(name, func(t *testing.T) {
			var v req
			err := api.DecodeStrict(http.MaxBytesReader(httptest.NewRecorder(), io.NopCloser(strings.NewReader(tc.body)), 64), &v)
			if !tc.check(err) {
				t.Errorf("DecodeStrict(%q) = %v (%T)", tc.body, err, err)
			}
		})
	}
}

func is(target error) func(error) bool { return func(err error) bool { return errors.Is(err, target) } }

func isMaxBytes(err error) bool {
	_, ok := errors.AsType[*http.MaxBytesError](err)
	return ok
}

func isTypeError(field string) func(error) bool {
	return func(err error) bool {
		te, ok := errors.AsType[*json.UnmarshalTypeError](err)
		return ok && te.Field == field
	}
}

func TestIsUUID(t *testing.T) {
	for s, want := range map[string]bool{
		"0b6f2a9e-3c4d-4e5f-8a9b-0c1d2e3f4a5b":   true,
		"0B6F2A9E-3C4D-4E5F-8A9B-0C1D2E3F4A5B":   true,
		"0b6f2a9e3c4d4e5f8a9b0c1d2e3f4a5b":       false,
		"{0b6f2a9e-3c4d-4e5f-8a9b-0c1d2e3f4a5b}": false,
		"0b6f2a9e-3c4d-4e5f-8a9b-0c1d2e3f4a5g":   false,
		"0b6f2a9e_3c4d-4e5f-8a9b-0c1d2e3f4a5b":   false,
		"":                                       false,
	} {
		if got := api.IsUUID(s); got != want {
			t.Errorf("IsUUID(%q) = %v", s, got)
		}
	}
}

func TestETagMatch(t *testing.T) {
	const etag = `"abc"`
	for header, want := range map[string]bool{
		`"abc"`:            true,
		`W/"abc"`:          true,
		`"x", "abc"`:       true,
		` "x" ,W/"abc" `:   true,
		`*`:                true,
		`"abcd"`:           false,
		`abc`:              false,
		``:                 false,
		`"x", "y"`:         false,
		`W/"x",W/"abc",*x`: true,
	} {
		if got := api.ETagMatch(header, etag); got != want {
			t.Errorf("ETagMatch(%q, %s) = %v", header, etag, got)
		}
	}
}
