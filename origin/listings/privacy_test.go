package listings

import (
	"strings"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/listgate/listgate/pkg/model"
)

// The feed's privacy rules hold in every response, on the sample feeds.
func TestPrivacyOnSampleFeeds(t *testing.T) {
	t.Run("price hidden (rural)", func(t *testing.T) {
		e := newEnv(t)
		e.mustImportFile(t, "reasample_rural.xml")
		var l model.Listing
		e.get(t, "/v1/sites/{site}/listings/XNWXNW:ABCD1234", &l)
		if l.Price == nil || l.Price.Amount != nil || l.Price.ShowAmount || l.Price.DisplayText == nil || *l.Price.DisplayText != "To suit buyers 300K+" {
			t.Errorf("hidden price rendered as %+v", l.Price)
		}
		_, body := e.do(t, req{path: "/v1/sites/" + e.site + "/listings?per_page=100"})
		if strings.Contains(string(body), "400000") {
			t.Error("a hidden price appears in the listings page")
		}
		var sold model.Listing
		e.get(t, "/v1/sites/{site}/listings/XNWXNW:ABCD12345", &sold)
		if sold.Sold == nil || sold.Sold.Amount == nil || *sold.Sold.Amount != 85000 || sold.Sold.Date == nil || *sold.Sold.Date != "2009-01-10" {
			t.Errorf("displayable sold price rendered as %+v", sold.Sold)
		}
	})
	t.Run("sold price hidden (commercial land)", func(t *testing.T) {
		e := newEnv(t)
		e.mustImportFile(t, "reasample_commercialland.xml")
		var l model.Listing
		e.get(t, "/v1/sites/{site}/listings/XNWXNW:ABCD12345", &l)
		if l.Sold != nil || l.Status != "sold" {
			t.Errorf("hidden sold price rendered as %+v (status %s)", l.Sold, l.Status)
		}
		_, body := e.do(t, req{path: "/v1/sites/" + e.site + "/listings/XNWXNW:ABCD12345"})
		if strings.Contains(string(body), "450000") {
			t.Error("the hidden sold price is in the body")
		}
	})
	t.Run("sold price hidden (real-world feed)", func(t *testing.T) {
		e := newEnv(t)
		e.mustImportFile(t, "i4ucode_AABBCC_2015-02-15_11-03-51.xml")
		_, body := e.do(t, req{path: "/v1/sites/" + e.site + "/listings/AABBCC:G30600"})
		if strings.Contains(string(body), "12345") {
			t.Errorf("hidden sold price in %s", body)
		}
	})
	t.Run("price shown with price view", func(t *testing.T) {
		e := newEnv(t)
		e.mustImportFile(t, "reasample_residential.xml")
		var l model.Listing
		e.get(t, "/v1/sites/{site}/listings/ABCD1234", &l)
		if l.Price == nil || l.Price.Amount == nil || *l.Price.Amount != 500000 || !l.Price.ShowAmount || *l.Price.DisplayText != "Between $400,000 and $600,000" {
			t.Errorf("price %+v", l.Price)
		}
		if l.Address.Formatted == nil || *l.Address.Formatted != "2/39 Main Road, RICHMOND VIC 3121" || l.Address.Street == nil {
			t.Errorf("address %+v", l.Address)
		}
		if l.Inspections[0].StartsAt.Format("2006-01-02T15:04:05-07:00") != "2009-01-21T11:00:00+11:00" {
			t.Errorf("inspection %v not in the site's time zone", l.Inspections[0].StartsAt)
		}
		if len(l.Agents) != 1 || l.Agents[0].Name != "Mr. John Doe" || len(l.Media) != 5 { // 2 images, 2 floorplans, 1 external link
			t.Errorf("agents %+v media %d", l.Agents, len(l.Media))
		}
	})
	t.Run("address hidden", func(t *testing.T) {
		e := newEnv(t)
		e.mustImport(t, head+`
		<residential modTime="2024-02-01-10:00:00"><agentID>A</agentID><uniqueID>NOADDR</uniqueID>
			<address display="no"><subNumber>4</subNumber><streetNumber>12</streetNumber><street>Hidden Lane</street><suburb>Kew</suburb><state>VIC</state><postcode>3101</postcode></address></residential>
		<residential modTime="2024-02-01-10:00:00"><agentID>A</agentID><uniqueID>NOSUBURB</uniqueID>
			<address display="no"><streetNumber>12</streetNumber><street>Quiet Lane</street><suburb display="no">Toorak</suburb><state>VIC</state><postcode>3142</postcode></address></residential>
		</propertyList>`)
		var l model.Listing
		e.get(t, "/v1/sites/{site}/listings/NOADDR", &l)
		a := l.Address
		if a.Display || a.Street != nil || a.StreetNumber != nil || a.Formatted == nil || *a.Formatted != "Kew" || *a.Suburb != "Kew" {
			t.Errorf("hidden address %+v", a)
		}
		e.get(t, "/v1/sites/{site}/listings/NOSUBURB", &l)
		if l.Address.Suburb != nil || l.Address.Formatted != nil || l.Address.Postcode != nil {
			t.Errorf("hidden suburb %+v", l.Address)
		}
		for _, path := range []string{"/listings?per_page=100", "/listings/search?q=kew", "/fields", "/listings/NOADDR", "/listings/NOSUBURB"} {
			_, body := e.do(t, req{path: "/v1/sites/" + e.site + path})
			for _, secret := range []string{"Hidden Lane", "Quiet Lane", "Toorak", "3142"} {
				if strings.Contains(string(body), secret) {
					t.Errorf("%s shows %q", path, secret)
				}
			}
		}
		var p listingPage
		e.get(t, "/v1/sites/{site}/listings/search?q=toorak", &p)
		if len(p.Data) != 0 {
			t.Error("a hidden suburb is searchable")
		}
	})
}

// Absent values are null, never 0 or "".
func TestAbsentValuesAreNull(t *testing.T) {
	e := newEnv(t)
	e.mustImport(t, head+`<land modTime="2024-02-01-10:00:00"><agentID>A</agentID><uniqueID>BARE</uniqueID></land></propertyList>`)
	_, body := e.do(t, req{path: "/v1/sites/" + e.site + "/listings/BARE"})
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"headline", "description", "price", "rent", "sold", "land", "building", "auction", "date_available", "category"} {
		if v, ok := m[k]; !ok || v != nil {
			t.Errorf("%s = %v, want null", k, v)
		}
	}
	f := m["features"].(map[string]any)
	if f["bedrooms"] != nil {
		t.Errorf("bedrooms %v", f["bedrooms"])
	}
}
