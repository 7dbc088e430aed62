package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/listgate/listgate/pkg/devdb"
	"github.com/listgate/listgate/pkg/devproc"
	"github.com/listgate/listgate/pkg/model"
	"github.com/listgate/listgate/pkg/webhook"
)

// benchToken is the internal token of the processes a benchmark starts.
const benchToken = "bench-internal-token-0123456789abcdef0123"

// benchSystem is a throwaway Postgres with the demo site, the origin and
// one or more edges in front of it, and optionally a Redis the edges share
// for the rate limiter. Its fault methods (killOrigin, restartOrigin,
// stopPostgres, restartPostgres, killRedis, killEdge) are for the drills;
// they must not run concurrently with each other or with close.
type benchSystem struct {
	dir                string
	originBin, edgeBin string
	pg                 *devdb.Postgres
	dbURL              string
	redis              *devdb.Redis       // nil unless systemOptions.Redis
	origin             *devproc.Process   // origins[0]
	originAddr         string             // originAddrs[0]
	origins            []*devproc.Process // each origin, replaced when restarted
	originAddrs        []string           // their addresses, kept across restarts
	edge               *devproc.Process   // edges[0]
	edges              []*devproc.Process // every edge started, killed ones included
	edgeArgs           []string           // each edge's arguments (its -config)
	originArgs         []string           // each origin's arguments after serve (its -config)
	// webhookEnv is what origins and the CLI get with systemOptions.Webhooks:
	// the secret key and the loopback allowance.
	webhookEnv []string
	plan       model.Plan

	siteID             string
	readKey, readKeyID string // listings:read, agents:read, stats:read
	leadKey, leadKeyID string // leads:write
}

// systemOptions shape a benchSystem. The zero value is what startSystem
// starts: one edge with the in-process limiter, the demo site on the
// Enterprise plan (no rate limit).
type systemOptions struct {
	// Edges is the number of edges in front of the origin: 1 (the default)
	// or 2.
	Edges int
	// Origins is the number of origins behind every edge (all of them in
	// each edge's LISTGATE_ORIGIN_URL): 1 (the default) or 2.
	Origins int
	// Redis starts a throwaway Redis and gives it to every edge as its
	// limiter (LISTGATE_REDIS_URL), with LISTGATE_EXPECTED_EDGES = Edges.
	Redis bool
	// Plan is the demo site's plan; empty means Enterprise.
	Plan model.Plan
	// EdgeConfig, when not empty, is YAML every edge reads as its -config
	// file (configs/edge.yaml), e.g. "public_limit: 1000000".
	EdgeConfig string
	// OriginConfig, when not empty, is YAML every origin reads as its
	// -config file (configs/origin.yaml), e.g. "webhook_timeout: 4s".
	OriginConfig string
	// Webhooks gives every origin and the CLI a new LISTGATE_SECRET_KEY and
	// LISTGATE_WEBHOOK_ALLOW_TARGETS=loopback, so that webhooks can be
	// registered (createWebhook) and sent to a receiver on 127.0.0.1. Off
	// by default, so that the other scenarios run the origin as before:
	// without a key its delivery worker never looks for webhooks.
	Webhooks bool
}

// startSystem starts the default system: see systemOptions.
func startSystem(ctx context.Context) (*benchSystem, error) {
	return startSystemWith(ctx, systemOptions{})
}

