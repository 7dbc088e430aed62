package listings

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/listgate/listgate/pkg/model"
)

const head = `<?xml version="1.0" encoding="UTF-8"?><propertyList date="2024-01-01-10:00:00">`

func TestSingleListingLookup(t *testing.T) {
	e := newEnv(t)
	e.mustImport(t, head+`
	<residential modTime="2024-02-01-10:00:00"><agentID>AG1</agentID><uniqueID>SHARED</uniqueID><headline>One</headline></residential>
	<residential modTime="2024-02-01-10:00:00"><agentID>AG2</agentID><uniqueID>SHARED</uniqueID><headline>Two</headline></residential>
	<residential modTime="2024-02-01-10:00:00"><agentID>AG1</agentID><uniqueID>ONLY</uniqueID><headline>Only</headline></residential>
	<residential modTime="2024-02-01-10:00:00"><agentID>AG1</agentID><uniqueID>GONE</uniqueID><headline>Gone</headline></residential>
	<residential modTime="2024-02-01-10:00:00"><agentID>AG1</agentID><uniqueID>12345</uniqueID><headline>Numeric id</headline></residential>
	</propertyList>`)
	e.mustImport(t, head+`<residential modTime="2024-02-02-10:00:00" status="deleted"><agentID>AG1</agentID><uniqueID>GONE</uniqueID></residential></propertyList>`)
	var ref int64
	e.db.Pool.QueryRow(context.Background(), `SELECT ref FROM listings WHERE site_id = $1 AND unique_id = 'ONLY'`, e.site).Scan(&ref)

	for name, tc := range map[string]struct {
		key      string
		headline string
	}{
		"listing_ref": {fmt.Sprint(ref), "Only"},
		"listing_id":  {"ONLY", "Only"},
		"qualified":   {"AG2:SHARED", "Two"},
		"numeric id":  {"12345", "Numeric id"},
	} {
		t.Run(name, func(t *testing.T) {
			var l model.Listing
			e.get(t, "/v1/sites/{site}/listings/"+tc.key, &l)
			if l.Headline == nil || *l.Headline != tc.headline {
				t.Errorf("got %+v", l.Headline)
			}
		})
	}
	for name, tc := range map[string]struct {
		key    string
		status int
	}{
		"ambiguous": {"SHARED", 422},
		"deleted":   {"AG1:GONE", 404},
		"unknown":   {"NOPE", 404},
		"ref 0":     {"0", 404},
	} {
		t.Run(name, func(t *testing.T) {
			status, eb := e.getError(t, req{path: "/v1/sites/{site}/listings/" + tc.key})
			if status != tc.status {
				t.Errorf("%d %+v", status, eb)
			}
			if tc.status == 422 && !strings.Contains(eb.Error.Details["listing"], "AGENCYID:UNIQUEID") {
				t.Errorf("ambiguous id message %+v", eb.Error.Details)
			}
		})
	}
	// Another site's listing is not found through this site.
	other := newEnvOn(t, e.db)
	status, _ := other.getError(t, req{path: fmt.Sprintf("/v1/sites/{site}/listings/%d", ref)})
	if status != 404 {
		t.Errorf("another site's listing_ref: %d", status)
	}
}

func TestModifiedSinceTombstones(t *testing.T) {
	e := newEnv(t)
	e.mustImport(t, head+`
	<residential modTime="2024-02-01-10:00:00"><agentID>A</agentID><uniqueID>KEEP</uniqueID><headline>Kept</headline></residential>
	<residential modTime="2024-02-01-10:00:00"><agentID>A</agentID><uniqueID>WD</uniqueID><headline>Withdrawn soon</headline></residential>
	<residential modTime="2024-02-01-10:00:00"><agentID>A</agentID><uniqueID>DEL</uniqueID><headline>Deleted soon</headline></residential>
	<residential modTime="2024-02-01-10:00:00"><agentID>A</agentID><uniqueID>OLD</uniqueID><headline>Unchanged</headline></residential>
	</propertyList>`)
	since := time.Now().UTC().Add(-time.Second)
	e.db.Pool.Exec(context.Background(), `UPDATE listings SET modified_at = now() - interval '1 day' WHERE site_id = $1 AND unique_id = 'OLD'`, e.site)
	e.mustImport(t, head+`
	<residential modTime="2024-02-02-10:00:00" status="withdrawn"><agentID>A</agentID><uniqueID>WD</uniqueID></residential>
	<residential modTime="2024-02-02-10:00:00" status="deleted"><agentID>A</agentID><uniqueID>DEL</uniqueID></residential>
	</propertyList>`)
	var page struct {
		Data []map[string]any
		Meta model.Meta
	}
	e.get(t, "/v1/sites/{site}/listings?modified_since="+since.Add(-time.Minute).Format(time.RFC3339)+"&per_page=100", &page)
	got := map[string]map[string]any{}
	for _, d := range page.Data {
		got[d["listing_id"].(string)] = d
	}
	if len(got) != 3 || got["OLD"] != nil {
		t.Fatalf("modified_since returned %v", got)
	}
	for id, status := range map[string]string{"WD": "withdrawn", "DEL": "deleted"} {
		d := got[id]
		if d["status"] != status || d["headline"] != nil || len(d) != 5 {
			t.Errorf("%s tombstone %v", id, d)
		}
	}
	if got["KEEP"]["headline"] != "Kept" {
		t.Errorf("current listing %v", got["KEEP"])
	}
	// Without modified_since, deleted listings are never served.
	var plain listingPage
	e.get(t, "/v1/sites/{site}/listings?status=current,withdrawn&per_page=100", &plain)
	for _, l := range plain.Data {
		if l.ListingID == "DEL" {
			t.Error("deleted listing served")
		}
	}
}

