package leads_test

import (
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
// chain (without the contract check of the tests) from parallel clients
// into a real Postgres, with an Idempotency-Key as the plugin sends.
func BenchmarkSubmitLead(b *testing.B) {
	db := storetest.NewDB(b)
	f := &fixture{db: db}
	f.site, f.keyID = mustSiteAndKey(b, db)
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
			h["Idempotency-Key"] = fmt.Sprintf("bench-%d", i)
			body := fmt.Sprintf(`{"name":"Buyer %d","email":"buyer%d@example.com","phone":"0412 345 %03d","message":"Is it still available?","type":"inquiry"}`, i, i, i%1000)
			if r := send(f.handler, "POST", "/v1/leads", strings.NewReader(body), h); r.status != 201 {
				b.Fatalf("%d %s", r.status, r.body)
			}
		}
	})
}