// startSystemWith builds the binaries, starts Postgres (and Redis), seeds
// the demo site with the plan asked for and starts the origin and the
// edges. close undoes all of it.
func startSystemWith(ctx context.Context, o systemOptions) (s *benchSystem, err error) {
	if o.Edges == 0 {
		o.Edges = 1
	}
	if o.Origins == 0 {
		o.Origins = 1
	}
	if o.Edges < 1 || o.Edges > 2 || o.Origins < 1 || o.Origins > 2 {
		return nil, fmt.Errorf("bench: %d edges and %d origins (want 1 or 2 of each)", o.Edges, o.Origins)
	}
	if o.Plan == "" {
		o.Plan = model.Enterprise
	}
	s = &benchSystem{plan: o.Plan}
	// How long each step took, for the line below: the plans count on
	// systemSetup.
	t0, last := time.Now(), time.Now()
	var steps []string
	step := func(name string) {
		steps = append(steps, fmt.Sprintf("%s %v", name, time.Since(last).Round(10*time.Millisecond)))
		last = time.Now()
	}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	if s.dir, err = os.MkdirTemp("", "listgate-bench-"); err != nil {
		return nil, err
	}
	if s.originBin, s.edgeBin, err = binaries(); err != nil {
		return nil, err
	}
	if o.EdgeConfig != "" {
		path := filepath.Join(s.dir, "edge.yaml")
		if err := os.WriteFile(path, []byte(o.EdgeConfig), 0o600); err != nil {
			return nil, err
		}
		s.edgeArgs = []string{"-config", path}
	}
	if o.OriginConfig != "" {
		path := filepath.Join(s.dir, "origin.yaml")
		if err := os.WriteFile(path, []byte(o.OriginConfig), 0o600); err != nil {
			return nil, err
		}
		s.originArgs = []string{"-config", path}
	}
	if o.Webhooks {
		s.webhookEnv = []string{"LISTGATE_SECRET_KEY=" + webhook.NewMasterKey(), "LISTGATE_WEBHOOK_ALLOW_TARGETS=loopback"}
	}
	step("binaries")
	if s.pg, err = runPostgres(ctx); err != nil {
		return nil, err
	}
	step("Postgres")
	s.dbURL = s.pg.DatabaseURL("bench")
	demo, err := s.freshDatabase(ctx)
	if err != nil {
		return nil, err
	}
	s.siteID = demo.Site.ID
	s.readKey, s.readKeyID = demo.ReadKey.Key, demo.ReadKey.ID
	s.leadKey, s.leadKeyID = demo.LeadKey.Key, demo.LeadKey.ID
	if err := s.cli(ctx, nil, "sites", "set-plan", s.siteID, string(o.Plan)); err != nil {
		return nil, err
	}
	step("database and demo site")
	if o.Redis {
		if s.redis, err = devdb.StartRedis(ctx); err != nil {
			return nil, err
		}
	}
	for i := range o.Origins {
		if err := s.startOrigin(i, "127.0.0.1:0"); err != nil {
			return nil, err
		}
	}
	redisURL := ""
	if s.redis != nil {
		redisURL = s.redis.URL
	}
	for range o.Edges {
		if _, err := s.addEdge(redisURL, o.Edges); err != nil {
			return nil, err
		}
	}
	step("processes")
	fmt.Printf("bench: system up in %v (%s)\n", time.Since(t0).Round(10*time.Millisecond), strings.Join(steps, ", "))
	return s, nil
}

// The run's Postgres cluster, started by the first system and kept until
// the run ends (closePostgres). Every system gets a database "bench" of its
// own, dropped when it closes: the first one migrated and seeded with the
// demo site, which is then kept as the template "bench_template" that
// every later system's database is copied from. A new cluster, schema and
// demo site took 3–10 s a system (initdb and start-up most of it, longer
// the busier the machine); a copy of the template takes a fraction of a
// second. The demo site, its id and its keys are the same in every copy.
var cluster struct {
	pg   *devdb.Postgres
	demo *demoSeed // the template's demo site; nil until it exists
}

// demoSeed is what `origin seed demo --json` prints.
type demoSeed struct {
	Site    struct{ ID string }
	ReadKey struct{ ID, Key string } `json:"read_key"`
	LeadKey struct{ ID, Key string } `json:"lead_key"`
}

// runPostgres returns the run's cluster, starting it on the first call,
// and starting it again when it does not answer (a drill that stopped it
// and failed before its restart).
func runPostgres(ctx context.Context) (*devdb.Postgres, error) {
	if cluster.pg == nil {
		pg, err := startBenchPostgres(ctx)
		if err != nil {
			return nil, err
		}
		cluster.pg = pg
		return pg, nil
	}
	if err := pgExec(ctx, cluster.pg.URL, "SELECT 1"); err != nil {
		if err := cluster.pg.Restart(ctx); err != nil {
			return nil, fmt.Errorf("the run's Postgres does not answer and did not restart: %w", err)
		}
	}
	return cluster.pg, nil
}

// closePostgres stops the run's cluster and removes its files.
func closePostgres() {
	if cluster.pg != nil {
		cluster.pg.Close()
		cluster.pg, cluster.demo = nil, nil
	}
}

