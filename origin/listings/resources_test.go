package listings

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/listgate/listgate/pkg/model"
)

func TestFields(t *testing.T) {
	e := newEnv(t)
	e.mustImport(t, generated(t, 200))
	var p struct {
		Data []model.Field
		Meta model.Meta
	}
	e.get(t, "/v1/sites/{site}/fields?per_page=100", &p)
	byName := map[string]model.Field{}
	for _, f := range p.Data {
		byName[f.Name] = f
		if f.Values == nil || f.Params == nil || f.Label == "" {
			t.Errorf("field %+v lacks values, params or label", f)
		}
	}
	if p.Meta.Total != len(p.Data) || len(p.Data) < 12 {
		t.Fatalf("%d fields, meta %+v", len(p.Data), p.Meta)
	}
	// Every filter parameter of the listing route is described.
	described := map[string]bool{}
	for _, f := range p.Data {
		for _, prm := range f.Params {
			described[prm] = true
		}
	}
	for _, prm := range listingParams {
		if prm != "page" && prm != "per_page" && !described[prm] {
			t.Errorf("parameter %s has no field", prm)
		}
	}
	// Counts are the site's current listings.
	sum := 0
	for _, v := range byName["type"].Values {
		sum += *v.Count
	}
	if sum != e.count(t, "status = 'current'") {
		t.Errorf("type counts add to %d", sum)
	}
	for _, v := range byName["suburb"].Values {
		if *v.Count != e.count(t, "status = 'current' AND suburb = $2", v.Value) || *v.Count == 0 {
			t.Errorf("suburb %s count %d", v.Value, *v.Count)
		}
	}
	if len(byName["suburb"].Values) < 3 {
		t.Errorf("suburbs %v", byName["suburb"].Values)
	}
	price := byName["price"]
	if price.Min == nil || price.Max == nil || *price.Min > *price.Max || price.Type != "number" {
		t.Errorf("price field %+v", price)
	}
	var page2 struct{ Data []model.Field }
	e.get(t, "/v1/sites/{site}/fields?per_page=5&page=2", &page2)
	if len(page2.Data) != 5 || page2.Data[0].Name != p.Data[5].Name {
		t.Errorf("fields page 2: %+v", page2.Data)
	}
}

func TestStatsSummary(t *testing.T) {
	e := newEnv(t)
	e.mustImport(t, generated(t, 120))
	ctx := context.Background()
	for i, typ := range []string{"inquiry", "inquiry", "appraisal", "general"} {
		age := "1 day"
		if i == 3 {
			age = "10 days"
		}
		if _, err := e.db.Pool.Exec(ctx, `INSERT INTO leads (site_id, type, priority, name, email, created_at)
			VALUES ($1, $2, 'warm', 'Ann', 'ann@example.com', now() - $3::interval)`, e.site, typ, age); err != nil {
			t.Fatal(err)
		}
	}
	var s model.StatsSummary
	e.get(t, "/v1/sites/{site}/stats/summary", &s)
	if s.Listings.Total != e.count(t, "status <> 'deleted'") || s.Listings.ByStatus["current"] != e.count(t, "status = 'current'") {
		t.Errorf("listing counts %+v", s.Listings)
	}
	if s.Leads.Last7Days["inquiry"] != 2 || s.Leads.Last7Days["general"] != 0 || s.Leads.Last30Days["general"] != 1 || s.Leads.Last30Days["rental_application"] != 0 {
		t.Errorf("lead counts %+v", s.Leads)
	}
	var n int
	var lo, hi float64
	e.db.Pool.QueryRow(ctx, `SELECT count(*), min(price), max(price) FROM listings WHERE site_id = $1 AND status = 'current'
		AND type = ANY($2) AND price_shown AND price IS NOT NULL`, e.site, saleTypes).Scan(&n, &lo, &hi)
	p := s.Listings.Price
	if p.Count != n || n == 0 || *p.Min != lo || *p.Max != hi || *p.Median < lo || *p.Median > hi {
		t.Errorf("price stats %+v, want %d in %v..%v", p, n, lo, hi)
	}
	if s.AgentCount == 0 || s.GeneratedAt.IsZero() {
		t.Errorf("summary %+v", s)
	}
}

func TestMediaAndAgents(t *testing.T) {
	e := newEnv(t)
	e.mustImportFile(t, "reasample_residential.xml")
	e.mustImportFile(t, "i4ucode_commercial_sample.xml")
	var media struct {
		Data []model.Media
		Meta model.Meta
	}
	e.get(t, "/v1/sites/{site}/media?per_page=100", &media)
	if len(media.Data) == 0 || media.Meta.Total != len(media.Data) {
		t.Fatalf("media %+v", media.Meta)
	}
	first := media.Data[0]
	if first.MediaID == "" || first.ListingRef == 0 || first.ListingID == "" || first.URL == "" || first.ModifiedAt.IsZero() {
		t.Errorf("media object %+v", first)
	}
	var one model.Media
	e.get(t, "/v1/sites/{site}/media/"+first.MediaID, &one)
	if one != first {
		t.Errorf("single media %+v != %+v", one, first)
	}
	var floorplans struct{ Data []model.Media }
	e.get(t, fmt.Sprintf("/v1/sites/{site}/media?kind=floorplan&listing_ref=%d", first.ListingRef), &floorplans)
	for _, m := range floorplans.Data {
		if m.Kind != "floorplan" || m.ListingRef != first.ListingRef {
			t.Errorf("filtered media %+v", m)
		}
	}
	if len(floorplans.Data) == 0 {
		t.Error("no floorplans")
	}
	var agents struct {
		Data []model.Agent
		Meta model.Meta
	}
	e.get(t, "/v1/sites/{site}/agents", &agents)
	if len(agents.Data) < 2 || agents.Meta.Total != len(agents.Data) {
		t.Fatalf("agents %+v", agents)
	}
	var a model.Agent
	e.get(t, "/v1/sites/{site}/agents/"+agents.Data[0].AgentID, &a)
	if !reflect.DeepEqual(a, agents.Data[0]) {
		t.Errorf("single agent %+v != %+v", a, agents.Data[0])
	}
	// Another site sees none of it.
	other := newEnvOn(t, e.db)
	for _, path := range []string{"/media/" + first.MediaID, "/agents/" + a.AgentID} {
		if status, _ := other.getError(t, req{path: "/v1/sites/{site}" + path}); status != 404 {
			t.Errorf("%s through another site: %d", path, status)
		}
	}
	for _, path := range []string{"/media/x", "/agents/0", "/media/99999999"} {
		if status, _ := e.getError(t, req{path: "/v1/sites/{site}" + path}); status != 404 {
			t.Errorf("%s: %d", path, status)
		}
	}
}

func TestFeatured(t *testing.T) {
	e := newEnv(t)
	e.mustImport(t, generated(t, 40))
	if _, err := e.db.Pool.Exec(context.Background(), `UPDATE listings SET featured = true WHERE site_id = $1 AND ref IN
		(SELECT ref FROM listings WHERE site_id = $1 AND status = 'current' ORDER BY ref LIMIT 3)`, e.site); err != nil {
		t.Fatal(err)
	}
	var p listingPage
	e.get(t, "/v1/sites/{site}/listings/featured", &p)
	if len(p.Data) != 3 || p.Meta.Total != 3 {
		t.Fatalf("featured %+v", p.Meta)
	}
	for i, l := range p.Data {
		if !l.Featured || (i > 0 && l.ModifiedAt.After(p.Data[i-1].ModifiedAt)) {
			t.Errorf("featured listing %d: featured=%v, order", l.ListingRef, l.Featured)
		}
	}
}
