package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/reuseport"

	"github.com/listgate/listgate/pkg/config"
	"github.com/listgate/listgate/pkg/devdb"
)

func init() {
	scenarios["edge-hit"] = benchEdgeHit
	plans["edge-hit"] = func(q bool) time.Duration {
		d, r, l := 4*time.Second, 4, 6*time.Second
		if q {
			d, r, l = 2*time.Second, 1, time.Second
		}
		// wrk: five targets per round; open model: three targets, then
		// the edge and the bare handler in rounds at 50 %.
		h, hd := 3, 4*time.Second
		if q {
			h, hd = 1, time.Second
		}
		return systemSetup + time.Duration(5*r)*d + latencyPlan(3, l) + time.Duration(2*h)*(hd+time.Second)
	}
}

// benchEdgeHit compares a cached ~10 KB listing page through the whole edge
// path (auth, scope, limit on an Enterprise site, cache) with nginx serving
// the identical bytes as a static file, with a bare fasthttp handler
// answering the same bytes (the server the edge is built on, doing nothing
// else: what is left of the gap to nginx is the edge's own work), and with
// the origin answering the same page from Postgres: same wrk settings,
// same run, alternating. Then
// the edge and the origin at fixed rates (open model) for their latency.
func benchEdgeHit(args []string) error {
	fs := flag.NewFlagSet("edge-hit", flag.ContinueOnError)
	dur := fs.Duration("duration", def(4*time.Second, 2*time.Second), "duration of each wrk run")
	conns := fs.Int("connections", 64, "wrk connections")
	rounds := fs.Int("rounds", def(4, 1), "alternating rounds")
	latDur := fs.Duration("latency-duration", def(6*time.Second, time.Second), "duration of each fixed-rate run (0: none)")
	halfRounds := fs.Int("latency-rounds", def(3, 1), "alternating rounds of the edge and the bare handler at 50 % of the edge's maximum")
	halfDur := fs.Duration("latency-round-duration", def(4*time.Second, time.Second), "duration of each of those rounds' runs")
	if err := fs.Parse(args); err != nil {
		return err
	}
	for _, tool := range []string{"wrk", "nginx"} {
		if _, err := exec.LookPath(tool); err != nil {
			if _, err := os.Stat("/usr/sbin/" + tool); err != nil {
				return fmt.Errorf("%s is not installed (apt-get install wrk nginx-light)", tool)
			}
		}
	}
	ctx := context.Background()
	sys, err := startSystem(ctx)
	if err != nil {
		return err
	}
	defer sys.close()
	origin, edge := sys.origin, sys.edge

	// About 10 KB: a page of listings with their agents and media.
	path := "/v1/sites/" + sys.siteID + "/listings?per_page=4"
	page, err := fetch(edge.URL()+path, "Bearer "+sys.readKey)
	if err != nil {
		return err
	}
	if again, err := fetch(edge.URL()+path, "Bearer "+sys.readKey); err != nil || again != page {
		return fmt.Errorf("the edge did not serve the same page twice (%v)", err)
	}
	nginx, err := startNginx(sys.dir, []byte(page), "Bearer "+sys.readKey)
	if err != nil {
		return err
	}
	defer nginx.stop()
	addBlock("edge-hit", "nginx's configuration (the yardstick as a careful operator runs it: a worker per core, "+
		"a `reuseport` listener each, keep-alive as the edge's, the key checked in a `map`):", nginx.conf)
	bare, err := startBareFasthttp([]byte(page), 1)
	if err != nil {
		return err
	}
	defer bare.stop()
	// fasthttp's best: a SO_REUSEPORT listener per core, each served by
	// its own goroutine, so the kernel spreads connections evenly.
	bareRP, err := startBareFasthttp([]byte(page), runtime.NumCPU())
	if err != nil {
		return err
	}
	defer bareRP.stop()

	originHeaders := originIdentity(sys)
	targets := []struct {
		name, url string
		headers   []string
	}{
		{"edge-hit", edge.URL() + path, []string{"Authorization: Bearer " + sys.readKey}},
		{"nginx-static", "http://" + nginx.addr + "/page.json", []string{"Authorization: Bearer " + sys.readKey}},
		{"fasthttp-static", "http://" + bare.addr + "/page.json", nil},
		{"fasthttp-reuseport", "http://" + bareRP.addr + "/page.json", nil},
		{"origin-direct", origin.URL() + path, originHeaders},
	}
	fmt.Printf("edge-hit: %d-byte listing page, wrk -t2 -c%d -d%v, %d alternating rounds\n", len(page), *conns, *dur, *rounds)
	best := map[string]wrkResult{}
	// Each round's ratios, the edge against the targets run next to it: on
	// a shared machine their median moves less than the best rounds' ratio.
	var overNginx, overBare []float64
	for round := 1; round <= *rounds; round++ {
		rps := map[string]float64{}
		for _, t := range targets {
			r, err := runWrk(ctx, t.name, t.url, *dur, *conns, t.headers)
			if err != nil {
				return err
			}
			fmt.Printf("edge-hit: round %d  %s\n", round, r)
			rps[t.name] = r.RPS
			if r.RPS > best[t.name].RPS {
				best[t.name] = r
			}
			if r.Non2xx > 0 {
				return fmt.Errorf("%s: %d of %d answers were not 2xx", t.name, r.Non2xx, r.Requests)
			}
		}
		overNginx = append(overNginx, rps["edge-hit"]/rps["nginx-static"])
		overBare = append(overBare, rps["edge-hit"]/max(rps["fasthttp-static"], rps["fasthttp-reuseport"]))
	}
	e, n, o := best["edge-hit"], best["nginx-static"], best["origin-direct"]
	// The bare fasthttp yardstick is the better of its two configurations.
	f, fRP := best["fasthttp-static"], best["fasthttp-reuseport"]
	bareTarget := 2
	if fRP.RPS > f.RPS {
		f, bareTarget = fRP, 3
	}
	summarize("edge-hit", "best of %d wrk rounds (-c%d -d%v): edge %s req/s, nginx %s, bare fasthttp %s, origin-direct %s; edge/nginx = %s, edge/bare fasthttp = %s, bare fasthttp/nginx = %s, edge/origin-direct = %s",
		*rounds, *conns, *dur, fmtRate(e.RPS), fmtRate(n.RPS), fmtRate(f.RPS), fmtRate(o.RPS), fmtRatio(e.RPS/n.RPS),
		fmtRatio(e.RPS/f.RPS), fmtRatio(f.RPS/n.RPS), fmtRatio(e.RPS/o.RPS))
	summarize("edge-hit", "median of the %d rounds' own ratios: edge/nginx = %s, edge/bare fasthttp = %s",
		*rounds, fmtRatio(median(overNginx)), fmtRatio(median(overBare)))
	addTable("edge-hit", wrkTable(fmt.Sprintf("A %d-byte listing page, `wrk -t2 -c%d -d%v`, best of %d alternating rounds:", len(page), *conns, *dur, *rounds),
		[]wrkResult{e, n, best["fasthttp-static"], best["fasthttp-reuseport"], o}, 0))
	addBars("edge-hit", barChart{Name: "throughput", Title: fmt.Sprintf("Cached listing page (%d bytes), wrk -c%d", len(page), *conns),
		Unit: "requests/s", Ref: 0, Bars: []chartBar{{"edge-hit", e.RPS}, {"nginx-static", n.RPS}, {"fasthttp-static", best["fasthttp-static"].RPS},
			{"fasthttp-reuseport", best["fasthttp-reuseport"].RPS}, {"origin-direct", o.RPS}}})
	data := map[string]any{
		"page_bytes": len(page), "connections": *conns, "duration_s": dur.Seconds(), "rounds": *rounds,
		"best": best, "edge_over_nginx": e.RPS / n.RPS, "edge_over_origin": e.RPS / o.RPS,
		"edge_over_bare_fasthttp": e.RPS / f.RPS, "bare_fasthttp_over_nginx": f.RPS / n.RPS,
		"edge_over_nginx_rounds": overNginx, "edge_over_bare_fasthttp_rounds": overBare,
		"edge_over_nginx_median": median(overNginx), "edge_over_bare_fasthttp_median": median(overBare),
	}
	writeResults("edge-hit", data)
	if *latDur <= 0 {
		return nil
	}

	// Open model: the maximum with this Go client (closed loop, as many
	// clients as wrk had connections), then 25/50/75 % of it. The bare
	// fasthttp handler is sent the edge's rates: it answers in microseconds,
	// so where its latency climbs too the generator, not the edge, is what
	// saturated.
	var series []latencySeries
	var halfTargets []latencyTarget // the edge's and the bare handler's, for the rounds at 50 %
	for _, t := range []struct {
		name, url string
		headers   []string
	}{targets[0], targets[bareTarget], targets[len(targets)-1]} {
		h := http.Header{}
		for _, kv := range t.headers {
			k, v, _ := strings.Cut(kv, ": ")
			h.Set(k, v)
		}
		// The page as wrk fetches it, uncompressed, from every target: Go's
		// client would otherwise ask for gzip, and the edge (alone of the
		// three) would answer it, leaving the generator to inflate each
		// answer on the cores the edge needs — the generator's work per
		// request must be the same for every target.
		h.Set("Accept-Encoding", "identity")
		if len(halfTargets) < 2 {
			halfTargets = append(halfTargets, staticTarget(t.name, t.url, h))
		}
		if strings.HasPrefix(t.name, "fasthttp-") {
			s := openModel(ctx, staticTarget(t.name, t.url, h), series[0].MaxRPS, "the edge's maximum (a check of the generator)", *latDur)
			series = append(series, s)
			if err := checkLatency(s); err != nil {
				return err
			}
			continue
		}
		maxDur := max(*latDur/2, time.Second)
		res := closedLoop(ctx, *conns, maxDur, 10_000_000, func(int) *http.Request {
			req, _ := http.NewRequest("GET", t.url, nil)
			req.Header = h.Clone()
			return req
		}, nil)
		fmt.Printf("edge-hit: closed-loop maximum %-14s %s\n", t.name, res)
		if res.Requests == 0 || res.Statuses[200] != res.Requests {
			return fmt.Errorf("%s: closed loop: %s", t.name, res)
		}
		s := openModel(ctx, staticTarget(t.name, t.url, h), res.rps(), fmt.Sprintf("Go closed loop, %d clients, %v", *conns, maxDur), *latDur)
		series = append(series, s)
		if err := checkLatency(s); err != nil {
			return err
		}
	}
	addLatency("edge-hit", latencyChart{Name: "latency", Title: "Listing page: edge (cache hit), bare fasthttp at the edge's rates, origin direct", Series: series})
	for _, s := range series {
		p := s.Points[len(s.Points)-1]
		summarize("edge-hit", "open model %s at 75%% of %s req/s: p50 %s, p99 %s, p99.9 %s, success %.2f %%",
			s.Target, fmtRate(s.MaxRPS), fmtMs(p.P50), fmtMs(p.P99), fmtMs(p.P999), 100*p.Success)
	}
	// Issue #21's latency goal: at 50 % of the edge's closed-loop maximum,
	// the edge's p99 within twice the bare handler's at the same rate, each
	// beside the generator's own send lag. One run of each (the series
	// above) is at the mercy of a few seconds' stall of a shared machine
	// (its p99 has come out 0.08 and 4.5 times the other's in two runs an
	// hour apart), so the two also alternate at that rate for
	// halfRounds rounds, which goes first alternating too, and the ratio
	// is the median of the rounds' own.
	if len(series) >= 2 && len(series[0].Points) >= 2 && len(halfTargets) == 2 {
		rate := series[0].Points[1].OfferedRPS
		var ratios []float64
		var rows [][]string
		for round := range *halfRounds {
			var pts [2]latencyPoint
			for k := range 2 {
				i := k ^ (round & 1)
				pts[i] = fixedRate(ctx, halfTargets[i], rate, *halfDur, 0.5)
			}
			if pts[0].Requests == 0 || pts[1].Requests == 0 || pts[1].P99 == 0 {
				return fmt.Errorf("latency round %d at %.0f req/s: no answers", round+1, rate)
			}
			r := pts[0].P99 / pts[1].P99
			ratios = append(ratios, r)
			rows = append(rows, []string{fmt.Sprint(round + 1), fmtMs(pts[0].P99), fmtMs(pts[0].SendLagP99),
				fmtMs(pts[1].P99), fmtMs(pts[1].SendLagP99), fmtRatio(r)})
		}
		ratio := median(ratios)
		var each []string
		for _, r := range ratios {
			each = append(each, fmtRatio(r))
		}
		summarize("edge-hit", "latency at 50%% of the edge's maximum (%s req/s offered), %d alternating rounds of %v: edge p99 / bare fasthttp p99 = %s, the median of the rounds' %s (goal ≤ 2)",
			fmtRate(rate), *halfRounds, *halfDur, fmtRatio(ratio), strings.Join(each, " "))
		addTable("edge-hit", reportTable{Title: fmt.Sprintf("At 50 %% of the edge's maximum (%s req/s offered), the edge and the bare fasthttp handler alternating, %v each (send lag: the generator's own lateness at the 99th percentile):", fmtRate(rate), *halfDur),
			Header: []string{"round", "edge p99", "send lag p99", "bare p99", "send lag p99", "edge / bare"}, Rows: rows})
		data["p99_at_half_edge_over_bare"] = ratio
		data["p99_at_half_edge_over_bare_rounds"] = ratios
	}
	data["latency"] = series
	return writeResults("edge-hit", data)
}

