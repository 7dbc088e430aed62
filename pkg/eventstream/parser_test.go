package eventstream

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// parseAll runs a parser over r until it fails and returns the events, the
// final error and the parser.
func parseAll(r io.Reader, lim Limits) ([]Event, error, *Parser) {
	p := NewParser(r, lim)
	var evs []Event
	for {
		ev, err := p.Next()
		if err != nil {
			return evs, err, p
		}
		evs = append(evs, ev)
	}
}

// readers are the ways a test feeds a stream: whole, one byte at a time,
// and in halves, so that line ends and BOMs straddle reads.
var readers = map[string]func([]byte) io.Reader{
	"whole":    func(b []byte) io.Reader { return bytes.NewReader(b) },
	"one byte": func(b []byte) io.Reader { return iotest.OneByteReader(bytes.NewReader(b)) },
	"halves":   func(b []byte) io.Reader { return iotest.HalfReader(bytes.NewReader(b)) },
	"data+err": func(b []byte) io.Reader { return iotest.DataErrReader(bytes.NewReader(b)) },
}

func ev(id, typ, data string) Event { return Event{ID: id, Type: typ, Data: []byte(data)} }

func TestParser(t *testing.T) {
	for name, tc := range map[string]struct {
		in     string
		want   []Event
		lastID string
		retry  time.Duration // 0: none set
		err    error         // nil: io.EOF
	}{
		"one event":                  {"data: hello\n\n", []Event{ev("", "message", "hello")}, "", 0, nil},
		"typed, with id":             {"id: 42\nevent: key.revoked\ndata: {\"a\":1}\n\n", []Event{ev("42", "key.revoked", `{"a":1}`)}, "42", 0, nil},
		"data lines joined by LF":    {"data: a\ndata: b\ndata:\n\n", []Event{ev("", "message", "a\nb\n")}, "", 0, nil},
		"one space is stripped":      {"data:x\n\ndata:  y\n\n", []Event{ev("", "message", "x"), ev("", "message", " y")}, "", 0, nil},
		"colons in the value":        {"data: a: b:c\n\n", []Event{ev("", "message", "a: b:c")}, "", 0, nil},
		"field without a colon":      {"data\n\n", []Event{ev("", "message", "")}, "", 0, nil},
		"CRLF":                       {"id: 1\r\ndata: a\r\n\r\n", []Event{ev("1", "message", "a")}, "1", 0, nil},
		"CR alone":                   {"id: 1\rdata: a\r\rdata: b\r\r", []Event{ev("1", "message", "a"), ev("1", "message", "b")}, "1", 0, nil},
		"mixed line ends":            {"data: a\r\ndata: b\rdata: c\n\r\n", []Event{ev("", "message", "a\nb\nc")}, "", 0, nil},
		"CR then LF is one line end": {"data: a\r\n\r\ndata: b\n\n", []Event{ev("", "message", "a"), ev("", "message", "b")}, "", 0, nil},
		"comments are ignored":       {": heartbeat\n\n:\ndata: a\n: in between\n\n", []Event{ev("", "message", "a")}, "", 0, nil},
		"unknown fields ignored":     {"foo: bar\nData: x\ndata: a\n\n", []Event{ev("", "message", "a")}, "", 0, nil},
		"id persists":                {"id: 1\ndata: a\n\ndata: b\n\n", []Event{ev("1", "message", "a"), ev("1", "message", "b")}, "1", 0, nil},
		"empty id clears":            {"id: 1\ndata: a\n\nid\ndata: b\n\n", []Event{ev("1", "message", "a"), ev("", "message", "b")}, "", 0, nil},
		"id with NUL ignored":        {"id: 1\ndata: a\n\nid: 2\x003\ndata: b\n\n", []Event{ev("1", "message", "a"), ev("1", "message", "b")}, "1", 0, nil},
		"id alone moves last id":     {"id: 7\n\n", nil, "7", 0, nil},
		"no data, no dispatch":       {"event: x\n\ndata: y\n\n", []Event{ev("", "message", "y")}, "", 0, nil},
		"id of a cut event unused":   {"id: 1\ndata: a\n\nid: 2\ndata: b\n", []Event{ev("1", "message", "a")}, "1", 0, nil},
		"unterminated line dropped":  {"data: a\n\ndata: b", []Event{ev("", "message", "a")}, "", 0, nil},
		"BOM skipped":                {"\xef\xbb\xbfdata: a\n\n", []Event{ev("", "message", "a")}, "", 0, nil},
		"only a leading BOM":         {"\xef\xbb\xbfdata: a\n\n\xef\xbb\xbfdata: b\n\n", []Event{ev("", "message", "a")}, "", 0, nil},
		"half a BOM is data":         {"\xef\xbbdata: a\n\n", nil, "", 0, nil},
		"retry":                      {"retry: 1500\n", nil, "", 1500 * time.Millisecond, nil},
		"retry not digits":           {"retry: 15 00\nretry: -1\nretry:\nretry: 1e3\n", nil, "", 0, nil},
		"retry saturates":            {"retry: 99999999999999999999999\n", nil, "", 24 * time.Hour, nil},
		"empty stream":               {"", nil, "", 0, nil},
		"line too long":              {"data: " + strings.Repeat("x", 100) + "\n\n", nil, "", 0, ErrLineTooLong},
		"event too large":            {strings.Repeat("data: "+strings.Repeat("x", 50)+"\n", 10) + "\n", nil, "", 0, ErrEventTooLarge},
		"event at the limit":         {strings.Repeat("data: "+strings.Repeat("x", 49)+"\n", 4) + "\n", []Event{ev("", "message", strings.TrimSuffix(strings.Repeat(strings.Repeat("x", 49)+"\n", 4), "\n"))}, "", 0, nil},
	} {
		for rname, mk := range readers {
			t.Run(name+"/"+rname, func(t *testing.T) {
				evs, err, p := parseAll(mk([]byte(tc.in)), Limits{MaxLineBytes: 64, MaxEventBytes: 199})
				want := tc.err
				if want == nil {
					want = io.EOF
				}
				if !errors.Is(err, want) {
					t.Fatalf("error %v, want %v", err, want)
				}
				if !equalEvents(evs, tc.want) {
					t.Fatalf("events %q\nwant %q", evs, tc.want)
				}
				if tc.err == nil && p.LastEventID() != tc.lastID {
					t.Errorf("LastEventID %q, want %q", p.LastEventID(), tc.lastID)
				}
				if r, ok := p.Retry(); r != tc.retry || ok != (tc.retry != 0) {
					t.Errorf("Retry %s %v, want %s", r, ok, tc.retry)
				}
			})
		}
	}
}