// freshDatabase makes the system's database "bench": on the run's first
// system, a new one migrated and seeded, and then copied as the template;
// afterwards a new copy of the template.
func (s *benchSystem) freshDatabase(ctx context.Context) (demoSeed, error) {
	if cluster.demo != nil {
		if err := pgExec(ctx, s.pg.URL, "DROP DATABASE IF EXISTS bench WITH (FORCE)"); err != nil {
			return demoSeed{}, err
		}
		if err := pgExec(ctx, s.pg.URL, "CREATE DATABASE bench TEMPLATE bench_template"); err != nil {
			return demoSeed{}, err
		}
		return *cluster.demo, nil
	}
	for _, sql := range []string{"DROP DATABASE IF EXISTS bench WITH (FORCE)", "DROP DATABASE IF EXISTS bench_template", "CREATE DATABASE bench"} {
		if err := pgExec(ctx, s.pg.URL, sql); err != nil {
			return demoSeed{}, err
		}
	}
	if err := s.cli(ctx, nil, "migrate"); err != nil {
		return demoSeed{}, err
	}
	var demo demoSeed
	if err := s.cli(ctx, &demo, "seed", "demo", "--json"); err != nil {
		return demoSeed{}, err
	}
	if err := pgExec(ctx, s.pg.URL, "CREATE DATABASE bench_template TEMPLATE bench"); err != nil {
		return demoSeed{}, err
	}
	cluster.demo = &demo
	return demo, nil
}

// dropDatabase drops the system's database, ending any session still on
// it, so that the next system starts on a new copy and nothing of this
// one (autovacuum of its tables) runs beside it.
func (s *benchSystem) dropDatabase() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := pgExec(ctx, s.pg.URL, "DROP DATABASE IF EXISTS bench WITH (FORCE)"); err != nil {
		fmt.Fprintf(os.Stderr, "bench: dropping the system's database: %v\n", err)
	}
}

// pgExec runs one statement on the cluster at url, on a connection of its
// own.
func pgExec(ctx context.Context, url, sql string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		return fmt.Errorf("%s: %w", sql, err)
	}
	return nil
}

// startOrigin starts origin i on addr and remembers the address it got.
func (s *benchSystem) startOrigin(i int, addr string) error {
	env := append([]string{"LISTGATE_DATABASE_URL=" + s.dbURL, "LISTGATE_INTERNAL_TOKEN=" + benchToken,
		"LISTGATE_ORIGIN_ADDR=" + addr}, s.webhookEnv...)
	p, err := devproc.Start(s.originBin, devproc.Options{Args: append([]string{"serve"}, s.originArgs...), Env: env})
	if err != nil {
		return err
	}
	if i == len(s.origins) {
		s.origins, s.originAddrs = append(s.origins, nil), append(s.originAddrs, "")
	}
	s.origins[i], s.originAddrs[i] = p, p.Addr
	s.origin, s.originAddr = s.origins[0], s.originAddrs[0]
	return nil
}

// originURLs is every edge's LISTGATE_ORIGIN_URL.
func (s *benchSystem) originURLs() string {
	urls := make([]string, len(s.originAddrs))
	for i, a := range s.originAddrs {
		urls[i] = "http://" + a
	}
	return strings.Join(urls, ",")
}

// addEdge starts one more edge in front of the origin: with the Redis
// limiter at redisURL when it is not empty (expected edges sharing it),
// else with the in-process limiter; extraEnv adds to its environment.
func (s *benchSystem) addEdge(redisURL string, expected int, extraEnv ...string) (*devproc.Process, error) {
	env := []string{"LISTGATE_INTERNAL_TOKEN=" + benchToken, "LISTGATE_EDGE_ADDR=127.0.0.1:0",
		"LISTGATE_EDGE_ADMIN_ADDR=127.0.0.1:0", "LISTGATE_ORIGIN_URL=" + s.originURLs()}
	env = append(env, extraEnv...)
	if redisURL != "" {
		env = append(env, "LISTGATE_REDIS_URL="+redisURL, "LISTGATE_EXPECTED_EDGES="+strconv.Itoa(max(expected, 1)))
	}
	e, err := devproc.Start(s.edgeBin, devproc.Options{Env: env, Args: s.edgeArgs})
	if err != nil {
		return nil, err
	}
	s.edges = append(s.edges, e)
	if s.edge == nil {
		s.edge = e
	}
	return e, nil
}

