package delivery_test

import (
	"context"
	"testing"

	"github.com/listgate/listgate/pkg/model"
)

// The schema keeps a delivery to an endpoint of its own site: one naming
// another site's endpoint is refused, whatever query writes it.
func TestDeliveryEndpointOfItsSite(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	id := f.lead(t, `{"name":"Sid Site","email":"sid@example.com","type":"inquiry"}`)
	other, err := f.db.CreateSite(ctx, "Other Realty", model.Professional, "")
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := f.db.CreateWebhookEndpoint(ctx, other.ID, "https://crm.other.example/hooks", []string{"lead.created"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.db.Pool.Exec(ctx, `INSERT INTO deliveries (site_id, endpoint_id, event_id, event_type, lead_id)
		VALUES ($1, $2, 1, 'lead.created', $3)`, f.site, theirs.ID, id)
	if err == nil {
		t.Fatal("a delivery of one site's lead to another site's endpoint was stored")
	}
	// An e-mail (no endpoint) and the site's own endpoint are fine.
	ours := f.endpoint(t, "lead.created")
	for _, ep := range []any{nil, ours.ID} {
		if _, err := f.db.Pool.Exec(ctx, `INSERT INTO deliveries (site_id, endpoint_id, event_id, event_type, lead_id)
			VALUES ($1, $2, 1, 'lead.created', $3)`, f.site, ep, id); err != nil {
			t.Errorf("endpoint %v: %v", ep, err)
		}
	}
	// Deleting the endpoint deletes its deliveries.
	if err := f.db.DeleteWebhookEndpoint(ctx, f.site, ours.ID); err != nil {
		t.Fatal(err)
	}
	var n int
	f.scalar(t, &n, `SELECT count(*) FROM deliveries WHERE endpoint_id IS NOT NULL`)
	if n != 0 {
		t.Errorf("%d deliveries of a deleted endpoint left", n)
	}
}
