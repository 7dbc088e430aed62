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
	sys, err := startSystem(ctx)
	if err != nil {
		return err
	}
	defer sys.close()

	// Every request a new page past the end: authenticated, forwarded, an
	// empty page from Postgres.
	script := filepath.Join(sys.dir, "miss.lua")
	os.WriteFile(script, []byte(fmt.Sprintf(`counter = 0
request = function()
  counter = counter + 1
  return wrk.format("GET", "/v1/sites/%s/agents?page=" .. (1000 + (counter %% 9000)) .. "&per_page=" .. (1 + math.random(99)))
end
`, sys.siteID)), 0o644)
	base := sys.edge.URL()
	runs := []struct {
		name, url string
		headers   []string
		script    string
	}{
		{"forwarded-read", base, []string{"Authorization: Bearer " + sys.readKey}, script},
		{"origin-direct", sys.origin.URL(), []string{"X-Listgate-Internal-Token: " + benchToken,
			"X-Listgate-Site: " + sys.siteID, "X-Listgate-Key-Id: bench", "X-Listgate-Scopes: agents:read"}, script},
		{"401-malformed", base + "/v1/sites/" + sys.siteID + "/listings", []string{"Authorization: Bearer lgk_not-a-key"}, ""},
		{"401-unknown", base + "/v1/sites/" + sys.siteID + "/listings", []string{"Authorization: Bearer " + mustUnknownKey()}, ""},
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
