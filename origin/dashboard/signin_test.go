package dashboard_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/listgate/listgate/origin/api"
	"github.com/listgate/listgate/origin/dashboard"
	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/origin/store/storetest"
	"github.com/listgate/listgate/pairing"
)

const internalToken = "dashboard-test-internal-token-0123456789"

// twoOrigins is two origins (two pools, two dashboards) on one database and
// one clock, as behind the edge: requests carry the internal token and the
// client's address.
type twoOrigins struct {
	db    *store.DB
	urls  [2]string
	now   atomic.Int64 // the clock, Unix nanoseconds
	siteA store.Site
}

func newTwoOrigins(tb testing.TB) *twoOrigins {
	tb.Helper()
	dsn := storetest.URL(tb)
	o := &twoOrigins{}
	o.now.Store(time.Now().UnixNano())
	clock := func() time.Time { return time.Unix(0, o.now.Load()) }
	quiet := slog.New(slog.DiscardHandler)
	for i := range o.urls {
		db, err := store.Open(context.Background(), dsn, store.Options{MaxConns: 4})
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(db.Close)
		if i == 0 {
			o.db = db
			o.siteA = mustSite(tb, db, "Bayside Realty")
			mustUser(tb, db, "a@bayside.example", passwordA, "Bayside", o.siteA.ID)
		}
		svc, err := pairing.New(pairing.Config{Store: db.Pairings(), PublicURL: publicURL, Log: quiet})
		if err != nil {
			tb.Fatal(err)
		}
		dash, err := dashboard.New(dashboard.Config{DB: db, Pairing: svc, Log: quiet, Now: clock})
		if err != nil {
			tb.Fatal(err)
		}
		srv := httptest.NewServer(api.New(api.Config{Ready: db.Ping, Unavailable: store.IsUnavailable, Metrics: db.WritePoolMetrics,
			Log: quiet, InternalToken: internalToken,
			Mounts: []api.Mounter{dash}}).Handler())
		tb.Cleanup(srv.Close)
		o.urls[i] = srv.URL
	}
	return o
}

func (o *twoOrigins) advance(d time.Duration) { o.now.Add(int64(d)) }

// fromEdge sends requests as the edge forwards them: with the internal
// token and the client's address.
type fromEdge struct{ clientIP string }

func (t fromEdge) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(api.HeaderInternalToken, internalToken)
	r.Header.Set(api.HeaderClientIP, t.clientIP)
	return http.DefaultTransport.RoundTrip(r)
}

// client is a browser at clientIP, through origin 0 or 1.
func (o *twoOrigins) client(tb testing.TB, origin int, clientIP string) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{tb: tb, c: &http.Client{Jar: jar, Transport: fromEdge{clientIP}}, url: o.urls[origin]}
}

var problemRE = regexp.MustCompile(`<p class="problem" role="alert">([^<]*)</p>`)

// signIn is one sign-in's answer: its status, the problem the form shows
// and Retry-After.
type signIn struct {
	status     int
	problem    string
	retryAfter string
}

func (b *browser) signIn(email, password string) signIn {
	b.tb.Helper()
	token := b.csrf("/dashboard/login")
	resp, err := b.c.PostForm(b.url+"/dashboard/login", url.Values{"csrf_token": {token}, "email": {email}, "password": {password}})
	if err != nil {
		b.tb.Fatal(err)
	}
	status, body := readResp(b.tb, resp)
	var problem string
	if m := problemRE.FindStringSubmatch(body); m != nil {
		problem = m[1]
	}
	return signIn{status, problem, resp.Header.Get("Retry-After")}
}