func equalEvents(a, b []Event) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].ID != b[i].ID || a[i].Type != b[i].Type || !bytes.Equal(a[i].Data, b[i].Data) {
			return false
		}
	}
	return true
}

func TestParserEventDataIsOwned(t *testing.T) {
	p := NewParser(strings.NewReader("data: first\n\ndata: second\n\n"), Limits{})
	a, _ := p.Next()
	b, _ := p.Next()
	if string(a.Data) != "first" || string(b.Data) != "second" {
		t.Fatalf("events share a buffer: %q, %q", a.Data, b.Data)
	}
}

func TestParserReaderError(t *testing.T) {
	boom := errors.New("boom")
	r := io.MultiReader(strings.NewReader("data: a\n\ndata: b\n"), iotest.ErrReader(boom))
	evs, err, _ := parseAll(r, Limits{})
	if !errors.Is(err, boom) || len(evs) != 1 {
		t.Fatalf("events %q, error %v; want one event, then boom", evs, err)
	}
}

func TestParserNoProgress(t *testing.T) {
	_, err, _ := parseAll(zeroReader{}, Limits{})
	if err == nil || errors.Is(err, io.EOF) {
		t.Fatalf("error %v for a reader that never returns data", err)
	}
}

type zeroReader struct{}

func (zeroReader) Read([]byte) (int, error) { return 0, nil }
