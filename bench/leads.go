package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"time"

	json "github.com/goccy/go-json"

	"github.com/listgate/listgate/origin/api"
	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/pkg/devdb"
)

func init() {
	scenarios["leads"] = benchLeads
	plans["leads"] = func(q bool) time.Duration {
		d := 10 * time.Second
		if q {
			d = 2 * time.Second
		}
		return systemSetup + 3*d + 2*time.Second
	}
}

// benchLeads measures accepted leads per second through the edge and the
// origin, then at the origin directly, then single-row inserts per second
// with pgbench on the same Postgres, side by side, and checks that every
// 201 has its row.
func benchLeads(args []string) error {
	fs := flag.NewFlagSet("leads", flag.ContinueOnError)
	dur := fs.Duration("duration", def(10*time.Second, 2*time.Second), "duration of each run")
	workers := fs.Int("workers", 16, "concurrent clients")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx := context.Background()
	sys, err := startSystem(ctx)
	if err != nil {
		return err
	}
	defer sys.close()
	keyID, key, err := createKey(ctx, sys, "bench leads", "leads:write")
	if err != nil {
		return err
	}
	dbURL := sys.pg.DatabaseURL("bench")
	run := strconv.FormatInt(time.Now().UnixNano()%1e10, 36)

	targets := []struct {
		name, url string
		headers   map[string]string
	}{
		// The warm-up stands for a database that has taken leads before:
		// the leads table grows from the demo's few rows, then is analyzed
		// as autovacuum would within a minute. Measured on an empty
		// table's statistics, the duplicate search read every lead of the
		// site (TestDuplicateSearchReadsOnlyMatches).
		{"warm-up", sys.edge.URL() + "/v1/leads", map[string]string{"Authorization": "Bearer " + key}},
		{"edge+origin", sys.edge.URL() + "/v1/leads", map[string]string{"Authorization": "Bearer " + key}},
		{"origin-direct", sys.origin.URL() + "/v1/leads", map[string]string{api.HeaderInternalToken: benchToken,
			api.HeaderSite: sys.siteID, api.HeaderKeyID: keyID, api.HeaderScopes: "leads:write"}},
	}
	results := map[string]loadResult{}
	checks := map[string]leadRowCheck{}
	t := reportTable{Title: fmt.Sprintf("%d clients, %v each, on one Postgres:", *workers, *dur),
		Header: []string{"run", "per second", "p50", "p99", "201s", "matched to their row", "ratio"}}
	for ti, tg := range targets {
		// New e-mails and phone numbers in every run: a lead that matched
		// an earlier one's would be a duplicate, not a new lead.
		prefix := fmt.Sprintf("lead-%s-%s-", run, tg.name)
		var mu sync.Mutex
		sent := map[int]*sentLead{}
		d := *dur
		if tg.name == "warm-up" {
			d = min(d, 3*time.Second)
		}
		res := closedLoop(ctx, *workers, d, 10_000_000, func(i int) *http.Request {
			email := fmt.Sprintf("%s%d@example.com", prefix, i)
			body := fmt.Sprintf(`{"name":"Buyer %d","email":%q,"phone":"04%02d %03d %03d","type":"inquiry","message":"Is it still available?"}`,
				i, email, 10+ti, i/1000%1000, i%1000)
			mu.Lock()
			sent[i] = &sentLead{email: email}
			mu.Unlock()
			req, _ := http.NewRequest("POST", tg.url, bytes.NewReader([]byte(body)))
			req.Header.Set("Content-Type", "application/json")
			for k, v := range tg.headers {
				req.Header.Set(k, v)
			}
			return req
		}, func(i, status int, body []byte) {
			if status != 201 {
				return
			}
			var r struct {
				LeadID    int64 `json:"lead_id"`
				Duplicate bool  `json:"duplicate"`
			}
			if json.Unmarshal(body, &r) == nil && r.LeadID > 0 {
				mu.Lock()
				sent[i].id, sent[i].acked, sent[i].duplicate = r.LeadID, true, r.Duplicate
				mu.Unlock()
			}
		})
		var all []sentLead
		for _, l := range sent {
			all = append(all, *l)
		}
		check, err := checkLeadRows(ctx, dbURL, sys.siteID, prefix, all)
		if err != nil {
			return err
		}
		fmt.Printf("leads: %-14s %s\n", tg.name, res)
		fmt.Printf("leads: %-14s %s\n", tg.name, check)
		results[tg.name], checks[tg.name] = res, check
		if err := check.err(); err != nil {
			return fmt.Errorf("%s: %w", tg.name, err)
		}
		if res.Statuses[201] != res.Requests || res.Errors > 0 {
			return fmt.Errorf("%s: answers other than 201: %s", tg.name, res)
		}
		if tg.name == "warm-up" {
			if err := analyze(ctx, dbURL); err != nil {
				return err
			}
			continue
		}
		t.Rows = append(t.Rows, []string{"leads " + tg.name, fmtRate(res.rps()), fmtMs(ms(res.P50)), fmtMs(ms(res.P99)),
			fmt.Sprint(check.Acked), fmt.Sprintf("%d of %d", check.Matched, check.Acked), ""})
	}
	e, o := results["edge+origin"], results["origin-direct"]
	summarize("leads", "%d clients, %v: %s leads/s through the edge, %s at the origin directly; every 201 matched to its row (%d + %d)",
		*workers, *dur, fmtRate(e.rps()), fmtRate(o.rps()), checks["edge+origin"].Matched, checks["origin-direct"].Matched)
	data := map[string]any{"workers": *workers, "duration_s": dur.Seconds(), "intake": results, "checks": checks}
	bars := []chartBar{{"edge+origin", e.rps()}, {"origin-direct", o.rps()}}

	tps, err := pgbenchInserts(ctx, sys.pg, *workers, *dur)
	if err != nil {
		// The anchor is missing, not the intake broken: say so and go on.
		summarize("leads", "pgbench: %v", err)
		data["pgbench_error"] = err.Error()
	} else {
		summarize("leads", "pgbench single-row inserts %s rows/s (%d clients); intake through the edge / pgbench = %s",
			fmtRate(tps), *workers, fmtRatio(e.rps()/tps))
		t.Rows = append(t.Rows, []string{"pgbench single-row INSERT", fmtRate(tps), "", "", "", "",
			"edge+origin / pgbench = **" + fmtRatio(e.rps()/tps) + "**"})
		bars = append(bars, chartBar{"pgbench-insert", tps})
		data["pgbench_tps"], data["intake_over_pgbench"] = tps, e.rps()/tps
	}
	t.Rows[1][6] = "edge+origin / origin-direct = **" + fmtRatio(e.rps()/o.rps()) + "**"
	addTable("leads", t)
	addBars("leads", barChart{Name: "throughput", Title: fmt.Sprintf("Lead intake vs pgbench inserts, %d clients", *workers),
		Unit: "per second", Ref: 0, Bars: bars})
	return writeResults("leads", data)
}

