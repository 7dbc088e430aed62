package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/listgate/listgate/origin/ingest"
	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/pkg/devdb"
	"github.com/listgate/listgate/pkg/model"
	"github.com/listgate/listgate/pkg/reaxml"
	"github.com/listgate/listgate/pkg/reaxml/reaxmlgen"
)

func init() {
	scenarios["ingest"] = benchIngest
	plans["ingest"] = func(q bool) time.Duration {
		if q {
			return 20 * time.Second
		}
		// 110,000 listings first imported, 100,000 again, and the COPY
		// (3 min 41 s on 965d392, of which about 30 s went to generating
		// the feeds, now cached between runs, and to parsing 100,000
		// listings alone, now 10,000).
		return 180 * time.Second
	}
}

// benchIngest measures REAXML imports into a throwaway Postgres from
// generated feeds on disk: listings parsed per second; a first import of a
// small and of a large feed, with the peak heap of each (it must not grow
// with the feed); an update feed re-sending the large one with a fraction
// changed; and, as the anchor, COPY of the rows the large import stored
// into bare tables (no index, constraint or generated column). Beside the
// wall clock it reports the CPU time a listing cost the importer's process
// (Go) and the Postgres cluster, which a shared machine's load moves far
// less. It checks that every listing is accounted for.
func benchIngest(args []string) error {
	fs := flag.NewFlagSet("ingest", flag.ContinueOnError)
	small := fs.Int("small", def(10000, 500), "listings in the small feed (first import, peak heap)")
	large := fs.Int("listings", def(100000, 3000), "listings in the large feed (first import, update feed, COPY)")
	changed := fs.Float64("changed", 0.05, "fraction of the large feed's listings its update feed changes")
	writers := fs.Int("writers", 0, "batches an import writes at once (0: the importer's default)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	feeds := map[string]reaxmlgen.Options{
		"small":  {Seed: 42, Listings: *small},
		"large":  {Seed: 43, Listings: *large},
		"update": {Seed: 43, Listings: *large, Revision: 1, Changed: *changed},
	}
	genStart := time.Now()
	paths, size, generated, err := cachedFeeds(feeds)
	if err != nil {
		return err
	}
	fmt.Printf("ingest: feeds ready in %v (%d generated, the others from the cache)\n", time.Since(genStart).Round(time.Millisecond), generated)
	open := func(name string) (*os.File, error) { return os.Open(paths[name]) }
	mib := func(n int64) float64 { return float64(n) / (1 << 20) }
	fmt.Printf("ingest: feeds of %d listings (%.1f MiB) and %d (%.1f MiB), and its update changing %.0f%%, on disk\n",
		*small, mib(size["small"]), *large, mib(size["large"]), *changed*100)

	// Parse only, the small feed: the rate per listing is the large one's
	// (the same generator), in a tenth of the time.
	f, err := open("small")
	if err != nil {
		return err
	}
	start := time.Now()
	parseCPU := processCPU(os.Getpid())
	dec := reaxml.NewDecoder(bufio.NewReaderSize(f, 1<<16), reaxml.Options{})
	parsed := 0
	for {
		_, err := dec.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		var le *reaxml.ListingError
		if err != nil && !errors.As(err, &le) {
			f.Close()
			return err
		}
		parsed++
	}
	parseDur := time.Since(start)
	parseCPU = processCPU(os.Getpid()) - parseCPU
	f.Close()

	ctx := context.Background()
	db, cleanup, err := benchDatabase(ctx)
	if err != nil {
		return err
	}
	defer cleanup()
	im := ingest.New(db, slog.New(slog.DiscardHandler))
	// CPU time, beside the wall clock: on a shared machine the time a
	// listing takes depends on the load, the CPU it costs much less.
	var postmaster int
	if err := db.Pool.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&postmaster); err != nil {
		return err
	}
	if postmaster, _, err = procStat(postmaster); err != nil {
		return err
	}
	type run struct {
		counts       ingest.Counts
		dur          time.Duration
		peak         uint64
		goCPU, pgCPU time.Duration
	}
	// importFeed imports a feed file into a site and samples the heap in
	// use after every batch, from a collected start.
	importFeed := func(siteID, name string) (run, error) {
		f, err := open(name)
		if err != nil {
			return run{}, err
		}
		defer f.Close()
		runtime.GC()
		var r run
		var ms runtime.MemStats
		start := time.Now()
		goCPU, pgCPU := processCPU(os.Getpid()), clusterCPU(postmaster)
		res, err := im.Import(ctx, siteID, f, ingest.Options{Writers: *writers, Progress: func(ingest.Counts, int64) {
			runtime.ReadMemStats(&ms)
			r.peak = max(r.peak, ms.HeapInuse)
		}})
		r.dur, r.counts = time.Since(start), res.Counts
		r.goCPU, r.pgCPU = processCPU(os.Getpid())-goCPU, clusterCPU(postmaster)-pgCPU
		if err == nil && res.Counts.Errors > 0 {
			err = fmt.Errorf("%d listing errors, first %+v", res.Counts.Errors, res.Errors[0])
		}
		return r, err
	}
	sites := map[string]string{}
	for _, name := range []string{"small", "large"} {
		site, err := db.CreateSite(ctx, "Bench Realty "+name, model.Enterprise, "")
		if err != nil {
			return err
		}
		sites[name] = site.ID
	}
	smallRun, err := importFeed(sites["small"], "small")
	if err != nil {
		return fmt.Errorf("small feed: %w", err)
	}
	largeRun, err := importFeed(sites["large"], "large")
	if err != nil {
		return fmt.Errorf("large feed: %w", err)
	}
	updateRun, err := importFeed(sites["large"], "update")
	if err != nil {
		return fmt.Errorf("update feed: %w", err)
	}
	copyDur, copyCPU, copied, err := copyAnchor(ctx, db, sites["large"], postmaster)
	if err != nil {
		return fmt.Errorf("COPY anchor: %w", err)
	}

	rate := func(n int, d time.Duration) float64 { return float64(n) / d.Seconds() }
	parseRate := rate(parsed, parseDur)
	smallRate, largeRate, updateRate := rate(*small, smallRun.dur), rate(*large, largeRun.dur), rate(*large, updateRun.dur)
	copyRate := rate(copied, copyDur)
	for _, l := range []struct {
		what string
		r    run
		n    int
	}{{"small first import", smallRun, *small}, {"large first import", largeRun, *large}, {"update feed", updateRun, *large}} {
		fmt.Printf("ingest: %-18s %8.0f listings/s  (%+v in %v), peak heap %.1f MiB; CPU a listing: %s in Go, %s in Postgres\n", l.what, rate(l.n, l.r.dur),
			l.r.counts, l.r.dur.Round(time.Millisecond), mib(int64(l.r.peak)), perListing(l.r.goCPU, l.n), perListing(l.r.pgCPU, l.n))
	}
	fmt.Printf("ingest: parse only %8.0f listings/s (%s CPU a listing); COPY of the %d listings' rows into bare tables %8.0f listings/s (%v, %s of Postgres CPU a listing)\n",
		parseRate, perListing(parseCPU, parsed), copied, copyRate, copyDur.Round(time.Millisecond), perListing(copyCPU, copied))
	summarize("ingest", "first import of %d listings %s listings/s (import / COPY = %s), of %d listings %s listings/s; "+
		"update feed (%.0f%% changed) %s listings/s; parse only %s listings/s; peak heap %.0f MiB (%d) and %.0f MiB (%d)",
		*large, fmtRate(largeRate), fmtRatio(largeRate/copyRate), *small, fmtRate(smallRate), *changed*100, fmtRate(updateRate),
		fmtRate(parseRate), mib(int64(smallRun.peak)), *small, mib(int64(largeRun.peak)), *large)
	row := func(what string, n int, r run, ratio string) []string {
		return []string{what, fmtRate(rate(n, r.dur)), r.dur.Round(time.Millisecond).String(), fmt.Sprintf("%.0f MiB", mib(int64(r.peak))),
			perListing(r.goCPU, n), perListing(r.pgCPU, n), ratio}
	}
	addTable("ingest", reportTable{
		Title:  fmt.Sprintf("Generated REAXML feeds read from disk: %d listings (%.1f MiB), %d (%.1f MiB), and the large one's update with %.0f%% changed:", *small, mib(size["small"]), *large, mib(size["large"]), *changed*100),
		Header: []string{"", "listings/s", "time", "peak heap", "Go CPU a listing", "Postgres CPU a listing", "ratio"},
		Rows: [][]string{
			{fmt.Sprintf("parse only (pkg/reaxml), %d listings", parsed), fmtRate(parseRate), parseDur.Round(time.Millisecond).String(), "", perListing(parseCPU, parsed), "", ""},
			row(fmt.Sprintf("first import, %d listings", *small), *small, smallRun, ""),
			row(fmt.Sprintf("first import, %d listings", *large), *large, largeRun, "import / COPY = **"+fmtRatio(largeRate/copyRate)+"**"),
			row(fmt.Sprintf("update feed, %d listings, %.0f%% changed", *large, *changed*100), *large, updateRun, "update / COPY = **"+fmtRatio(updateRate/copyRate)+"**"),
			{"COPY of the large import's rows into bare tables (anchor)", fmtRate(copyRate), copyDur.Round(time.Millisecond).String(), "", "", perListing(copyCPU, copied), ""},
		}})
	addBars("ingest", barChart{Name: "throughput", Title: fmt.Sprintf("REAXML ingest, %d listings", *large), Unit: "listings/s", Ref: 0,
		Bars: []chartBar{{"parse", parseRate}, {"first import", largeRate}, {"update feed", updateRate}, {"COPY (anchor)", copyRate}}})
	writeResults("ingest", map[string]any{"small": *small, "large": *large, "changed": *changed, "feed_bytes": size,
		"parse_per_second": parseRate, "small_import_per_second": smallRate, "import_per_second": largeRate,
		"update_per_second": updateRate, "copy_per_second": copyRate, "import_over_copy": largeRate / copyRate,
		"small_counts": smallRun.counts, "counts": largeRun.counts, "update_counts": updateRun.counts,
		"small_peak_heap_bytes": smallRun.peak, "peak_heap_bytes": largeRun.peak, "update_peak_heap_bytes": updateRun.peak,
		"parse_cpu_ns_per_listing":     parseCPU.Nanoseconds() / int64(max(parsed, 1)),
		"import_go_cpu_ns_per_listing": largeRun.goCPU.Nanoseconds() / int64(*large), "import_pg_cpu_ns_per_listing": largeRun.pgCPU.Nanoseconds() / int64(*large),
		"update_go_cpu_ns_per_listing": updateRun.goCPU.Nanoseconds() / int64(*large), "update_pg_cpu_ns_per_listing": updateRun.pgCPU.Nanoseconds() / int64(*large),
		"copy_pg_cpu_ns_per_listing": copyCPU.Nanoseconds() / int64(max(copied, 1))})

	// Every record accounted for (the generated feeds have a few status
	// stubs for listings the site never had: skipped), none an error; the
	// update feed changed what it says and left the rest unchanged.
	for _, c := range []struct {
		r run
		n int
	}{{smallRun, *small}, {largeRun, *large}} {
		if k := c.r.counts; k.Created+k.Skipped != c.n || k.Created == 0 || k.Errors != 0 {
			return fmt.Errorf("a first import of %d listings: %+v", c.n, k)
		}
	}
	if k := updateRun.counts; k.Updated == 0 || k.Created != 0 || k.Updated+k.Unchanged+k.Skipped != *large ||
		math.Abs(float64(k.Updated)/float64(*large)-*changed) > *changed/2 {
		return fmt.Errorf("an update feed of %d listings, %.0f%% changed: %+v", *large, *changed*100, k)
	}
	if copied != largeRun.counts.Created {
		return fmt.Errorf("COPY anchor copied %d listings, the import created %d", copied, largeRun.counts.Created)
	}
	return nil
}

