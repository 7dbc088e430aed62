package delivery_test

import (
	"context"
	"testing"
)

// DeliveryCounts counts by state what its site and endpoint filters select,
// and ids that are not UUIDs select nothing.
func TestDeliveryCounts(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	ep := f.endpoint(t, "lead.created")
	other := f.endpoint(t, "lead.created", "lead.updated")
	id := f.lead(t, `{"name":"Cy Count","email":"cy@example.com","type":"inquiry"}`)
	if err := f.db.SetLeadStatus(ctx, f.site, id, "contacted"); err != nil {
		t.Fatal(err)
	}
	const nobody = "00000000-0000-0000-0000-000000000000"
	for _, tc := range []struct {
		name           string
		site, endpoint string
		want           int64
	}{
		{"site and endpoint", f.site, ep.ID, 1},
		{"site and the other endpoint", f.site, other.ID, 2},
		{"site", f.site, "", 3},
		{"endpoint of any site", "", other.ID, 2},
		{"every site", "", "", 3},
		{"another site", nobody, ep.ID, 0},
		{"no such endpoint", f.site, nobody, 0},
		{"not a UUID", "x", "", 0},
		{"endpoint not a UUID", f.site, "1 OR true", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			counts, err := f.db.DeliveryCounts(ctx, tc.site, tc.endpoint)
			if err != nil {
				t.Fatal(err)
			}
			if counts["pending"] != tc.want || len(counts) > 1 {
				t.Errorf("counts %v, want %d pending", counts, tc.want)
			}
		})
	}
}
