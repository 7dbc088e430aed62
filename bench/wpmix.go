package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	json "github.com/goccy/go-json"
	vegeta "github.com/tsenart/vegeta/v12/lib"
)

func init() {
	scenarios["wordpress-mix"] = benchWordPressMix
	plans["wordpress-mix"] = func(q bool) time.Duration {
		d, l := 6*time.Second, 5*time.Second
		if q {
			d, l = 2*time.Second, time.Second
		}
		// Discovering the site's URLs and matching the leads to their rows
		// take about 5 s.
		return systemSetup + 5*time.Second + d + latencyPlan(1, l)
	}
}

// The request kinds of the mix, and their shares in per cent.
const (
	mixListPage = "listing-page"
	mixListing  = "listing"
	mixSearch   = "search"
	mixAgents   = "agents"
	mixLead     = "lead"
)

var mixShares = []struct {
	kind  string
	share int
}{{mixListPage, 70}, {mixListing, 15}, {mixSearch, 5}, {mixAgents, 5}, {mixLead, 5}}

// mixSite is what a WordPress site asks for: the URLs of each kind of read
// (paths under the edge), and the listing refs leads are about.
type mixSite struct {
	reads map[string][]string
	refs  []int64
}

// pick returns the kind of the next request, by the mix's shares, among
// the reads only when readsOnly (their shares scaled up).
func pickKind(r *rand.Rand, readsOnly bool) string {
	total := 100
	if readsOnly {
		total -= mixShares[len(mixShares)-1].share
	}
	n := r.IntN(total)
	for _, s := range mixShares {
		if n < s.share {
			return s.kind
		}
		n -= s.share
	}
	return mixListPage
}

// readPath returns a read of kind: listing pages favour page 1, as a
// site's visitors do.
func (m *mixSite) readPath(r *rand.Rand, kind string) string {
	ps := m.reads[kind]
	if kind == mixListPage && r.IntN(2) == 0 {
		return ps[0] // the first page of the default listing
	}
	return ps[r.IntN(len(ps))]
}

// discoverMix reads the demo site through the edge: its current listings
// and agents, and builds the URLs a WordPress site would ask for.
func discoverMix(sys *benchSystem) (*mixSite, error) {
	base := "/v1/sites/" + sys.siteID
	get := func(path string, dst any) error {
		body, err := fetch(sys.edge.URL()+path, "Bearer "+sys.readKey)
		if err != nil {
			return err
		}
		return json.Unmarshal([]byte(body), dst)
	}
	m := &mixSite{reads: map[string][]string{}}
	for page := 1; page <= 20; page++ {
		var p struct {
			Data []struct {
				Ref int64 `json:"listing_ref"`
			}
			Meta struct {
				TotalPages int `json:"total_pages"`
			}
		}
		if err := get(fmt.Sprintf("%s/listings?per_page=100&page=%d", base, page), &p); err != nil {
			return nil, err
		}
		for _, l := range p.Data {
			m.refs = append(m.refs, l.Ref)
			m.reads[mixListing] = append(m.reads[mixListing], fmt.Sprintf("%s/listings/%d", base, l.Ref))
		}
		if page >= p.Meta.TotalPages {
			break
		}
	}
	if len(m.refs) == 0 {
		return nil, fmt.Errorf("the demo site has no current listings")
	}
	// Listing pages of 12, as a theme shows them: the default order's
	// every page, and the first four pages of three other views.
	pages := (len(m.refs) + 11) / 12
	for p := 1; p <= pages; p++ {
		m.reads[mixListPage] = append(m.reads[mixListPage], fmt.Sprintf("%s/listings?per_page=12&page=%d", base, p))
	}
	for _, v := range []string{"type=residential", "sort=-price", "type=rental"} {
		for p := 1; p <= 4; p++ {
			m.reads[mixListPage] = append(m.reads[mixListPage], fmt.Sprintf("%s/listings?per_page=12&page=%d&%s", base, p, v))
		}
	}
	for _, q := range []string{"family home", "pool", "Bondi", "renovated", "beach", "garden", "apartment", "views", "Manly", "townhouse"} {
		m.reads[mixSearch] = append(m.reads[mixSearch], fmt.Sprintf("%s/listings/search?per_page=12&q=%s", base, url.QueryEscape(q)))
	}
	var agents struct {
		Data []struct {
			ID json.RawMessage `json:"agent_id"`
		}
	}
	if err := get(base+"/agents?per_page=100", &agents); err != nil {
		return nil, err
	}
	m.reads[mixAgents] = []string{base + "/agents"}
	for _, a := range agents.Data {
		id, err := strconv.Unquote(string(a.ID))
		if err != nil {
			id = string(a.ID)
		}
		m.reads[mixAgents] = append(m.reads[mixAgents], base+"/agents/"+url.PathEscape(id))
	}
	return m, nil
}