// copyAnchor copies the rows an import stored for a site (listings without
// their search column, agents, listing_agents, media,
// inspections) into bare tables of the same columns, with COPY, and
// returns how long the COPY took, the Postgres CPU it cost and how many
// listings it copied.
func copyAnchor(ctx context.Context, db *store.DB, siteID string, postmaster int) (took, pgCPU time.Duration, listings int, err error) {
	tables := []struct{ table, cols string }{
		{"listings", `site_id, ref, agency_id, unique_id, type, status, under_offer, featured, category, headline,
			description, suburb, state, postcode, search_address, price, price_shown, bedrooms, bathrooms,
			car_spaces, doc, feed_mod_time, feed_hash, created_at, modified_at`},
		{"agents", `site_id, id, name, email, phone_mobile, phone_office, phone_ah, photo_url, links, created_at, updated_at`},
		{"listing_agents", `site_id, listing_ref, position, agent_id`},
		{"media", `site_id, id, listing_ref, kind, slot, url, format, position, modified_at`},
		{"inspections", `site_id, listing_ref, starts_at, ends_at`},
	}
	conn, err := db.Pool.Acquire(ctx)
	if err != nil {
		return 0, 0, 0, err
	}
	defer conn.Release()
	for _, t := range tables {
		bare := "bare_" + t.table
		if _, err := conn.Exec(ctx, `CREATE UNLOGGED TABLE IF NOT EXISTS `+bare+` AS SELECT `+t.cols+` FROM `+t.table+` WITH NO DATA`); err != nil {
			return 0, 0, 0, err
		}
		// The rows, read out of the database before the clock starts.
		var buf bytes.Buffer
		if _, err := conn.Conn().PgConn().CopyTo(ctx, &buf, `COPY (SELECT `+t.cols+` FROM `+t.table+` WHERE site_id = '`+siteID+`') TO STDOUT`); err != nil {
			return 0, 0, 0, err
		}
		start, cpu := time.Now(), clusterCPU(postmaster)
		tag, err := conn.Conn().PgConn().CopyFrom(ctx, &buf, `COPY `+bare+` FROM STDIN`)
		took += time.Since(start)
		pgCPU += clusterCPU(postmaster) - cpu
		if err != nil {
			return 0, 0, 0, err
		}
		if t.table == "listings" {
			listings = int(tag.RowsAffected())
		}
	}
	return took, pgCPU, listings, nil
}

