package upload

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestXMLSniffer(t *testing.T) {
	for name, c := range map[string]struct {
		in string
		ok bool
	}{
		"element":          {"<propertyList/>", true},
		"declaration":      {`<?xml version="1.0"?><a/>`, true},
		"BOM":              {"\xEF\xBB\xBF<a/>", true},
		"BOM, white space": {"\xEF\xBB\xBF \r\n\t<a/>", true},
		"white space":      {"\n\n   <a/>", true},
		"empty":            {"", false},
		"only BOM":         {"\xEF\xBB\xBF", false},
		"text":             {"a<b/>", false},
		"half a BOM":       {"\xEF\xBB<a/>", false},
		"two BOMs":         {"\xEF\xBB\xBF\xEF\xBB\xBF<a/>", false},
		"BOM after space":  {" \xEF\xBB\xBF<a/>", false},
		"UTF-16 BOM":       {"\xFF\xFE<\x00a\x00", false},
		"form feed":        {"\f<a/>", false},
	} {
		t.Run(name, func(t *testing.T) {
			// One byte at a time: the verdict must not depend on read sizes.
			out, err := io.ReadAll(&xmlSniffer{r: iotest.OneByteReader(strings.NewReader(c.in))})
			if c.ok && (err != nil || string(out) != c.in) {
				t.Errorf("got %q, %v; want the input back", out, err)
			}
			if !c.ok && !errors.Is(err, errNotXML) {
				t.Errorf("got %v, want errNotXML", err)
			}
		})
	}
}

// FuzzXMLSniffer checks the streaming sniffer against a direct reading of
// the rule, and that it passes accepted input through unchanged.
func FuzzXMLSniffer(f *testing.F) {
	for _, s := range []string{"<a/>", "\xEF\xBB\xBF <a/>", "", "x", "\xEF\xBB"} {
		f.Add([]byte(s), uint8(1))
	}
	f.Fuzz(func(t *testing.T, in []byte, chunk uint8) {
		rest := bytes.TrimPrefix(in, []byte("\xEF\xBB\xBF"))
		rest = bytes.TrimLeft(rest, " \t\r\n")
		want := len(rest) > 0 && rest[0] == '<'
		r := io.Reader(bytes.NewReader(in))
		if chunk%2 == 1 {
			r = iotest.OneByteReader(r)
		}
		out, err := io.ReadAll(&xmlSniffer{r: r})
		if want != (err == nil) {
			t.Fatalf("%q: err %v, want ok=%v", in, err, want)
		}
		if want && !bytes.Equal(out, in) {
			t.Fatalf("%q came out as %q", in, out)
		}
	})
}

func TestLimitReader(t *testing.T) {
	for name, c := range map[string]struct {
		size, limit int
		ok          bool
	}{
		"under":    {10, 11, true},
		"at":       {11, 11, true},
		"over":     {12, 11, false},
		"far over": {1 << 16, 11, false},
		"empty":    {0, 1, true},
	} {
		t.Run(name, func(t *testing.T) {
			lr := &limitReader{r: bytes.NewReader(make([]byte, c.size)), limit: int64(c.limit)}
			out, err := io.ReadAll(lr)
			if c.ok != (err == nil) || (c.ok && len(out) != c.size) || (!c.ok && !errors.Is(err, errFeedTooLarge)) {
				t.Errorf("read %d, %v", len(out), err)
			}
			if _, err := lr.Read(make([]byte, 8)); !c.ok && !errors.Is(err, errFeedTooLarge) {
				t.Errorf("read after the limit: %v", err)
			}
		})
	}
}

func TestFeedContentTypeAndEncoding(t *testing.T) {
	for v, ok := range map[string]bool{
		"application/xml": true, "text/xml": true, "Application/XML": true, "text/xml; charset=ISO-8859-1": true,
		"": false, "application/json": false, "application/xml; charset=utf-8; x=y": false, "application/rss+xml": false, "xml": false,
	} {
		if err := checkFeedContentType(v); (err == nil) != ok {
			t.Errorf("Content-Type %q: %v", v, err)
		}
	}
	for name, c := range map[string]struct {
		values  []string
		gzipped bool
		ok      bool
	}{
		"absent":   {nil, false, true},
		"identity": {[]string{"identity"}, false, true},
		"gzip":     {[]string{"GZIP"}, true, true},
		"x-gzip":   {[]string{"x-gzip"}, true, true},
		"br":       {[]string{"br"}, false, false},
		"list":     {[]string{"gzip, identity"}, false, false},
		"repeated": {[]string{"gzip", "gzip"}, false, false},
	} {
		gz, err := feedEncoding(c.values)
		if gz != c.gzipped || (err == nil) != c.ok {
			t.Errorf("%s: gzipped %v, %v", name, gz, err)
		}
	}
}