// mixStats counts a mix run's answers.
type mixStats struct {
	Requests  int                    `json:"requests"`
	Errors    int                    `json:"transport_errors"`
	ByKind    map[string]map[int]int `json:"statuses_by_kind"`
	Statuses  map[int]int            `json:"statuses"`
	Revalid   int                    `json:"sent_if_none_match"`
	DurationS float64                `json:"duration_s"`
	P50, P99  float64                `json:"-"`
}

func (s *mixStats) add(o *mixStats) {
	s.Requests += o.Requests
	s.Errors += o.Errors
	s.Revalid += o.Revalid
	for k, m := range o.ByKind {
		if s.ByKind[k] == nil {
			s.ByKind[k] = map[int]int{}
		}
		for c, n := range m {
			s.ByKind[k][c] += n
			s.Statuses[c] += n
		}
	}
}

func (s *mixStats) count(lo, hi int) int {
	n := 0
	for c, k := range s.Statuses {
		if c >= lo && c <= hi {
			n += k
		}
	}
	return n
}

// benchWordPressMix is WordPress sites' traffic through the edge: 70 %
// listing pages, 15 % single listings, 5 % searches, 5 % agents (with the
// demo read key) and 5 % leads (with a leads:write key). Each client keeps
// the ETag of every URL it read and revalidates with If-None-Match, as the
// plugin does. It counts 200/304/429/5xx, requires no 5xx, and matches
// every 201 to its row in Postgres. Then the reads alone at fixed rates.
func benchWordPressMix(args []string) error {
	fs := flag.NewFlagSet("wordpress-mix", flag.ContinueOnError)
	dur := fs.Duration("duration", def(6*time.Second, 2*time.Second), "duration of the closed-loop run")
	workers := fs.Int("clients", def(32, 8), "concurrent clients (each a WordPress site with its own ETags)")
	latDur := fs.Duration("latency-duration", def(5*time.Second, time.Second), "duration of each fixed-rate run of the reads (0: none)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx := context.Background()
	sys, err := startSystem(ctx)
	if err != nil {
		return err
	}
	defer sys.close()
	_, leadKey, err := createKey(ctx, sys, "bench wordpress-mix leads", "leads:write")
	if err != nil {
		return err
	}
	site, err := discoverMix(sys)
	if err != nil {
		return err
	}
	nreads := 0
	for _, ps := range site.reads {
		nreads += len(ps)
	}
	fmt.Printf("wordpress-mix: %d clients for %v; %d distinct reads, %d current listings\n", *workers, *dur, nreads, len(site.refs))

	tr := &http.Transport{MaxIdleConnsPerHost: *workers, MaxConnsPerHost: *workers, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	run := strconv.FormatInt(time.Now().UnixNano()%1e10, 36)
	var (
		mu     sync.Mutex
		total  = mixStats{ByKind: map[string]map[int]int{}, Statuses: map[int]int{}}
		lat    []time.Duration
		leads  []sentLead
		etags  = map[string]string{} // every client's, for the fixed-rate runs
		seq    atomic.Int64
		budget = int64(10_000_000)
	)
	runCtx, cancel := context.WithTimeout(ctx, *dur)
	defer cancel()
	start := time.Now()
	var wg sync.WaitGroup
	for w := range *workers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), uint64(start.UnixNano())))
			mine := map[string]string{}
			st := mixStats{ByKind: map[string]map[int]int{}, Statuses: map[int]int{}}
			var myLat []time.Duration
			var myLeads []sentLead
			c := &mixClient{site: site, client: client, r: r, etags: mine, readKey: sys.readKey, leadKey: leadKey,
				email: fmt.Sprintf("wp-%s-%d-%%d@example.com", run, w)}
			for runCtx.Err() == nil {
				i := seq.Add(1)
				if i > budget {
					break
				}
				res := c.do(runCtx, sys.edge.URL(), i)
				if res.revalidated {
					st.Revalid++
				}
				if res.lead != nil {
					myLeads = append(myLeads, *res.lead) // acknowledged or not (maybe stored)
				}
				if res.err != nil {
					if runCtx.Err() == nil {
						st.Errors++
					}
					continue
				}
				myLat = append(myLat, res.latency)
				st.Requests++
				if st.ByKind[res.kind] == nil {
					st.ByKind[res.kind] = map[int]int{}
				}
				st.ByKind[res.kind][res.status]++
			}
			mu.Lock()
			total.add(&st)
			lat = append(lat, myLat...)
			leads = append(leads, myLeads...)
			for k, v := range mine {
				etags[k] = v
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	total.DurationS = time.Since(start).Seconds()
	slices.Sort(lat)
	total.P50, total.P99 = msAt(lat, 0.5), msAt(lat, 0.99)

	rps := float64(total.Requests) / total.DurationS
	reads := 0
	for kind, m := range total.ByKind {
		for _, n := range m {
			if kind != mixLead {
				reads += n
			}
		}
	}
	share304 := float64(total.Statuses[304]) / float64(max(1, reads))
	fmt.Printf("wordpress-mix: %8.0f req/s  p50 %6.2f ms  p99 %6.2f ms  (%d requests, %d transport errors) statuses %v\n",
		rps, total.P50, total.P99, total.Requests, total.Errors, total.Statuses)
	check, err := checkLeadRows(ctx, sys.pg.DatabaseURL("bench"), sys.siteID, "wp-"+run+"-", leads)
	if err != nil {
		return err
	}
	fmt.Printf("wordpress-mix: leads: %s\n", check)

	summarize("wordpress-mix", "%d clients, %v: %s req/s through the edge; 304 share of reads %.1f %%; statuses %v; p50 %s, p99 %s (closed loop)",
		*workers, *dur, fmtRate(rps), 100*share304, total.Statuses, fmtMs(total.P50), fmtMs(total.P99))
	summarize("wordpress-mix", "leads: %s", check)
	t := reportTable{Title: fmt.Sprintf("%d clients for %v through the edge, each keeping ETags and revalidating with If-None-Match:", *workers, *dur),
		Header: []string{"kind", "share", "requests", "200", "304", "201", "429", "5xx", "other"}}
	for _, s := range mixShares {
		m := total.ByKind[s.kind]
		n, five, other := 0, 0, 0
		for c, k := range m {
			n += k
			switch {
			case c >= 500:
				five += k
			case c != 200 && c != 304 && c != 201 && c != 429:
				other += k
			}
		}
		t.Rows = append(t.Rows, []string{s.kind, fmt.Sprintf("%d %%", s.share), fmt.Sprint(n), fmt.Sprint(m[200]), fmt.Sprint(m[304]),
			fmt.Sprint(m[201]), fmt.Sprint(m[429]), fmt.Sprint(five), fmt.Sprint(other)})
	}
	t.Rows = append(t.Rows, []string{"**all**", "", fmt.Sprint(total.Requests), fmt.Sprint(total.Statuses[200]), fmt.Sprint(total.Statuses[304]),
		fmt.Sprint(total.Statuses[201]), fmt.Sprint(total.Statuses[429]), fmt.Sprint(total.count(500, 599)),
		fmt.Sprint(total.Requests - total.Statuses[200] - total.Statuses[304] - total.Statuses[201] - total.Statuses[429] - total.count(500, 599))})
	addTable("wordpress-mix", t)
	data := map[string]any{"clients": *workers, "duration_s": dur.Seconds(), "requests_per_second": rps,
		"share_304_of_reads": share304, "stats": total, "p50_ms": total.P50, "p99_ms": total.P99, "leads": check,
		"distinct_reads": nreads}
	writeResults("wordpress-mix", data)

	// Correctness, whatever the speed.
	switch {
	case total.Requests == 0:
		return fmt.Errorf("no requests completed")
	case total.count(500, 599) > 0:
		return fmt.Errorf("%d answers were 5xx", total.count(500, 599))
	case total.Statuses[200]+total.Statuses[304]+total.Statuses[201]+total.Statuses[429] != total.Requests:
		return fmt.Errorf("unexpected statuses: %v", total.Statuses)
	case total.Errors > 0:
		return fmt.Errorf("%d transport errors", total.Errors)
	}
	if err := check.err(); err != nil {
		return err
	}
	if *latDur <= 0 {
		return nil
	}

	// The reads alone, open model, revalidating with the ETags the clients
	// learned: the maximum first (closed loop, same clients), then 25/50/75 %.
	// A read revalidates as often as the clients' reads did.
	revalidate := float64(total.Revalid) / float64(max(1, reads))
	next := func(r *rand.Rand) (string, http.Header) {
		path := site.readPath(r, pickKind(r, true))
		h := http.Header{"Authorization": {"Bearer " + sys.readKey}}
		if et, ok := etags[path]; ok && r.Float64() < revalidate {
			h.Set("If-None-Match", et)
		}
		return sys.edge.URL() + path, h
	}
	maxDur := max(*latDur/2, time.Second)
	var rmu sync.Mutex
	shared := rand.New(rand.NewPCG(1, 2))
	res := closedLoop(ctx, *workers, maxDur, 10_000_000, func(int) *http.Request {
		rmu.Lock()
		u, h := next(shared)
		rmu.Unlock()
		req, _ := http.NewRequest("GET", u, nil)
		req.Header = h
		return req
	}, nil)
	fmt.Printf("wordpress-mix: closed-loop maximum of the reads  %s\n", res)
	if res.Requests == 0 || res.Statuses[200]+res.Statuses[304] != res.Requests {
		return fmt.Errorf("reads, closed loop: %s", res)
	}
	target := latencyTarget{name: "wordpress-reads", ok: func(s int) bool { return s == 200 || s == 304 },
		targeter: func(t *vegeta.Target) error {
			rmu.Lock()
			u, h := next(shared)
			rmu.Unlock()
			t.Method, t.URL, t.Header, t.Body = "GET", u, h, nil
			return nil
		}}
	s := openModel(ctx, target, res.rps(), fmt.Sprintf("Go closed loop, %d clients, %v", *workers, maxDur), *latDur)
	addLatency("wordpress-mix", latencyChart{Name: "latency", Title: "WordPress reads through the edge (If-None-Match revalidation)",
		Series: []latencySeries{s}})
	if err := checkLatency(s); err != nil {
		return err
	}
	p := s.Points[len(s.Points)-1]
	summarize("wordpress-mix", "open model reads at 75%% of %s req/s: p50 %s, p99 %s, p99.9 %s, success %.2f %%",
		fmtRate(s.MaxRPS), fmtMs(p.P50), fmtMs(p.P99), fmtMs(p.P999), 100*p.Success)
	data["latency"] = s
	return writeResults("wordpress-mix", data)
}

