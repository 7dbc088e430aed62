package reaxml

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/iotest"
)

func mustRedact(tb testing.TB, in []byte) []byte {
	tb.Helper()
	var out bytes.Buffer
	if err := RedactCredentials(&out, bytes.NewReader(in)); err != nil {
		tb.Fatalf("RedactCredentials: %v", err)
	}
	return out.Bytes()
}

func TestRedactCredentials(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain",
			`<?xml version="1.0"?><propertyList date="2009-01-01" username="u" password="p"><a/></propertyList>`,
			`<?xml version="1.0"?><propertyList date="2009-01-01"><a/></propertyList>`},
		{"single quotes and spaces around =",
			`<propertyList username = 'u' date='d' password='p "x"'/>`,
			`<propertyList date='d'/>`},
		{"line breaks kept",
			"<propertyList\n  date=\"d\"\n  username=\"u\"\n  password=\"line1\nline2\">\n<x/></propertyList>",
			"<propertyList\n  date=\"d\"\n\n\n>\n<x/></propertyList>"},
		{"any case and prefix", `<propertyList USERNAME="u" feed:Password="p" user="keep">`, `<propertyList user="keep">`},
		{"unquoted values", `<propertyList username=u password=p date=d>`, `<propertyList date=d>`},
		{"gt inside a value", `<propertyList password="a>b" date="d">`, `<propertyList date="d">`},
		{"prolog kept byte for byte",
			"\xef\xbb\xbf<?xml version=\"1.0\"?>\r\n<!-- <propertyList password=\"c\"> -->\n<!DOCTYPE propertyList [ <!ENTITY e \"<x>\"> <!-- > --> ]>\n<?pi password=\"x\"?><propertyList password=\"p\">",
			"\xef\xbb\xbf<?xml version=\"1.0\"?>\r\n<!-- <propertyList password=\"c\"> -->\n<!DOCTYPE propertyList [ <!ENTITY e \"<x>\"> <!-- > --> ]>\n<?pi password=\"x\"?><propertyList>"},
		{"only the root is touched",
			`<propertyList username="u"><residential password="listing-level"/></propertyList>`,
			`<propertyList><residential password="listing-level"/></propertyList>`},
		{"no root", "just text", "just text"},
		{"empty", "", ""},
		{"truncated in the root tag", `<propertyList date="d" password="sec`, `<propertyList date="d"`},
		{"no attributes", `<propertyList>`, `<propertyList>`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(mustRedact(t, []byte(tt.in)))
			if got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
			var slow bytes.Buffer
			if err := RedactCredentials(&slow, iotest.OneByteReader(strings.NewReader(tt.in))); err != nil || slow.String() != tt.want {
				t.Errorf("one byte at a time: %q, %v", slow.String(), err)
			}
		})
	}
}

// credentialAttr matches what RedactCredentials must remove from the samples.
var credentialAttr = regexp.MustCompile(`\s(username|password)="[^"]*"`)

// TestRedactSamples checks every sample: the copy differs from the original
// only by the credentials, and decodes to the same listings.
func TestRedactSamples(t *testing.T) {
	for _, path := range mustSamples(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			orig := mustReadFile(t, path)
			got := mustRedact(t, orig)
			root := bytes.Index(orig, []byte("<propertyList"))
			end := root + bytes.IndexByte(orig[root:], '>')
			want := append(append(append([]byte{}, orig[:root]...),
				credentialAttr.ReplaceAll(orig[root:end], nil)...), orig[end:]...)
			if !bytes.Equal(got, want) {
				t.Fatalf("redacted copy differs beyond the credentials")
			}
			if bytes.Contains(got, []byte("xmlpassword")) || bytes.Contains(got, []byte(`password="xxx"`)) {
				t.Fatal("password left in the copy")
			}
			a := decodeAll(t, bytes.NewReader(orig), Options{}, 1000)
			b := decodeAll(t, bytes.NewReader(got), Options{}, 1000)
			if !equalJSON(t, a, b) {
				t.Error("redacted copy decodes differently")
			}
		})
	}
}

type errWriter struct{}

var errDiskFull = errors.New("disk full")

func (errWriter) Write([]byte) (int, error) { return 0, errDiskFull }

func TestRedactErrors(t *testing.T) {
	big := strings.Repeat("x", 100<<10)
	if err := RedactCredentials(errWriter{}, strings.NewReader(`<propertyList>`+big)); !errors.Is(err, errDiskFull) {
		t.Errorf("write error: got %v", err)
	}
	if err := RedactCredentials(&bytes.Buffer{}, iotest.ErrReader(os.ErrClosed)); !errors.Is(err, os.ErrClosed) {
		t.Errorf("read error: got %v", err)
	}
	long := `<propertyList a="` + strings.Repeat("y", maxRootTag) + `">`
	if err := RedactCredentials(&bytes.Buffer{}, strings.NewReader(long)); !errors.Is(err, ErrRootTagTooLong) {
		t.Errorf("long root tag: got %v", err)
	}
}
