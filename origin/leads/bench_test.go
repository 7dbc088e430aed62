package leads_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/listgate/listgate/origin/api"
	"github.com/listgate/listgate/origin/leads"
	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/origin/store/storetest"
)

// BenchmarkSubmitLead posts distinct leads through the origin's handler
// chain (without the contract check of the tests) from 16 parallel clients
// into a real Postgres, to a site of 8 agents on round robin: with an
// Idempotency-Key as the plugin sends, without one as the bench's leads
// scenario does, and naming a listing (a reference to look up).
func BenchmarkSubmitLead(b *testing.B) {
	for _, bc := range []struct {
		name    string
		idemKey bool
		listing bool
		batch   int // store.Options.LeadBatch
	}{
		{"key", true, false, 0},
		{"no-key", false, false, 0},
		{"key-listing", true, true, 0},
		// Each submission in a transaction of its own (no group commit).
		{"no-key-alone", false, false, 1},
	} {
		b.Run(bc.name, func(b *testing.B) {
			db, err := store.Open(context.Background(), storetest.URL(b), store.Options{MaxConns: 10, LeadBatch: bc.batch})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(db.Close)
			f := &fixture{db: db}
			f.site, f.keyID = mustSiteAndKey(b, db)
			for i := range 8 {
				f.mustAgent(b, fmt.Sprintf("Agent %d", i), fmt.Sprintf("agent%d@agency.example", i))
			}
			listing := ""
			if bc.listing {
				f.mustListings(b)
				listing = `,"listing_id":"AG:L2"`
			}
			// A database that has taken leads (and Idempotency-Keys) before,
			// with its statistics current (as the bench's leads scenario
			// warms up and analyzes): a plan made while a table was believed
			// empty reads all of it until autovacuum analyzes the table.
			f.mustExec(b, `INSERT INTO leads (site_id, type, priority, name, email, email_norm, phone, phone_e164)
				SELECT $1, 'inquiry', 'warm', 'Earlier', 'e' || i || '@example.com', 'e' || i || '@example.com',
					'+6193' || lpad(i::text, 6, '0'), '+6193' || lpad(i::text, 6, '0')
				FROM generate_series(1, 5000) i`, f.site)
			f.mustExec(b, `INSERT INTO idempotency_keys (site_id, key_id, idem_key, body_hash, state, claim_id,
					response_code, response_body, expires_at)
				SELECT $1, $2, 'earlier-' || i, '\x00', 'done', gen_random_uuid(), 201, '{}', now() + interval '1 day'
				FROM generate_series(1, 5000) i`, f.site, f.keyID)
			f.mustExec(b, `ANALYZE`)
			log := slog.New(slog.DiscardHandler)
			f.handler = api.New(api.Config{Ready: db.Ping, Unavailable: store.IsUnavailable, Metrics: db.WritePoolMetrics,
				Log: log, InternalToken: internalToken,
				Mounts: []api.Mounter{leads.New(leads.Config{DB: db, Log: log})}}).Handler()
			var n atomic.Int64
			b.SetParallelism(8)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				h := f.identity()
				for pb.Next() {
					i := n.Add(1)
					if bc.idemKey {
						h["Idempotency-Key"] = fmt.Sprintf("bench-%d", i)
					}
					body := fmt.Sprintf(`{"name":"Buyer %d","email":"buyer%d@example.com","phone":"0412 %03d %03d","message":"Is it still available?","type":"inquiry"%s}`,
						i, i, i/1000%1000, i%1000, listing)
					if r := send(f.handler, "POST", "/v1/leads", strings.NewReader(body), h); r.status != 201 {
						b.Fatalf("%d %s", r.status, r.body)
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "leads/s")
		})
	}
}