// benchPostgresSettings size the bench's Postgres as an operator sizes one
// for its data. The bench's database holds about 1.2 GB (the large site's
// listings, their media, a week of views); with the development clusters'
// 128 MB of shared buffers, a read on the large site paid for reading its
// pages back from the kernel's cache (a third of a second's price summary
// read 20,624 blocks that way), a cost of the buffer pool's size, not of
// the site's, that the small site never paid. 2 GB holds it all, as a
// quarter of a server's memory would a production database's hot sites.
var benchPostgresSettings = []string{"shared_buffers=2GB"}

// startBenchPostgres starts a throwaway cluster with a database "bench".
func startBenchPostgres(ctx context.Context) (*devdb.Postgres, error) {
	pg, err := devdb.StartPostgres(ctx, devdb.PostgresOptions{Settings: benchPostgresSettings})
	if err != nil {
		return nil, err
	}
	conn, err := pgx.Connect(ctx, pg.URL)
	if err != nil {
		pg.Close()
		return nil, err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE bench"); err != nil {
		pg.Close()
		return nil, err
	}
	var version, fsync, syncCommit, buffers string
	if conn.QueryRow(ctx, `SELECT current_setting('server_version'), current_setting('fsync'), current_setting('synchronous_commit'),
			current_setting('shared_buffers')`).Scan(&version, &fsync, &syncCommit, &buffers) == nil {
		noteMachine("postgres", fmt.Sprintf("PostgreSQL %s (fsync=%s, synchronous_commit=%s: a throwaway cluster; shared_buffers=%s)",
			version, fsync, syncCommit, buffers))
	}
	return pg, nil
}

