package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
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
	"github.com/listgate/listgate/origin/leads"
	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/pkg/devdb"
	"github.com/listgate/listgate/pkg/model"
)

func init() { scenarios["leads"] = benchLeads }

// benchLeads measures accepted leads per second through the origin's lead
// intake, then single-row inserts per second with pgbench on the same
// Postgres, side by side, and checks that every 201 has its row.
func benchLeads(args []string) error {
	fs := flag.NewFlagSet("leads", flag.ContinueOnError)
	dur := fs.Duration("duration", 10*time.Second, "duration of each run")
	workers := fs.Int("workers", 16, "concurrent clients")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx := context.Background()
	pg, err := startBenchPostgres(ctx)
	if err != nil {
		return err
	}
	defer pg.Close()
	db, err := store.Open(ctx, pg.DatabaseURL("bench"), store.Options{MaxConns: 32})
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.Migrate(ctx); err != nil {
		return err
	}
	site, err := db.CreateSite(ctx, "Bench Realty", model.Enterprise, "")
	if err != nil {
		return err
	}
	if _, err := db.Pool.Exec(ctx, `INSERT INTO agents (site_id, name, email)
		SELECT $1, 'Agent ' || i, 'agent' || i || '@agency.example' FROM generate_series(1, 4) i`, site.ID); err != nil {
		return err
	}

	const token = "bench-internal-token-0123456789abcdef"
	srv := api.New(api.Config{DB: db, InternalToken: token, Log: slog.New(slog.DiscardHandler),
		Mounts: []api.Mounter{leads.New(leads.Config{DB: db, Log: slog.New(slog.DiscardHandler)})}})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: srv.Handler()}
	go hs.Serve(ln)
	defer hs.Close()

	var mu sync.Mutex
	var ids []int64
	url := "http://" + ln.Addr().String() + "/v1/leads"
	res := closedLoop(ctx, *workers, *dur, 10_000_000, func(i int) *http.Request {
		body := fmt.Sprintf(`{"name":"Buyer %d","email":"buyer%d@example.com","phone":"0412 %03d %03d","type":"inquiry","message":"Is it still available?"}`,
			i, i, i/1000%1000, i%1000)
		req, _ := http.NewRequest("POST", url, bytes.NewReader([]byte(body)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(api.HeaderInternalToken, token)
		req.Header.Set(api.HeaderSite, site.ID)
		req.Header.Set(api.HeaderKeyID, "6f1c2a8e-0000-4000-8000-000000000001")
		req.Header.Set(api.HeaderScopes, "leads:write")
		return req
	}, func(i, status int, body []byte) {
		if status != 201 {
			return
		}
		var r struct {
			LeadID int64 `json:"lead_id"`
		}
		if json.Unmarshal(body, &r) == nil {
			mu.Lock()
			ids = append(ids, r.LeadID)
			mu.Unlock()
		}
	})
	var stored int
	db.Pool.QueryRow(ctx, `SELECT count(*) FROM leads WHERE site_id = $1 AND id = ANY($2)`, site.ID, ids).Scan(&stored)
	fmt.Printf("leads: intake  %s\n", res)
	fmt.Printf("leads: %d of %d acknowledged leads found in the database\n", stored, len(ids))
	if stored != len(ids) {
		return fmt.Errorf("%d acknowledged leads missing", len(ids)-stored)
	}

	tps, err := pgbenchInserts(ctx, pg, *workers, *dur)
	if err != nil {
		fmt.Printf("leads: pgbench: %v\n", err)
		return nil
	}
	fmt.Printf("leads: pgbench single-row inserts %8.0f rows/s (%d clients)\n", tps, *workers)
	fmt.Printf("leads: intake / pgbench = %.2f\n", res.rps()/tps)
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
	out, err := exec.CommandContext(ctx, bin, "-n", "-c", strconv.Itoa(clients), "-j", "2",
		"-T", strconv.Itoa(int(d.Seconds())), "-f", script, conn).CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("%v: %s", err, out)
	}
	m := tpsLine.FindSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("no tps in pgbench output: %s", out)
	}
	return strconv.ParseFloat(string(m[1]), 64)
}