// edgeURLs returns the base URLs of the edges, in start order.
func (s *benchSystem) edgeURLs() []string {
	urls := make([]string, len(s.edges))
	for i, e := range s.edges {
		urls[i] = e.URL()
	}
	return urls
}

// edgeAdminURLs are the edges' admin listeners (their /metrics), in the
// order of edgeURLs.
func (s *benchSystem) edgeAdminURLs() []string {
	urls := make([]string, len(s.edges))
	for i, e := range s.edges {
		urls[i] = e.AdminURL()
	}
	return urls
}

// cli runs an origin admin command on the system's database.
func (s *benchSystem) cli(ctx context.Context, dst any, args ...string) error {
	return cliEnv(ctx, s.originBin, append([]string{"LISTGATE_DATABASE_URL=" + s.dbURL}, s.webhookEnv...), dst, args...)
}

// createWebhook registers a webhook endpoint for the demo site's
// lead.created events at url (`origin webhooks create`) and returns its id
// and signing secret. The system needs systemOptions.Webhooks.
func (s *benchSystem) createWebhook(ctx context.Context, url string) (id, secret string, err error) {
	if s.webhookEnv == nil {
		return "", "", fmt.Errorf("bench: createWebhook on a system started without systemOptions.Webhooks")
	}
	var w struct{ ID, Secret string }
	if err := s.cli(ctx, &w, "webhooks", "create", "--site", s.siteID, "--url", url, "--events", "lead.created", "--json"); err != nil {
		return "", "", err
	}
	if w.ID == "" || w.Secret == "" {
		return "", "", fmt.Errorf("origin webhooks create printed no id or secret")
	}
	return w.ID, w.Secret, nil
}

// newSite creates a site on plan and a key of it with scopes; a new site
// starts every rate-limit window at zero.
func (s *benchSystem) newSite(ctx context.Context, plan model.Plan, scopes string) (site, keyID, key string, err error) {
	var st struct{ ID string }
	if err := s.cli(ctx, &st, "sites", "create", "--name", "Bench "+string(plan), "--plan", string(plan), "--json"); err != nil {
		return "", "", "", err
	}
	keyID, key, err = s.newKey(ctx, st.ID, scopes)
	return st.ID, keyID, key, err
}

// newKey creates a key of site with scopes (comma-separated).
func (s *benchSystem) newKey(ctx context.Context, site, scopes string) (id, key string, err error) {
	var k struct{ ID, Key string }
	err = s.cli(ctx, &k, "keys", "create", "--site", site, "--name", "bench", "--scopes", scopes, "--json")
	return k.ID, k.Key, err
}

// killOrigin kills the origin with SIGKILL, as a crash would, and returns
// once it is gone.
func (s *benchSystem) killOrigin() { s.origin.Kill() }

// restartOrigin starts the origin again on the address it had, where the
// edges look for it, and returns once it listens.
func (s *benchSystem) restartOrigin() error { return s.restartOriginAt(0) }

// restartOriginAt starts origin i again on the address it had.
func (s *benchSystem) restartOriginAt(i int) error {
	if err := s.startOrigin(i, s.originAddrs[i]); err != nil {
		return fmt.Errorf("restart origin on %s: %w", s.originAddrs[i], err)
	}
	return nil
}

// stopPostgres shuts Postgres down (fast shutdown) keeping its data.
func (s *benchSystem) stopPostgres() { s.pg.Stop() }

// restartPostgres starts Postgres again on the same data and port and
// returns once it answers.
func (s *benchSystem) restartPostgres(ctx context.Context) error { return s.pg.Restart(ctx) }

// killRedis kills the Redis server with SIGKILL.
func (s *benchSystem) killRedis() { s.redis.Kill() }

// killEdge kills edge i with SIGKILL and returns once it is gone.
func (s *benchSystem) killEdge(i int) { s.edges[i].Kill() }

func (s *benchSystem) close() {
	for _, e := range s.edges {
		e.Stop()
	}
	for _, o := range s.origins {
		o.Stop()
	}
	if s.redis != nil {
		s.redis.Close()
	}
	if s.pg != nil {
		s.dropDatabase()
	}
	if s.dir != "" {
		os.RemoveAll(s.dir)
	}
}