// cachedFeeds returns the files of the generated feeds, their sizes and how
// many had to be generated. Feeds are kept between runs in the user's cache
// directory (LISTGATE_BENCH_CACHE overrides it), under a key of the
// generator's output: a sample of a first feed and of an update is
// generated and hashed, so a change to the generator makes new feeds and
// an unchanged one reuses them. Feeds of other keys are removed.
func cachedFeeds(feeds map[string]reaxmlgen.Options) (map[string]string, map[string]int64, int, error) {
	dir := os.Getenv("LISTGATE_BENCH_CACHE")
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			base = os.TempDir()
		}
		dir = filepath.Join(base, "listgate-bench")
	}
	dir = filepath.Join(dir, "ingest-feeds")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, 0, err
	}
	h := sha256.New()
	for _, o := range []reaxmlgen.Options{{Seed: 1, Listings: 300}, {Seed: 1, Listings: 300, Revision: 1, Changed: 0.5}} {
		if err := reaxmlgen.Generate(h, o); err != nil {
			return nil, nil, 0, err
		}
	}
	key := hex.EncodeToString(h.Sum(nil))[:16]
	if old, err := filepath.Glob(filepath.Join(dir, "*.xml")); err == nil {
		for _, p := range old {
			if !strings.HasPrefix(filepath.Base(p), key+"-") {
				os.Remove(p)
			}
		}
	}
	paths, size := map[string]string{}, map[string]int64{}
	generated := 0
	for name, o := range feeds {
		p := filepath.Join(dir, fmt.Sprintf("%s-seed%d-n%d-rev%d-changed%g.xml", key, o.Seed, o.Listings, o.Revision, o.Changed))
		paths[name] = p
		if st, err := os.Stat(p); err == nil {
			size[name] = st.Size()
			continue
		}
		// Written under a temporary name and renamed once complete, so an
		// interrupted run leaves no truncated feed to be reused.
		tmp, err := os.CreateTemp(dir, "partial-*.xml")
		if err != nil {
			return nil, nil, 0, err
		}
		w := bufio.NewWriterSize(tmp, 1<<20)
		err = reaxmlgen.Generate(w, o)
		if err == nil {
			err = w.Flush()
		}
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(tmp.Name(), p)
		}
		if err != nil {
			os.Remove(tmp.Name())
			return nil, nil, 0, err
		}
		st, err := os.Stat(p)
		if err != nil {
			return nil, nil, 0, err
		}
		size[name] = st.Size()
		generated++
	}
	return paths, size, generated, nil
}