// analyze updates the planner's statistics of every table.
func analyze(ctx context.Context, dbURL string) error {
	db, err := store.Open(ctx, dbURL, store.Options{MaxConns: 1})
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.Pool.Exec(ctx, "ANALYZE"); err != nil {
		return fmt.Errorf("analyze: %w", err)
	}
	return nil
}

var tpsLine = regexp.MustCompile(`tps = ([0-9.]+)`)

// pgbenchInserts runs pgbench with a single-row INSERT script against the
// same server and returns its transactions per second.
func pgbenchInserts(ctx context.Context, pg *devdb.Postgres, clients int, d time.Duration) (float64, error) {
	bin, err := exec.LookPath("pgbench")
	if err != nil {
		matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pgbench")
		if len(matches) == 0 {
			return 0, fmt.Errorf("pgbench not found (apt-get install postgresql-client)")
		}
		bin = matches[len(matches)-1]
	}
	conn := pg.DatabaseURL("bench")
	dbx, err := store.Open(ctx, conn, store.Options{MaxConns: 2})
	if err != nil {
		return 0, err
	}
	_, err = dbx.Pool.Exec(ctx, `CREATE TABLE IF NOT EXISTS bench_rows (id bigserial PRIMARY KEY, site_id uuid NOT NULL,
		name text NOT NULL, email text, created_at timestamptz NOT NULL DEFAULT now())`)
	dbx.Close()
	if err != nil {
		return 0, err
	}
	script := filepath.Join(os.TempDir(), fmt.Sprintf("listgate-pgbench-%d.sql", os.Getpid()))
	os.WriteFile(script, []byte(`INSERT INTO bench_rows (site_id, name, email) VALUES (gen_random_uuid(), 'Buyer', 'buyer@example.com');`+"\n"), 0o644)
	defer os.Remove(script)
	ctx, cancel := context.WithTimeout(ctx, d+30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "-n", "-c", strconv.Itoa(clients), "-j", "2",
		"-T", strconv.Itoa(max(1, int(d.Seconds()))), "-f", script, conn).CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("%v: %s", err, out)
	}
	m := tpsLine.FindSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("no tps in pgbench output: %s", out)
	}
	return strconv.ParseFloat(string(m[1]), 64)
}
