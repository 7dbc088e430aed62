package eventstream

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
	"time"
)

// fuzzLimits are small, so that the fuzzer reaches them.
var fuzzLimits = Limits{MaxLineBytes: 64, MaxEventBytes: 256}

// FuzzParseSSE checks the parser on arbitrary input: it never panics; it
// holds no more than its limits; its output does not depend on how the
// input is split into reads; and it agrees with a direct transcription of
// the standard's algorithm (reference), up to a limit error.
func FuzzParseSSE(f *testing.F) {
	for _, seed := range []string{
		"data: hello\n\n",
		"id: 42\nevent: key.revoked\ndata: {\"key_hash\":\"ab\"}\n\n",
		"retry: 1000\n\nid: 7\n\n: heartbeat\n\n",
		"data: a\r\ndata: b\rdata: c\n\r\n",
		"\xef\xbb\xbfdata: bom\n\n",
		"\xef\xbb\xbf\xef\xbb\xbfdata: two\n\n",
		"id: 1\x00\ndata\n\nevent\n\n",
		"data:" + string(bytes.Repeat([]byte("x"), 70)) + "\n\n",
		"retry: 99999999999999999999\nretry: x\n",
		"\r\r\n\n\r",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		whole, werr, p := parseAll(bytes.NewReader(in), fuzzLimits)
		if len(p.data) > fuzzLimits.MaxEventBytes+1 || len(p.line) > fuzzLimits.MaxLineBytes {
			t.Fatalf("parser holds %d data bytes, a %d-byte line", len(p.data), len(p.line))
		}
		for _, e := range whole {
			if len(e.Data) > fuzzLimits.MaxEventBytes || len(e.ID) > fuzzLimits.MaxLineBytes ||
				len(e.Type) > fuzzLimits.MaxLineBytes || e.Type == "" {
				t.Fatalf("event over the limits: %d data, %d id, %d type bytes", len(e.Data), len(e.ID), len(e.Type))
			}
		}
		bytewise, berr, _ := parseAll(iotest.OneByteReader(bytes.NewReader(in)), fuzzLimits)
		if !equalEvents(whole, bytewise) || !errors.Is(berr, werr) && !(errors.Is(werr, io.EOF) && errors.Is(berr, io.EOF)) {
			t.Fatalf("whole: %q %v\nbyte by byte: %q %v", whole, werr, bytewise, berr)
		}

		want, lastID, retry, retrySet := reference(in)
		switch {
		case errors.Is(werr, io.EOF):
			if !equalEvents(whole, want) {
				t.Fatalf("parser: %q\nreference: %q", whole, want)
			}
			if p.LastEventID() != lastID {
				t.Fatalf("last id %q, reference %q", p.LastEventID(), lastID)
			}
			if r, ok := p.Retry(); r != retry || ok != retrySet {
				t.Fatalf("retry %s %v, reference %s %v", r, ok, retry, retrySet)
			}
		case errors.Is(werr, ErrLineTooLong), errors.Is(werr, ErrEventTooLarge):
			if len(whole) > len(want) || !equalEvents(whole, want[:len(whole)]) {
				t.Fatalf("before %v the parser gave %q, not a prefix of %q", werr, whole, want)
			}
		default:
			t.Fatalf("unexpected error %v", werr)
		}
	})
}

// reference is the standard's event stream interpretation transcribed
// without limits or streaming: split the whole input into lines, then
// process them.
func reference(in []byte) (evs []Event, lastID string, retry time.Duration, retrySet bool) {
	in = bytes.TrimPrefix(in, []byte("\xef\xbb\xbf"))
	var lines [][]byte
	for {
		i := bytes.IndexAny(in, "\r\n")
		if i < 0 {
			break // an unterminated last line is never processed
		}
		lines = append(lines, in[:i])
		if in[i] == '\r' && i+1 < len(in) && in[i+1] == '\n' {
			i++
		}
		in = in[i+1:]
	}
	var data, typ, idBuf string
	for _, line := range lines {
		if len(line) == 0 {
			lastID = idBuf
			if data == "" {
				typ = ""
				continue
			}
			e := Event{ID: lastID, Type: typ, Data: []byte(data[:len(data)-1])}
			if e.Type == "" {
				e.Type = "message"
			}
			evs = append(evs, e)
			data, typ = "", ""
			continue
		}
		if line[0] == ':' {
			continue
		}
		name, value := string(line), ""
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			name, value = string(line[:i]), string(line[i+1:])
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch name {
		case "data":
			data += value + "\n"
		case "event":
			typ = value
		case "id":
			if !bytes.Contains([]byte(value), []byte{0}) {
				idBuf = value
			}
		case "retry":
			if ms, ok := digits([]byte(value)); ok {
				retry, retrySet = time.Duration(ms)*time.Millisecond, true
			}
		}
	}
	return evs, lastID, retry, retrySet
}