func TestSearch(t *testing.T) {
	e := newEnv(t)
	e.mustImport(t, head+`
	<residential modTime="2024-02-01-10:00:00"><agentID>A</agentID><uniqueID>R3</uniqueID>
		<headline>Family home close to parks</headline><description>Renovated kitchens and a sunny deck.</description>
		<address display="yes"><streetNumber>39</streetNumber><street>Main Road</street><suburb>Richmond</suburb><state>VIC</state><postcode>3121</postcode></address>
		<features><bedrooms>3</bedrooms><bathrooms>2</bathrooms></features></residential>
	<residential modTime="2024-02-01-10:00:00"><agentID>A</agentID><uniqueID>R2</uniqueID>
		<headline>Courtyard unit</headline><description>Two bedrooms.</description>
		<address display="yes"><streetNumber>5</streetNumber><street>Church St</street><suburb>Richmond</suburb><state>VIC</state><postcode>3121</postcode></address>
		<features><bedrooms>2</bedrooms></features></residential>
	<residential modTime="2024-02-01-10:00:00"><agentID>A</agentID><uniqueID>HID</uniqueID>
		<headline>Private sale</headline>
		<address display="no"><streetNumber>7</streetNumber><street>Secret Rd</street><suburb>Hawthorn</suburb><state>VIC</state><postcode>3122</postcode></address>
		<features><bedrooms>4</bedrooms></features></residential>
	<residential modTime="2024-02-01-10:00:00"><agentID>A</agentID><uniqueID>F4</uniqueID>
		<headline>Richmond river views</headline><description>Four bedroom house.</description>
		<address display="yes"><streetNumber>1</streetNumber><street>River St</street><suburb>Fitzroy</suburb><state>VIC</state><postcode>3065</postcode></address>
		<features><bedrooms>4</bedrooms></features></residential>
	</propertyList>`)
	ids := func(q string) []string {
		var p listingPage
		e.get(t, "/v1/sites/{site}/listings/search?q="+q, &p)
		var out []string
		for _, l := range p.Data {
			out = append(out, l.ListingID)
		}
		return out
	}
	for name, tc := range map[string]struct {
		q    string
		want string
	}{
		"suburb and beds":  {"richmond+3+bed", "R3,F4"},
		"suburb":           {"Richmond", "R2,R3,F4"}, // the address outranks the headline; ties newest ref first
		"street abbrev":    {"Main+Rd", "R3"},
		"street full":      {"church+street", "R2"},
		"stemmed word":     {"kitchen", "R3"},
		"prefix":           {"court", "R2"},
		"hidden street":    {"secret", ""},
		"hidden suburb ok": {"hawthorn", "HID"},
		"3br compact":      {"richmond+3br", "R3,F4"},
		"filters combine":  {"richmond&min_bedrooms=4", "F4"},
	} {
		t.Run(name, func(t *testing.T) {
			got := strings.Join(ids(tc.q), ",")
			if got != tc.want {
				t.Errorf("q=%s: %s, want %s", tc.q, got, tc.want)
			}
		})
	}
	// A ranked search's page carries its total; past the last page it is
	// counted apart. Pages follow the ranked order.
	var seen []string
	for n, want := range []int{2, 1, 0} {
		var p listingPage
		e.get(t, fmt.Sprintf("/v1/sites/{site}/listings/search?q=richmond&per_page=2&page=%d", n+1), &p)
		if len(p.Data) != want || p.Meta.Total != 3 || p.Meta.TotalPages != 2 || p.Meta.Page != n+1 {
			t.Errorf("page %d: %d listings, meta %+v; want %d of 3 in 2 pages", n+1, len(p.Data), p.Meta, want)
		}
		for _, l := range p.Data {
			seen = append(seen, l.ListingID)
		}
	}
	if got := strings.Join(seen, ","); got != "R2,R3,F4" {
		t.Errorf("pages of q=richmond: %s, want R2,R3,F4", got)
	}
	var none listingPage
	e.get(t, "/v1/sites/{site}/listings/search?q=nowhere&page=3", &none)
	if len(none.Data) != 0 || none.Meta.Total != 0 {
		t.Errorf("no match past the first page: %+v", none.Meta)
	}
}
