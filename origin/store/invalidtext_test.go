package store_test

import (
	"context"
	"testing"

	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/origin/store/storetest"
	"github.com/listgate/listgate/pkg/model"
)

// An id a client sends that no text column can hold — a NUL, bytes that
// are not UTF-8 — is not found, like one that is not a UUID, rather than
// an error of the query it would have failed.
func TestIdsNoTextHoldsAreNotFound(t *testing.T) {
	db := storetest.NewDB(t)
	ctx := context.Background()
	site, err := db.CreateSite(ctx, "Text Realty", model.Professional, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"not-a-uuid", "\x00", "6f1c2a8e-0000-4000-8000-00000000000\x00", "\xff", "\xc3"} {
		lookups := map[string]func() error{
			"GetSite":         func() error { _, err := db.GetSite(ctx, id); return err },
			"GetFeedJob":      func() error { _, err := db.GetFeedJob(ctx, site.ID, id); return err },
			"AccountSite":     func() error { _, err := db.AccountSite(ctx, id, site.ID); return err },
			"WebhookEndpoint": func() error { _, err := db.WebhookEndpoint(ctx, site.ID, id); return err },
		}
		for name, lookup := range lookups {
			if err := lookup(); !store.IsNotFound(err) {
				t.Errorf("%s(%q): %v, want not found", name, id, err)
			}
		}
	}
}