// wrkTable is a table of wrk runs, with each run's ratio to runs[ref].
func wrkTable(title string, runs []wrkResult, ref int) reportTable {
	t := reportTable{Title: title, Header: []string{"target", "requests/s", "p50", "p99", "requests", "non-2xx", "ratio"}}
	for i, r := range runs {
		ratio := "—"
		if i != ref && r.RPS > 0 {
			ratio = fmt.Sprintf("%s / %s = **%s**", runs[ref].Name, r.Name, fmtRatio(runs[ref].RPS/r.RPS))
		}
		t.Rows = append(t.Rows, []string{r.Name, fmtRate(r.RPS), fmtMs(r.Latency["p50"]), fmtMs(r.Latency["p99"]),
			fmtRate(float64(r.Requests)), fmt.Sprint(r.Non2xx), ratio})
	}
	return t
}

func fetch(url, auth string) (string, error) {
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", auth)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return "", fmt.Errorf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	return string(b), err
}

// nginxProcess serves one static file on a free loopback port.
type nginxProcess struct {
	cmd  *exec.Cmd
	addr string
	conf string // its configuration, for the report
}

// startNginx serves body at /page.json to requests whose Authorization
// header is auth (others get 401), as an operator would tune nginx for
// the job: a worker per core, each with a SO_REUSEPORT listener of its
// own (without it one worker can take most of the connections), keep-alive
// as long as the edge's.
func startNginx(dir string, body []byte, auth string) (*nginxProcess, error) {
	bin, err := exec.LookPath("nginx")
	if err != nil {
		bin = "/usr/sbin/nginx"
	}
	// nginx's workers run as an unprivileged user when started as root:
	// they must be able to read the file.
	os.Chmod(dir, 0o755)
	root := filepath.Join(dir, "nginx")
	os.MkdirAll(filepath.Join(root, "html"), 0o755)
	os.MkdirAll(filepath.Join(root, "logs"), 0o755)
	if err := os.WriteFile(filepath.Join(root, "html", "page.json"), body, 0o644); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	conf := fmt.Sprintf(`daemon off;
worker_processes %[3]d;
error_log %[1]s/logs/error.log warn;
pid %[1]s/nginx.pid;
events { worker_connections 4096; }
http {
    access_log off;
    sendfile on;
    tcp_nopush on;
    tcp_nodelay on;
    open_file_cache max=1000 inactive=60s;
    open_file_cache_valid 60s;
    keepalive_requests 1000000;
    keepalive_timeout %[4]ds;
    default_type application/json;
    map_hash_bucket_size 256;
    map $http_authorization $key_ok {
        default 0;
        "%[5]s" 1;
    }
    client_body_temp_path %[1]s/tmp;
    proxy_temp_path %[1]s/tmp;
    fastcgi_temp_path %[1]s/tmp;
    uwsgi_temp_path %[1]s/tmp;
    scgi_temp_path %[1]s/tmp;
    server {
        listen 127.0.0.1:%[2]d reuseport;
        root %[1]s/html;
        etag on;
        location / {
            if ($key_ok = 0) { return 401; }
        }
    }
}
`, root, port, runtime.NumCPU(), int(config.DefaultEdge().IdleTimeout.Seconds()), auth)
	os.MkdirAll(filepath.Join(root, "tmp"), 0o755)
	confPath := filepath.Join(root, "nginx.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		return nil, err
	}
	p := &nginxProcess{cmd: exec.Command(bin, "-p", root, "-c", confPath, "-e", filepath.Join(root, "logs", "error.log")),
		addr: fmt.Sprintf("127.0.0.1:%d", port), conf: strings.ReplaceAll(conf, auth, "Bearer <the read key>")}
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if b, err := fetch("http://"+p.addr+"/page.json", auth); err == nil && b == string(body) {
			return p, nil
		}
		if time.Now().After(deadline) {
			p.stop()
			log, _ := os.ReadFile(filepath.Join(root, "logs", "error.log"))
			return nil, fmt.Errorf("nginx did not start: %s", log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (p *nginxProcess) stop() {
	p.cmd.Process.Signal(os.Interrupt)
	p.cmd.Wait()
}

func freePort() (int, error) { return devdb.FreePort() }

// bareServer is a fasthttp server in this process that answers every
// request with one page, as the edge's responses are typed.
type bareServer struct {
	*fasthttp.Server
	addr string
}

// stop shuts the server down, waiting at most two seconds: the open-model
// generator's idle keep-alive connections would hold Shutdown forever.
func (s *bareServer) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	s.ShutdownWithContext(ctx)
}

// startBareFasthttp serves page on a free loopback port: through one
// listener, or through n SO_REUSEPORT listeners (fasthttp's reuseport)
// served each by a goroutine of its own.
func startBareFasthttp(page []byte, n int) (*bareServer, error) {
	var lns []net.Listener
	if n <= 1 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		lns = append(lns, ln)
	} else {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		for range n {
			ln, err := reuseport.Listen("tcp4", fmt.Sprintf("127.0.0.1:%d", port))
			if err != nil {
				for _, l := range lns {
					l.Close()
				}
				return nil, err
			}
			lns = append(lns, ln)
		}
	}
	// The edge's buffer sizes, so edge/bare fasthttp measures the edge's
	// own per-request work.
	ec := config.DefaultEdge()
	s := &bareServer{Server: &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		ctx.Response.Header.SetContentType("application/json")
		ctx.Response.SetBodyRaw(page)
	}, NoDefaultServerHeader: true, ReadBufferSize: ec.MaxHeaderBytes, WriteBufferSize: ec.WriteBufferBytes}, addr: lns[0].Addr().String()}
	for _, ln := range lns {
		go s.Serve(ln)
	}
	return s, nil
}

// median is the middle of xs (the mean of the two middle ones for an even
// count); 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
