package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/listgate/listgate/pkg/devdb"
)

func init() { scenarios["edge-hit"] = benchEdgeHit }

// benchEdgeHit compares a cached ~10 KB listing page through the whole edge
// path (auth, scope, limit on an Enterprise site, cache) with nginx serving
// the identical bytes as a static file and with the origin answering the
// same page from Postgres: same wrk settings, same run, alternating.
func benchEdgeHit(args []string) error {
	fs := flag.NewFlagSet("edge-hit", flag.ContinueOnError)
	dur := fs.Duration("duration", 10*time.Second, "duration of each wrk run")
	conns := fs.Int("connections", 64, "wrk connections")
	rounds := fs.Int("rounds", 2, "alternating rounds")
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
	nginx, err := startNginx(sys.dir, []byte(page))
	if err != nil {
		return err
	}
	defer nginx.stop()

	targets := []struct {
		name, url string
		headers   []string
	}{
		{"edge-hit", edge.URL() + path, []string{"Authorization: Bearer " + sys.readKey}},
		{"nginx-static", "http://" + nginx.addr + "/page.json", nil},
		{"origin-direct", origin.URL() + path, []string{"X-Listgate-Internal-Token: " + benchToken,
			"X-Listgate-Site: " + sys.siteID, "X-Listgate-Key-Id: bench", "X-Listgate-Scopes: listings:read"}},
	}
	fmt.Printf("edge-hit: %d-byte listing page, wrk -t2 -c%d -d%v, %d alternating rounds\n", len(page), *conns, *dur, *rounds)
	best := map[string]wrkResult{}
	for round := 1; round <= *rounds; round++ {
		for _, t := range targets {
			r, err := runWrk(ctx, t.name, t.url, *dur, *conns, t.headers)
			if err != nil {
				return err
			}
			fmt.Printf("edge-hit: round %d  %s\n", round, r)
			if r.RPS > best[t.name].RPS {
				best[t.name] = r
			}
		}
	}
	e, n, o := best["edge-hit"], best["nginx-static"], best["origin-direct"]
	fmt.Printf("edge-hit: best of %d: edge/nginx = %.2f, edge/origin-direct = %.1f\n", *rounds, e.RPS/n.RPS, e.RPS/o.RPS)
	return writeResults("edge-hit", map[string]any{
		"page_bytes": len(page), "connections": *conns, "duration_s": dur.Seconds(), "rounds": *rounds,
		"best": best, "edge_over_nginx": e.RPS / n.RPS, "edge_over_origin": e.RPS / o.RPS,
	})
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
}

func startNginx(dir string, body []byte) (*nginxProcess, error) {
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
worker_processes auto;
error_log %[1]s/logs/error.log warn;
pid %[1]s/nginx.pid;
events { worker_connections 4096; }
http {
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 1000000;
    default_type application/json;
    client_body_temp_path %[1]s/tmp;
    proxy_temp_path %[1]s/tmp;
    fastcgi_temp_path %[1]s/tmp;
    uwsgi_temp_path %[1]s/tmp;
    scgi_temp_path %[1]s/tmp;
    server {
        listen 127.0.0.1:%[2]d;
        root %[1]s/html;
        etag on;
    }
}
`, root, port)
	os.MkdirAll(filepath.Join(root, "tmp"), 0o755)
	confPath := filepath.Join(root, "nginx.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		return nil, err
	}
	p := &nginxProcess{cmd: exec.Command(bin, "-p", root, "-c", confPath, "-e", filepath.Join(root, "logs", "error.log")),
		addr: fmt.Sprintf("127.0.0.1:%d", port)}
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if b, err := fetch("http://"+p.addr+"/page.json", ""); err == nil && b == string(body) {
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