// procStat reads a process's parent and the CPU time (user and system) it
// and its waited-for children have used, from /proc/PID/stat.
func procStat(pid int) (ppid int, cpu time.Duration, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	// Fields count from after the command name (which may hold spaces),
	// the state being the first.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 15 {
		return 0, 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	ppid, _ = strconv.Atoi(f[1])
	var ticks int64
	for _, i := range []int{11, 12, 13, 14} { // utime, stime, cutime, cstime
		n, _ := strconv.ParseInt(f[i], 10, 64)
		ticks += n
	}
	return ppid, time.Duration(ticks) * 10 * time.Millisecond, nil
}

// processCPU is the CPU time a process has used so far.
func processCPU(pid int) time.Duration {
	_, cpu, _ := procStat(pid)
	return cpu
}

// clusterCPU is the CPU time a Postgres cluster has used so far: its
// postmaster's, its live processes' and those that ended (which the
// postmaster waited for).
func clusterCPU(postmaster int) time.Duration {
	total := processCPU(postmaster)
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, cpu, err := procStat(pid); err == nil && ppid == postmaster {
			total += cpu
		}
	}
	return total
}

// perListing is a CPU time spread over n listings, in µs.
func perListing(d time.Duration, n int) string {
	return fmt.Sprintf("%.0f µs", float64(d.Microseconds())/float64(max(n, 1)))
}
