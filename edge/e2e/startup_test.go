package e2e

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/listgate/listgate/pkg/devproc"
)

// A misconfigured edge does not start, and says why, at once.
func TestEdgeStartFailsFast(t *testing.T) {
	s := newSystem(t)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	closed, _ := net.Listen("tcp", "127.0.0.1:0")
	closedURL := "http://" + closed.Addr().String()
	closed.Close()
	for name, tc := range map[string]struct {
		env  []string
		want string
	}{
		"wrong internal token": {[]string{"LISTGATE_INTERNAL_TOKEN=" + strings.Repeat("w", 40), "LISTGATE_ORIGIN_URL=" + s.origin.url()}, "refused this edge's internal token"},
		"origin unreachable":   {[]string{"LISTGATE_INTERNAL_TOKEN=" + token, "LISTGATE_ORIGIN_URL=" + closedURL}, "unreachable"},
		"port busy":            {[]string{"LISTGATE_INTERNAL_TOKEN=" + token, "LISTGATE_ORIGIN_URL=" + s.origin.url(), "LISTGATE_EDGE_ADDR=" + busy.Addr().String()}, "address already in use"},
	} {
		t.Run(name, func(t *testing.T) {
			env := append([]string{"LISTGATE_EDGE_ADDR=127.0.0.1:0", "LISTGATE_EDGE_ADMIN_ADDR=127.0.0.1:0"}, tc.env...)
			start := time.Now()
			p, err := devproc.Start(bins.Edge, devproc.Options{Env: env, StartTimeout: 20 * time.Second})
			if err == nil {
				p.Stop()
				t.Fatal("the edge started")
			}
			if !strings.Contains(err.Error(), tc.want) || time.Since(start) > 10*time.Second {
				t.Errorf("after %v: %v; want it to say %q", time.Since(start).Round(time.Millisecond), err, tc.want)
			}
		})
	}
}
