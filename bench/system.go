package main

import (
	"context"
	"os"

	"github.com/listgate/listgate/pkg/devdb"
	"github.com/listgate/listgate/pkg/devproc"
)

// benchToken is the internal token of the processes a benchmark starts.
const benchToken = "bench-internal-token-0123456789abcdef0123"

// benchSystem is a throwaway Postgres with the demo site on the Enterprise
// plan (no rate limit), and the origin and edge processes in front of it.
type benchSystem struct {
	dir          string
	pg           *devdb.Postgres
	origin, edge *devproc.Process
	siteID       string
	readKey      string
}

// startSystem builds the binaries, starts Postgres, seeds the demo site and
// starts the origin and the edge. close undoes all of it.
func startSystem(ctx context.Context) (s *benchSystem, err error) {
	s = &benchSystem{}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	if s.dir, err = os.MkdirTemp("", "listgate-bench-"); err != nil {
		return nil, err
	}
	originBin, edgeBin, err := binaries(s.dir)
	if err != nil {
		return nil, err
	}
	if s.pg, err = startBenchPostgres(ctx); err != nil {
		return nil, err
	}
	dbURL := s.pg.DatabaseURL("bench")
	if err := cli(ctx, originBin, dbURL, nil, "migrate"); err != nil {
		return nil, err
	}
	var demo struct {
		Site    struct{ ID string }
		ReadKey struct{ Key string } `json:"read_key"`
	}
	if err := cli(ctx, originBin, dbURL, &demo, "seed", "demo", "--json"); err != nil {
		return nil, err
	}
	s.siteID, s.readKey = demo.Site.ID, demo.ReadKey.Key
	if err := cli(ctx, originBin, dbURL, nil, "sites", "set-plan", s.siteID, "enterprise"); err != nil {
		return nil, err
	}
	if s.origin, err = devproc.Start(originBin, devproc.Options{Args: []string{"serve"}, Env: []string{
		"LISTGATE_DATABASE_URL=" + dbURL, "LISTGATE_INTERNAL_TOKEN=" + benchToken, "LISTGATE_ORIGIN_ADDR=127.0.0.1:0"}}); err != nil {
		return nil, err
	}
	if s.edge, err = devproc.Start(edgeBin, devproc.Options{Env: []string{"LISTGATE_INTERNAL_TOKEN=" + benchToken,
		"LISTGATE_EDGE_ADDR=127.0.0.1:0", "LISTGATE_ORIGIN_URL=" + s.origin.URL()}}); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *benchSystem) close() {
	if s.edge != nil {
		s.edge.Stop()
	}
	if s.origin != nil {
		s.origin.Stop()
	}
	if s.pg != nil {
		s.pg.Close()
	}
	if s.dir != "" {
		os.RemoveAll(s.dir)
	}
}