// mixClient is one WordPress site of the mix: it keeps the ETag of every
// URL it read and revalidates with If-None-Match, and sends each enquiry
// once, with an Idempotency-Key, as the plugin does.
type mixClient struct {
	site             *mixSite
	client           *http.Client
	r                *rand.Rand
	etags            map[string]string
	readKey, leadKey string
	email            string // fmt pattern of enquiry i's e-mail
}

// mixResult is one request of the mix and its answer.
type mixResult struct {
	kind        string
	status      int
	err         error // a transport error, or the body could not be read
	latency     time.Duration
	end         time.Time
	revalidated bool
	lead        *sentLead // for an enquiry
}

// do sends request i of the mix to the edge at base.
func (c *mixClient) do(ctx context.Context, base string, i int64) mixResult {
	res := mixResult{kind: pickKind(c.r, false)}
	var req *http.Request
	var path string
	if res.kind == mixLead {
		res.lead = &sentLead{email: fmt.Sprintf(c.email, i)}
		body, _ := json.Marshal(map[string]any{"name": fmt.Sprintf("Buyer %d", i), "email": res.lead.email, "type": "inquiry",
			"listing_ref": c.site.refs[c.r.IntN(len(c.site.refs))], "message": "Is it still available? Can I inspect on Saturday?"})
		req, _ = http.NewRequestWithContext(ctx, "POST", base+"/v1/leads", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+c.leadKey)
		req.Header.Set("Idempotency-Key", "mix-"+res.lead.email)
	} else {
		path = c.site.readPath(c.r, res.kind)
		req, _ = http.NewRequestWithContext(ctx, "GET", base+path, nil)
		req.Header.Set("Authorization", "Bearer "+c.readKey)
		if et, ok := c.etags[path]; ok {
			req.Header.Set("If-None-Match", et)
			res.revalidated = true
		}
	}
	t0 := time.Now()
	resp, err := c.client.Do(req)
	if err != nil {
		res.err, res.end = err, time.Now()
		return res
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	res.end = time.Now()
	res.latency = res.end.Sub(t0)
	if err != nil {
		res.err = err
		return res
	}
	res.status = resp.StatusCode
	switch {
	case res.kind == mixLead && res.status == 201:
		var a struct {
			LeadID    int64 `json:"lead_id"`
			Duplicate bool  `json:"duplicate"`
		}
		if json.Unmarshal(body, &a) == nil && a.LeadID > 0 {
			res.lead.id, res.lead.acked, res.lead.duplicate = a.LeadID, true, a.Duplicate
		}
	case res.kind != mixLead && res.status == 200:
		if et := resp.Header.Get("ETag"); et != "" {
			c.etags[path] = et
		}
	}
	return res
}
