package reaxmlgen_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/listgate/listgate/pkg/reaxml"
	"github.com/listgate/listgate/pkg/reaxml/reaxmlgen"
)

func mustGenerate(tb testing.TB, opts reaxmlgen.Options) []byte {
	tb.Helper()
	var buf bytes.Buffer
	if err := reaxmlgen.Generate(&buf, opts); err != nil {
		tb.Fatalf("Generate: %v", err)
	}
	return buf.Bytes()
}

// TestGenerateParses checks that generated feeds parse without a single
// listing error and cover every listing element and status.
func TestGenerateParses(t *testing.T) {
	tests := []struct {
		name string
		opts reaxmlgen.Options
	}{
		{"default agency", reaxmlgen.Options{Seed: 1, Listings: 800}},
		{"small agent pool", reaxmlgen.Options{Seed: 2, Listings: 300, Agents: 1, AgencyID: "AB&CD"}},
		{"credentials", reaxmlgen.Options{Seed: 3, Listings: 50, Username: "feeduser", Password: "s3cret"}},
		{"empty", reaxmlgen.Options{Seed: 4}},
		{"compact", reaxmlgen.Options{Seed: 5, Listings: 600, Compact: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := mustGenerate(t, tt.opts)
			d := reaxml.NewDecoder(bytes.NewReader(data), reaxml.Options{})
			kinds := map[reaxml.Kind]int{}
			statuses := map[reaxml.Status]int{}
			cov := map[string]int{}
			n := 0
			for {
				l, err := d.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatalf("listing %d: %v", n+1, err)
				}
				n++
				kinds[l.Kind]++
				statuses[l.Status]++
				if l.Status == reaxml.StatusCurrent && !tt.opts.Compact {
					checkCurrent(t, l, cov)
				}
			}
			if n != max(tt.opts.Listings, 0) {
				t.Fatalf("got %d listings, want %d", n, tt.opts.Listings)
			}
			if tt.opts.Listings < 500 {
				return
			}
			for _, k := range reaxml.Kinds {
				if kinds[k] == 0 {
					t.Errorf("no %s listing in %d", k, n)
				}
			}
			for _, s := range []reaxml.Status{reaxml.StatusCurrent, reaxml.StatusSold, reaxml.StatusLeased,
				reaxml.StatusWithdrawn, reaxml.StatusOffmarket, reaxml.StatusDeleted} {
				if statuses[s] == 0 {
					t.Errorf("no %s listing in %d", s, n)
				}
			}
			if tt.opts.Compact {
				return
			}
			for _, c := range []string{"floorplan", "inspection", "auction", "address hidden", "price hidden",
				"slot delete", "studio", "repeated rent", "3 agents"} {
				if cov[c] == 0 {
					t.Errorf("no listing with %s in %d", c, n)
				}
			}
		})
	}
}

// checkCurrent checks one current listing and counts the features it shows.
func checkCurrent(t *testing.T, l *reaxml.Listing, cov map[string]int) {
	t.Helper()
	now := time.Date(2025, time.March, 1, 10, 0, 0, 0, reaxml.DefaultLocation)
	for _, in := range l.Inspections {
		cov["inspection"]++
		if in.StartsAt.Before(now) || in.StartsAt.After(now.AddDate(0, 0, 15)) || !in.EndsAt.After(in.StartsAt) {
			t.Errorf("%s: inspection %v – %v not in the coming two weeks", l.UniqueID, in.StartsAt, in.EndsAt)
		}
	}
	if l.Auction != nil {
		cov["auction"]++
	}
	if l.Address != nil && l.Address.Display != nil && !*l.Address.Display {
		cov["address hidden"]++
	}
	if l.Price != nil && l.Price.Display != nil && !*l.Price.Display {
		cov["price hidden"]++
	}
	if l.Features != nil && l.Features.Studio {
		cov["studio"]++
	}
	if len(l.Rents) > 1 {
		cov["repeated rent"]++
	}
	if len(l.Agents) == 3 {
		cov["3 agents"]++
	}
	for _, m := range l.Media {
		if m.Kind == reaxml.MediaFloorplan {
			cov["floorplan"]++
		}
		if m.Delete {
			cov["slot delete"]++
		}
	}
	if len(l.Agents) < 1 || len(l.Agents) > 3 {
		t.Errorf("%s: %d agents", l.UniqueID, len(l.Agents))
	}
	images := 0
	for _, m := range l.Media {
		if m.Kind == reaxml.MediaImage && !m.Delete {
			images++
			if !strings.HasPrefix(m.URL, "https://media.listgate.example/") {
				t.Errorf("%s: image url %q", l.UniqueID, m.URL)
			}
		}
	}
	if images < 3 || images > 12 {
		t.Errorf("%s: %d images", l.UniqueID, images)
	}
	if l.Address == nil || l.Address.State == nil || l.Address.Postcode == nil {
		t.Errorf("%s: incomplete address", l.UniqueID)
	}
	for _, a := range l.Agents {
		if !strings.HasSuffix(a.Email, "@agency.example") {
			t.Errorf("%s: agent e-mail %q", l.UniqueID, a.Email)
		}
	}
}

