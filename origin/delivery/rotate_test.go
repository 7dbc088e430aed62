package delivery_test

import (
	"context"
	"testing"
	"time"

	"github.com/listgate/listgate/pkg/apierror"
)

// A rotation with an overlap is refused while the last one's overlap runs
// (a form sent twice would cut off the receiver's secret); one with no
// overlap ends the older secrets at once.
func TestRotateDuringOverlap(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	ep := f.endpoint(t, "lead.created")
	first, err := f.db.RotateWebhookSecret(ctx, f.site, ep.ID, time.Hour)
	if err != nil || first.SecretGen != 2 {
		t.Fatalf("rotate: %+v %v", first, err)
	}
	again, err := f.db.RotateWebhookSecret(ctx, f.site, ep.ID, time.Hour)
	if e, ok := err.(*apierror.Error); !ok || e.Code != apierror.CodeValidationError {
		t.Fatalf("second rotation inside the overlap: %+v %v", again, err)
	}
	now, err := f.db.RotateWebhookSecret(ctx, f.site, ep.ID, 0)
	if err != nil || now.SecretGen != 3 || now.PrevSecretUntil == nil || now.PrevSecretUntil.After(time.Now().Add(time.Second)) {
		t.Fatalf("rotation with no overlap: %+v %v", now, err)
	}
	if _, err := f.db.RotateWebhookSecret(ctx, "00000000-0000-0000-0000-000000000000", ep.ID, 0); err == nil {
		t.Error("another site rotated the endpoint")
	}
}
