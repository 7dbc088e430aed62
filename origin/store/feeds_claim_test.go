package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/origin/store/storetest"
	"github.com/listgate/listgate/pkg/model"
)

// While a site's feed is being imported, the next worker takes another
// site's feed, not the same site's next one (which would only wait for the
// site's lock); once the import is done, the site's next feed is claimed.
func TestClaimFeedJobSkipsASiteBeingImported(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	a, b := mustSite(t, db, model.Starter), mustSite(t, db, model.Starter)
	job := func(site string, n int) string {
		t.Helper()
		c, err := db.CreateOAuthClient(ctx, store.NewOAuthClient{SiteID: site, ClientID: site[:8] + string(rune('a'+n)), Name: "CRM"})
		if err != nil {
			t.Fatal(err)
		}
		j, err := db.InsertFeedJob(ctx, store.NewFeedJob{SiteID: site, ClientID: c.ClientID, Body: []byte("x"), BodySize: 1})
		if err != nil {
			t.Fatal(err)
		}
		return j.ID
	}
	a1 := job(a.ID, 0)
	a2 := job(a.ID, 1)
	b1 := job(b.ID, 2)
	claim := func() store.ClaimedFeedJob {
		t.Helper()
		c, ok, err := db.ClaimFeedJob(ctx, time.Minute)
		if err != nil || !ok {
			t.Fatalf("claim: %v %v", ok, err)
		}
		return c
	}
	if c := claim(); c.ID != a1 {
		t.Fatalf("first claim %s, want site A's first feed %s", c.ID, a1)
	}

	if c := claim(); c.ID != b1 {
		t.Fatalf("second claim %s (site %s), want site B's feed %s while A's is imported", c.ID, c.SiteID, b1)
	}
	if _, ok, err := db.ClaimFeedJob(ctx, time.Minute); ok || err != nil {
		t.Fatalf("a third claim while both sites import: %v %v", ok, err)
	}
	if ok, err := db.FinishFeedJob(ctx, a1, 1, store.FeedDone, []byte("{}"), []byte("[]")); !ok || err != nil {
		t.Fatalf("finish: %v %v", ok, err)
	}
	if c := claim(); c.ID != a2 {
		t.Fatalf("after A's import, claim %s, want A's next feed %s", c.ID, a2)
	}
}