func TestGenerateDeterministic(t *testing.T) {
	a := mustGenerate(t, reaxmlgen.Options{Seed: 42, Listings: 200})
	b := mustGenerate(t, reaxmlgen.Options{Seed: 42, Listings: 200})
	c := mustGenerate(t, reaxmlgen.Options{Seed: 43, Listings: 200})
	if !bytes.Equal(a, b) {
		t.Error("same seed gave different feeds")
	}
	if bytes.Equal(a, c) {
		t.Error("different seeds gave the same feed")
	}
}

type failingWriter struct{ n int }

var errWrite = errors.New("disk full")

func (w *failingWriter) Write(p []byte) (int, error) {
	if w.n -= len(p); w.n < 0 {
		return 0, errWrite
	}
	return len(p), nil
}

func TestGenerateWriteError(t *testing.T) {
	err := reaxmlgen.Generate(&failingWriter{n: 100 << 10}, reaxmlgen.Options{Seed: 1, Listings: 10_000})
	if !errors.Is(err, errWrite) {
		t.Fatalf("got %v, want the write error", err)
	}
}

// A revision changes the fraction of listings it says, each with a later
// modTime, and leaves every other listing byte for byte as it was.
func TestRevisionChangesAFraction(t *testing.T) {
	const n = 4000
	base := mustGenerate(t, reaxmlgen.Options{Seed: 9, Listings: n})
	rev := mustGenerate(t, reaxmlgen.Options{Seed: 9, Listings: n, Revision: 1, Changed: 0.05})
	split := func(feed []byte) []string {
		var listings []string // each from its start tag, closing tags left out
		for _, p := range strings.Split(string(feed), "\n  <")[1:] {
			if !strings.HasPrefix(p, "/") {
				listings = append(listings, p)
			}
		}
		return listings
	}
	a, b := split(base), split(rev)
	if len(a) != n || len(b) != n {
		t.Fatalf("%d and %d listings, want %d", len(a), len(b), n)
	}
	changed := 0
	for i := range a {
		if a[i] == b[i] {
			continue
		}
		changed++
		modA, modB := modTime(t, a[i]), modTime(t, b[i])
		if !modB.After(modA) {
			t.Errorf("listing %d changed without a later modTime: %v then %v", i, modA, modB)
		}
	}
	if changed < n*4/100 || changed > n*6/100 {
		t.Errorf("%d of %d listings changed, want about 5%%", changed, n)
	}
	if again := mustGenerate(t, reaxmlgen.Options{Seed: 9, Listings: n, Revision: 1, Changed: 0.05}); !bytes.Equal(again, rev) {
		t.Error("a revision is not deterministic")
	}
}

// modTime reads the modTime attribute of a listing element's text.
func modTime(t *testing.T, listing string) time.Time {
	t.Helper()
	_, rest, ok := strings.Cut(listing, `modTime="`)
	v, _, ok2 := strings.Cut(rest, `"`)
	if !ok || !ok2 {
		t.Fatalf("no modTime in %.80s", listing)
	}
	tm, err := time.Parse("2006-01-02-15:04:05", v)
	if err != nil {
		t.Fatalf("modTime %q: %v", v, err)
	}
	return tm
}
