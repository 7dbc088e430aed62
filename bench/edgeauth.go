package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

func init() { scenarios["edge-auth"] = benchEdgeAuth }

// benchEdgeAuth measures, with wrk on loopback, authenticated reads the
// edge forwards to the origin (every request a cache miss: a new page
// number each time) and rejections of bad keys: malformed keys (refused
// offline) and well-formed unknown keys (refused from the negative cache).
func benchEdgeAuth(args []string) error {
	fs := flag.NewFlagSet("edge-auth", flag.ContinueOnError)
	dur := fs.Duration("duration", 8*time.Second, "duration of each wrk run")
	conns := fs.Int("connections", 64, "wrk connections")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "listgate-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	originBin, edgeBin, err := binaries(dir)
	if err != nil {
		return err
	}
	pg, err := startBenchPostgres(ctx)
	if err != nil {
		return err
	}
	defer pg.Close()
	dbURL := pg.DatabaseURL("bench")
	if err := cli(ctx, originBin, dbURL, nil, "migrate"); err != nil {
		return err
	}
	var demo struct {
		Site    struct{ ID string }
		ReadKey struct{ Key string } `json:"read_key"`
	}
	if err := cli(ctx, originBin, dbURL, &demo, "seed", "demo", "--json"); err != nil {
		return err
	}
	if err := cli(ctx, originBin, dbURL, nil, "sites", "set-plan", demo.Site.ID, "enterprise"); err != nil {
		return err
	}
	const token = "bench-internal-token-0123456789abcdef0123"
	origin, err := startProcess(originBin, []string{"LISTGATE_DATABASE_URL=" + dbURL,
		"LISTGATE_INTERNAL_TOKEN=" + token, "LISTGATE_ORIGIN_ADDR=127.0.0.1:0"}, "serve")
	if err != nil {
		return err
	}
	defer origin.stop()
	edge, err := startProcess(edgeBin, []string{"LISTGATE_INTERNAL_TOKEN=" + token, "LISTGATE_EDGE_ADDR=127.0.0.1:0",
		"LISTGATE_ORIGIN_URL=http://" + origin.addr})
	if err != nil {
		return err
	}
	defer edge.stop()

	// Every request a new page past the end: authenticated, forwarded, an
	// empty page from Postgres.
	script := filepath.Join(dir, "miss.lua")
	os.WriteFile(script, []byte(fmt.Sprintf(`counter = 0
request = function()
  counter = counter + 1
  return wrk.format("GET", "/v1/sites/%s/agents?page=" .. (1000 + (counter %% 9000)) .. "&per_page=" .. (1 + math.random(99)))
end
`, demo.Site.ID)), 0o644)
	base := "http://" + edge.addr
	runs := []struct {
		name, url string
		headers   []string
		script    string
	}{
		{"forwarded-read", base, []string{"Authorization: Bearer " + demo.ReadKey.Key}, script},
		{"401-malformed", base + "/v1/sites/" + demo.Site.ID + "/listings", []string{"Authorization: Bearer lgk_not-a-key"}, ""},
		{"401-unknown", base + "/v1/sites/" + demo.Site.ID + "/listings", []string{"Authorization: Bearer " + mustUnknownKey()}, ""},
	}
	results := map[string]wrkResult{}
	fmt.Printf("edge-auth: wrk -t2 -c%d -d%v\n", *conns, *dur)
	for _, r := range runs {
		headers := r.headers
		res, err := runWrkScript(ctx, r.name, r.url, *dur, *conns, headers, r.script)
		if err != nil {
			return err
		}
		fmt.Printf("edge-auth: %s\n", res)
		results[r.name] = res
	}
	return writeResults("edge-auth", map[string]any{"connections": *conns, "duration_s": dur.Seconds(), "results": results})
}
