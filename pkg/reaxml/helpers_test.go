package reaxml

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sampleDir holds the shared REAXML sample feeds; they are read in place,
// never copied into the repository.
const sampleDir = "../../../shared/testdata/reaxml"

// result is everything a decoder yields for one feed, in a form that
// marshals to stable JSON.
type result struct {
	FeedDate string        `json:"feedDate,omitzero"`
	Entries  []resultEntry `json:"entries"`
	Fatal    string        `json:"fatal,omitzero"`
}

type resultEntry struct {
	Listing *Listing     `json:"listing,omitzero"`
	Error   *resultError `json:"error,omitzero"`
}

type resultError struct {
	Line     int    `json:"line"`
	Kind     Kind   `json:"kind,omitzero"`
	AgentID  string `json:"agentID,omitzero"`
	UniqueID string `json:"uniqueID,omitzero"`
	Message  string `json:"message"`
}

// decodeAll reads a whole feed. limit bounds the number of Next calls; a
// decoder that needs more fails the test (it is not making progress).
func decodeAll(tb testing.TB, r io.Reader, opts Options, limit int) result {
	tb.Helper()
	return decodeWith(tb, NewDecoder(r, opts), limit)
}

// decodeWith is decodeAll with a decoder of the caller's.
func decodeWith(tb testing.TB, d *Decoder, limit int) result {
	tb.Helper()
	var res result
	if t, err := d.FeedDate(); err == nil && !t.IsZero() {
		res.FeedDate = t.Format(time.RFC3339)
	}
	for i := 0; ; i++ {
		if i > limit {
			tb.Fatalf("decoder made more than %d calls to Next: not making progress", limit)
		}
		l, err := d.Next()
		if errors.Is(err, io.EOF) {
			return res
		}
		var le *ListingError
		switch {
		case errors.As(err, &le):
			if l != nil {
				tb.Fatalf("Next returned both a listing and an error")
			}
			res.Entries = append(res.Entries, resultEntry{Error: &resultError{
				Line: le.Line, Kind: le.Kind, AgentID: le.AgentID, UniqueID: le.UniqueID, Message: le.Error(),
			}})
		case err != nil:
			res.Fatal = err.Error()
			if _, again := d.Next(); again == nil || again.Error() != err.Error() {
				tb.Fatalf("fatal error not sticky: first %v, then %v", err, again)
			}
			return res
		default:
			if l == nil {
				tb.Fatalf("Next returned neither a listing nor an error")
			}
			res.Entries = append(res.Entries, resultEntry{Listing: l})
		}
	}
}

// listings returns the listings of a result, failing on any error.
func (r result) listings(tb testing.TB) []*Listing {
	tb.Helper()
	if r.Fatal != "" {
		tb.Fatalf("feed error: %s", r.Fatal)
	}
	var out []*Listing
	for _, e := range r.Entries {
		if e.Error != nil {
			tb.Fatalf("listing error: %s", e.Error.Message)
		}
		out = append(out, e.Listing)
	}
	return out
}

func mustJSON(tb testing.TB, v any) []byte {
	tb.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		tb.Fatalf("marshal: %v", err)
	}
	return buf.Bytes()
}

func mustReadFile(tb testing.TB, path string) []byte {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("read %s: %v", path, err)
	}
	return b
}

func mustSamples(tb testing.TB) []string {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join(sampleDir, "*.xml"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no sample feeds in %s (err %v)", sampleDir, err)
	}
	return files
}

// mustDecodeOne decodes a feed that must hold exactly one good listing.
func mustDecodeOne(tb testing.TB, feed string) *Listing {
	tb.Helper()
	ls := decodeAll(tb, strings.NewReader(feed), Options{}, 1000).listings(tb)
	if len(ls) != 1 {
		tb.Fatalf("got %d listings, want 1", len(ls))
	}
	return ls[0]
}

// mustListingError decodes a feed whose only listing must fail and returns
// the error.
func mustListingError(tb testing.TB, feed string) *resultError {
	tb.Helper()
	res := decodeAll(tb, strings.NewReader(feed), Options{}, 1000)
	if res.Fatal != "" || len(res.Entries) != 1 || res.Entries[0].Error == nil {
		tb.Fatalf("want one listing error, got %s", mustJSON(tb, res))
	}
	return res.Entries[0].Error
}

// feed wraps listing elements in a propertyList.
func feed(listings ...string) string {
	return `<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
		`<propertyList date="2024-03-01-09:00:00" username="u" password="p">` + "\n" +
		strings.Join(listings, "\n") + "\n</propertyList>\n"
}

// stub is a minimal residential listing with extra children.
func stub(children string) string {
	return `<residential modTime="2024-03-01-09:00:00" status="current"><agentID>AG1</agentID><uniqueID>U1</uniqueID>` +
		children + `</residential>`
}

func equalJSON(tb testing.TB, a, b any) bool {
	tb.Helper()
	return bytes.Equal(mustJSON(tb, a), mustJSON(tb, b))
}