func (o *twoOrigins) sessions(tb testing.TB) int {
	tb.Helper()
	var n int
	if err := o.db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM dashboard_sessions`).Scan(&n); err != nil {
		tb.Fatal(err)
	}
	return n
}

const wrong = "not the password"

// An attacker's failures, through either origin, delay the attacker's
// address more and more, and the user at another address not at all.
func TestSignInFailuresDelayOnlyTheirAddress(t *testing.T) {
	o := newTwoOrigins(t)
	attacker := [2]*browser{o.client(t, 0, "198.51.100.7"), o.client(t, 1, "198.51.100.7")}
	for i := range 5 {
		if got := attacker[i%2].signIn("a@bayside.example", wrong); got.status != http.StatusUnauthorized {
			t.Fatalf("failure %d: %+v", i+1, got)
		}
	}
	// Failures 6 to 10 each wait twice the last, counted at either origin.
	for i, wait := range []int{1, 2, 4, 8, 16} {
		b := attacker[i%2]
		got := b.signIn("a@bayside.example", wrong)
		if got.status != http.StatusTooManyRequests || got.retryAfter != strconv.Itoa(wait) ||
			got.problem != fmt.Sprintf("Too many failed sign-ins. Try again in %d second%s.", wait, map[bool]string{true: "s"}[wait > 1]) {
			t.Fatalf("attempt %d at once: %+v, want 429 waiting %d s", 6+i, got, wait)
		}
		o.advance(time.Duration(wait)*time.Second - time.Millisecond)
		if got := attacker[1-i%2].signIn("a@bayside.example", wrong); got.status != http.StatusTooManyRequests {
			t.Fatalf("attempt %d a millisecond early: %+v", 6+i, got)
		}
		o.advance(time.Millisecond)
		if got := b.signIn("a@bayside.example", wrong); got.status != http.StatusUnauthorized {
			t.Fatalf("attempt %d after %d s: %+v", 6+i, wait, got)
		}
	}
	if got := attacker[0].signIn("a@bayside.example", passwordA); got.status != http.StatusTooManyRequests || got.retryAfter != "32" {
		t.Fatalf("after 10 failures: %+v", got)
	}
	// The user, elsewhere, signs in at once through either origin.
	for origin := range 2 {
		o.client(t, origin, "203.0.113.9").mustLogin("a@bayside.example", passwordA)
	}
}

// During a delay the right password is refused exactly as a wrong one: the
// answer says nothing of the password. After the delay it signs in, and
// the address's count starts again.
func TestSignInDelayHidesThePassword(t *testing.T) {
	o := newTwoOrigins(t)
	b := o.client(t, 0, "2001:db8::1")
	for range 5 {
		if got := b.signIn("a@bayside.example", wrong); got.status != http.StatusUnauthorized {
			t.Fatalf("failure: %+v", got)
		}
	}
	refused := b.signIn("a@bayside.example", wrong)
	right := o.client(t, 1, "2001:db8::1").signIn("a@bayside.example", passwordA)
	if refused.status != http.StatusTooManyRequests || right != refused || o.sessions(t) != 0 {
		t.Fatalf("during the delay: wrong password %+v, right password %+v, %d sessions", refused, right, o.sessions(t))
	}
	o.advance(time.Second)
	b.mustLogin("a@bayside.example", passwordA)
	b = o.client(t, 1, "2001:db8::1") // signed out
	for i := range 5 {
		if got := b.signIn("a@bayside.example", wrong); got.status != http.StatusUnauthorized {
			t.Fatalf("failure %d after a success: %+v", i+1, got)
		}
	}
}

// Past 20 failures from one address, whatever the e-mails, the address is
// refused until its window ends; other addresses are not.
func TestSignInPerIPLimit(t *testing.T) {
	o := newTwoOrigins(t)
	for i := range 5 {
		mustUser(t, o.db, fmt.Sprintf("staff%d@bayside.example", i), passwordB, "Bayside")
	}
	from := [2]*browser{o.client(t, 0, "192.0.2.66"), o.client(t, 1, "192.0.2.66")}
	for i := range 20 { // 4 per e-mail: no address's delay starts
		if got := from[i%2].signIn(fmt.Sprintf("staff%d@bayside.example", i%5), wrong); got.status != http.StatusUnauthorized {
			t.Fatalf("failure %d: %+v", i+1, got)
		}
	}
	got := from[0].signIn("a@bayside.example", passwordA)
	if got.status != http.StatusTooManyRequests || got.retryAfter != "900" || o.sessions(t) != 0 {
		t.Fatalf("after 20 failures from the address: %+v", got)
	}
	o.client(t, 1, "192.0.2.67").mustLogin("a@bayside.example", passwordA)
	o.advance(15 * time.Minute)
	from[1].mustLogin("a@bayside.example", passwordA)
}

// Past 100 failures in an hour for one e-mail from every address together,
// it signs in only from an address it signed in from before.
func TestSignInPerEmailCeiling(t *testing.T) {
	o := newTwoOrigins(t)
	o.client(t, 0, "192.0.2.10").mustLogin("a@bayside.example", passwordA)
	o.advance(time.Minute)
	for i := range 100 { // 25 addresses, 4 each: no address is delayed
		b := o.client(t, i%2, fmt.Sprintf("198.51.100.%d", i%25))
		if got := b.signIn("a@bayside.example", wrong); got.status != http.StatusUnauthorized {
			t.Fatalf("failure %d: %+v", i+1, got)
		}
	}
	if got := o.client(t, 1, "203.0.113.50").signIn("a@bayside.example", passwordA); got.status != http.StatusTooManyRequests {
		t.Fatalf("new address past the ceiling: %+v", got)
	}
	o.client(t, 1, "192.0.2.10").mustLogin("a@bayside.example", passwordA)
	o.advance(time.Hour)
	o.client(t, 0, "203.0.113.50").mustLogin("a@bayside.example", passwordA)
}
