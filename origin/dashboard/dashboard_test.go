package dashboard_test

import (
	"context"
	"crypto/sha256"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"golang.org/x/crypto/bcrypt"

	"github.com/listgate/listgate/origin/api"
	"github.com/listgate/listgate/origin/dashboard"
	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/origin/store/storetest"
	"github.com/listgate/listgate/pairing"
	"github.com/listgate/listgate/pairing/pairinghttp"
	"github.com/listgate/listgate/pkg/apikey"
	"github.com/listgate/listgate/pkg/devdb/devdbtest"
	"github.com/listgate/listgate/pkg/model"
)

func TestMain(m *testing.M) { os.Exit(devdbtest.RunTests(m)) }

const (
	publicURL = "http://listgate.test"
	passwordA = "correct horse battery"
	passwordB = "another long password"
)

// fixture is the origin (dashboard and pairing routes) on a database of
// its own with two accounts, each with one user and one site.
type fixture struct {
	db           *store.DB
	srv          *httptest.Server
	siteA, siteB store.Site
	// skew moves the pairing service's clock ahead (nanoseconds), so that
	// a test can poll again without waiting the interval.
	skew atomic.Int64
}

func newFixture(tb testing.TB) *fixture {
	tb.Helper()
	return newFixtureWith(tb, dashboard.Config{})
}

// newFixtureWith is newFixture with the dashboard's optional settings of
// extra (SecretKey, WebhookTargets, EmailOn); its DB, Pairing and Log are
// the fixture's.
func newFixtureWith(tb testing.TB, extra dashboard.Config) *fixture {
	tb.Helper()
	db := storetest.NewDB(tb)
	f := &fixture{db: db}
	f.siteA = mustSite(tb, db, "Bayside Realty")
	f.siteB = mustSite(tb, db, "Hillside Homes")
	mustUser(tb, db, "a@bayside.example", passwordA, "Bayside", f.siteA.ID)
	mustUser(tb, db, "B@Hillside.example", passwordB, "Hillside", f.siteB.ID)
	quiet := slog.New(slog.DiscardHandler)
	svc, err := pairing.New(pairing.Config{Store: db.Pairings(), PublicURL: publicURL, Log: quiet,
		Now: func() time.Time { return time.Now().Add(time.Duration(f.skew.Load())) }})
	if err != nil {
		tb.Fatal(err)
	}
	ph, err := pairinghttp.New(pairinghttp.Config{Service: svc})
	if err != nil {
		tb.Fatal(err)
	}
	cfg := extra
	cfg.DB, cfg.Pairing, cfg.Log = db, svc, quiet
	dash, err := dashboard.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	f.srv = httptest.NewServer(api.New(api.Config{Ready: db.Ping, Unavailable: store.IsUnavailable, Metrics: db.WritePoolMetrics,
		Log: quiet, InternalToken: internalToken,
		Mounts: []api.Mounter{ph, dash}}).Handler())
	tb.Cleanup(f.srv.Close)
	return f
}

// sydney is Australia/Sydney, the time zone of the fixture's sites.
func sydney(tb testing.TB) *time.Location {
	tb.Helper()
	loc, err := time.LoadLocation("Australia/Sydney")
	if err != nil {
		tb.Fatal(err)
	}
	return loc
}

func mustSite(tb testing.TB, db *store.DB, name string) store.Site {
	tb.Helper()
	s, err := db.CreateSite(context.Background(), name, model.Plan("starter"), "")
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

func mustUser(tb testing.TB, db *store.DB, email, password, account string, sites ...string) store.User {
	tb.Helper()
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		tb.Fatal(err)
	}
	u, err := db.CreateUser(context.Background(), store.NewUser{Email: email, PasswordHash: string(hash),
		Account: account, SiteIDs: sites})
	if err != nil {
		tb.Fatal(err)
	}
	return u
}

// browser is a client with a cookie jar that follows redirects.
type browser struct {
	tb  testing.TB
	c   *http.Client
	url string
}

func (f *fixture) browser(tb testing.TB) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{tb: tb, c: &http.Client{Jar: jar}, url: f.srv.URL}
}

// get returns the status and body of GET path.
func (b *browser) get(path string) (int, string) {
	b.tb.Helper()
	resp, err := b.c.Get(b.url + path)
	if err != nil {
		b.tb.Fatal(err)
	}
	return readResp(b.tb, resp)
}

// post posts form to path and returns the status and body.
func (b *browser) post(path string, form url.Values) (int, string) {
	b.tb.Helper()
	resp, err := b.c.PostForm(b.url+path, form)
	if err != nil {
		b.tb.Fatal(err)
	}
	return readResp(b.tb, resp)
}

func readResp(tb testing.TB, resp *http.Response) (int, string) {
	tb.Helper()
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

var csrfRE = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// csrf returns the CSRF token of the page at path.
func (b *browser) csrf(path string) string {
	b.tb.Helper()
	code, body := b.get(path)
	m := csrfRE.FindStringSubmatch(body)
	if code != http.StatusOK || m == nil {
		b.tb.Fatalf("GET %s: %d, no CSRF token in %q", path, code, body)
	}
	return m[1]
}

// login signs in and returns the status and body of the page it lands on.
func (b *browser) login(email, password string) (int, string) {
	b.tb.Helper()
	token := b.csrf("/dashboard/login")
	return b.post("/dashboard/login", url.Values{"csrf_token": {token}, "email": {email}, "password": {password}})
}

func (b *browser) mustLogin(email, password string) {
	b.tb.Helper()
	if code, body := b.login(email, password); code != http.StatusOK || !strings.Contains(body, "Sign out") {
		b.tb.Fatalf("sign in as %s: %d %s", email, code, body)
	}
}

func TestLogin(t *testing.T) {
	f := newFixture(t)
	b := f.browser(t)

	// Signed out, a page leads to the sign-in form.
	code, body := b.get("/dashboard/sites/" + f.siteA.ID)
	if code != http.StatusOK || !strings.Contains(body, `<h1>Sign in</h1>`) ||
		!strings.Contains(body, `name="next" value="/dashboard/sites/`+f.siteA.ID+`"`) {
		t.Fatalf("signed out: %d %s", code, body)
	}
	for _, tc := range []struct{ name, email, password string }{
		{"wrong password", "a@bayside.example", "wrong password!"},
		{"unknown e-mail", "nobody@bayside.example", passwordA},
		{"empty", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := b.login(tc.email, tc.password)
			if code != http.StatusUnauthorized || !strings.Contains(body, "e-mail address or password is wrong") {
				t.Fatalf("%d %s", code, body)
			}
		})
	}
	// E-mail addresses are case-insensitive; the user sees only its sites.
	code, body = b.login("A@BAYSIDE.example ", passwordA)
	if code != http.StatusOK || !strings.Contains(body, "Bayside Realty") || strings.Contains(body, "Hillside Homes") {
		t.Fatalf("signed in: %d %s", code, body)
	}
	// Sign-out ends the session in the database too.
	var n int
	_ = f.db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM dashboard_sessions`).Scan(&n)
	if n != 1 {
		t.Fatalf("%d sessions", n)
	}
	token := b.csrf("/dashboard")
	if code, body := b.post("/dashboard/logout", url.Values{"csrf_token": {token}}); code != http.StatusOK ||
		!strings.Contains(body, "<h1>Sign in</h1>") {
		t.Fatalf("sign out: %d %s", code, body)
	}
	_ = f.db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM dashboard_sessions`).Scan(&n)
	if n != 0 {
		t.Fatalf("%d sessions after sign-out", n)
	}
	if code, body := b.get("/dashboard"); code != http.StatusOK || !strings.Contains(body, "<h1>Sign in</h1>") {
		t.Fatalf("after sign-out: %d %s", code, body)
	}
}

func TestCookiesAndHeaders(t *testing.T) {
	f := newFixture(t)
	b := f.browser(t)
	noFollow := &http.Client{Jar: b.c.Jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
	token := b.csrf("/dashboard/login")
	resp, err := noFollow.PostForm(f.srv.URL+"/dashboard/login", url.Values{"csrf_token": {token},
		"email": {"a@bayside.example"}, "password": {passwordA}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var session *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == "listgate_session" {
			session = c
		}
	}
	if resp.StatusCode != http.StatusSeeOther || session == nil || !session.HttpOnly ||
		session.SameSite != http.SameSiteLaxMode || session.Secure || session.MaxAge != 12*3600 {
		t.Fatalf("sign-in over http: %d, cookie %+v", resp.StatusCode, session)
	}
	// Only the hash of the token is stored.
	h := sha256.Sum256([]byte(session.Value))
	var n int
	_ = f.db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM dashboard_sessions WHERE token_hash = $1`, h[:]).Scan(&n)
	if n != 1 {
		t.Fatal("the session is not stored by its token's hash")
	}

	// Behind TLS at the edge the cookie is __Host- and Secure.
	req, _ := http.NewRequest(http.MethodGet, f.srv.URL+"/dashboard/login", nil)
	req.Header.Set("X-Forwarded-Proto", "https")
	req.Header.Set(api.HeaderInternalToken, internalToken)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if c := resp.Cookies(); len(c) != 1 || c[0].Name != "__Host-listgate_login_csrf" || !c[0].Secure || c[0].Path != "/" {
		t.Fatalf("https cookies %+v", c)
	}
	for k, want := range map[string]string{
		"Content-Security-Policy": "default-src 'self'",
		"X-Frame-Options":         "DENY",
		"Referrer-Policy":         "same-origin",
		"Cache-Control":           "no-store",
	} {
		if got := resp.Header.Get(k); !strings.Contains(got, want) {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
	if code, body := b.get("/dashboard/static/dashboard.css"); code != http.StatusOK || !strings.Contains(body, "body") {
		t.Fatalf("css: %d", code)
	}
	if code, _ := b.get("/dashboard/static/nope.js"); code != http.StatusNotFound {
		t.Fatalf("missing static file: %d", code)
	}
}

func TestCSRF(t *testing.T) {
	f := newFixture(t)
	b := f.browser(t)
	// Sign-in without the form's token.
	b.get("/dashboard/login")
	if code, _ := b.post("/dashboard/login", url.Values{"email": {"a@bayside.example"}, "password": {passwordA}}); code != http.StatusForbidden {
		t.Fatalf("sign-in without a token: %d", code)
	}
	b.mustLogin("a@bayside.example", passwordA)
	keys := "/dashboard/sites/" + f.siteA.ID + "/keys"
	for name, form := range map[string]url.Values{
		"missing": {"name": {"x"}, "scope": {"listings:read"}},
		"wrong":   {"name": {"x"}, "scope": {"listings:read"}, "csrf_token": {"not-the-token"}},
	} {
		if code, body := b.post(keys, form); code != http.StatusForbidden || !strings.Contains(body, "did not come from the dashboard") {
			t.Errorf("%s token: %d %s", name, code, body)
		}
	}
	if code, _ := b.post("/dashboard/logout", nil); code != http.StatusForbidden {
		t.Errorf("sign-out without a token: %d", code)
	}
	// A token of another session does not do.
	other := f.browser(t)
	other.mustLogin("a@bayside.example", passwordA)
	if code, _ := b.post(keys, url.Values{"name": {"x"}, "scope": {"listings:read"}, "csrf_token": {other.csrf("/dashboard")}}); code != http.StatusForbidden {
		t.Errorf("another session's token: %d", code)
	}
	if ks, _ := f.db.ListKeys(context.Background(), f.siteA.ID); len(ks) != 0 {
		t.Fatalf("%d keys created", len(ks))
	}
}

func TestFailedLoginLimit(t *testing.T) {
	f := newFixture(t)
	b := f.browser(t)
	for range 5 {
		if code, _ := b.login("a@bayside.example", "wrong password!"); code != http.StatusUnauthorized {
			t.Fatalf("wrong password: %d", code)
		}
	}
	if code, body := b.login("a@bayside.example", passwordA); code != http.StatusTooManyRequests || !strings.Contains(body, "Too many") {
		t.Fatalf("after 5 failures: %d %s", code, body)
	}
	// Another address from the same IP still signs in.
	b.mustLogin("b@hillside.example", passwordB)
}

var secretRE = regexp.MustCompile(`id="secret" readonly value="([^"]+)"`)

func TestKeys(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	b := f.browser(t)
	b.mustLogin("a@bayside.example", passwordA)
	keys := "/dashboard/sites/" + f.siteA.ID + "/keys"
	if code, body := b.get(keys); code != http.StatusOK || !strings.Contains(body, "no API keys yet") {
		t.Fatalf("empty keys page: %d %s", code, body)
	}
	token := b.csrf(keys)
	if code, body := b.post(keys, url.Values{"csrf_token": {token}, "name": {"Website"}}); code != http.StatusUnprocessableEntity ||
		!strings.Contains(body, "at least one scope") {
		t.Fatalf("no scope: %d %s", code, body)
	}
	code, body := b.post(keys, url.Values{"csrf_token": {token}, "name": {"Website"},
		"scope": {"listings:read", "leads:write"}})
	m := secretRE.FindStringSubmatch(body)
	if code != http.StatusOK || m == nil {
		t.Fatalf("create: %d %s", code, body)
	}
	secret := m[1]
	if err := apikey.Check(secret); err != nil {
		t.Fatalf("secret %q: %v", secret, err)
	}
	// Only the hash is stored; the secret is shown once.
	k, err := f.db.KeyByHash(ctx, apikey.Hash(secret))
	if err != nil || k.SiteID != f.siteA.ID || k.Name != "Website" || k.Source != store.SourceDashboard ||
		k.Scopes != apikey.ListingsRead|apikey.LeadsWrite {
		t.Fatalf("stored key %+v, %v", k, err)
	}
	var stored int
	_ = f.db.Pool.QueryRow(ctx, `SELECT count(*) FROM api_keys k WHERE strpos(k::text, $1) > 0`, secret).Scan(&stored)
	if stored != 0 {
		t.Fatal("the secret is stored")
	}
	code, body = b.get(keys)
	if code != http.StatusOK || strings.Contains(body, secret) || !strings.Contains(body, "…"+secret[len(secret)-4:]) ||
		!strings.Contains(body, "listings:read, leads:write") || !strings.Contains(body, "never") {
		t.Fatalf("keys page: %d %s", code, body)
	}
	code, body = b.post(keys+"/"+k.ID+"/revoke", url.Values{"csrf_token": {token}})
	k, _ = f.db.KeyByHash(ctx, apikey.Hash(secret))
	if k.RevokedAt == nil {
		t.Fatal("not revoked")
	}
	// In the site's time zone (Australia/Sydney by default), zone named.
	if when := k.RevokedAt.In(sydney(t)).Format("2 Jan 2006 15:04 MST"); code != http.StatusOK ||
		!strings.Contains(body, "The key is revoked") || !strings.Contains(body, "revoked "+when) {
		t.Fatalf("revoke: %d, want revoked %s: %s", code, when, body)
	}
	if code, _ := b.post(keys+"/not-a-key/revoke", url.Values{"csrf_token": {token}}); code != http.StatusNotFound {
		t.Fatalf("revoke an unknown key: %d", code)
	}
}

// postJSON posts body to the API and decodes the answer into dst.
func postJSON(tb testing.TB, url string, body any, dst any) int {
	tb.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(url, "application/json", strings.NewReader(string(b)))
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(dst); err != nil {
		tb.Fatal(err)
	}
	return resp.StatusCode
}

type started struct {
	DeviceCode              string `json:"device_code"`
	UserCode                string `json:"user_code"`
	VerificationURIComplete string `json:"verification_uri_complete"`
}

func startPairing(tb testing.TB, f *fixture, homeURL string) started {
	tb.Helper()
	var st started
	if code := postJSON(tb, f.srv.URL+"/v1/pairing/device", map[string]string{"home_url": homeURL, "site_name": "Bayside WP"}, &st); code != http.StatusOK {
		tb.Fatalf("start pairing: %d", code)
	}
	return st
}

func pollPairing(tb testing.TB, f *fixture, deviceCode string) (int, map[string]any) {
	tb.Helper()
	f.skew.Add(int64(time.Minute))
	var out map[string]any
	code := postJSON(tb, f.srv.URL+"/v1/pairing/token", map[string]string{
		"grant_type": "urn:ietf:params:oauth:grant-type:device_code", "device_code": deviceCode}, &out)
	return code, out
}

func TestPairingEndToEnd(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	st := startPairing(t, f, "https://bayside.example/")
	if !strings.HasPrefix(st.VerificationURIComplete, publicURL+"/dashboard/pairing?user_code=") {
		t.Fatalf("verification_uri_complete %q", st.VerificationURIComplete)
	}
	if code, out := pollPairing(t, f, st.DeviceCode); code != http.StatusBadRequest || out["error"] != "authorization_pending" {
		t.Fatalf("poll before approval: %d %v", code, out)
	}
	b := f.browser(t)
	b.mustLogin("a@bayside.example", passwordA)
	page := strings.TrimPrefix(st.VerificationURIComplete, publicURL)
	code, body := b.get(page)
	if code != http.StatusOK || !strings.Contains(body, "https://bayside.example") || !strings.Contains(body, "Bayside WP") ||
		!strings.Contains(body, `<option value="`+f.siteA.ID+`">Bayside Realty</option>`) || strings.Contains(body, f.siteB.ID) {
		t.Fatalf("pairing page: %d %s", code, body)
	}
	if code, body := b.get("/dashboard/pairing?user_code=BBBB-BBBB"); code != http.StatusNotFound || !strings.Contains(body, "No pairing is waiting") {
		t.Fatalf("wrong code: %d %s", code, body)
	}
	token := csrfRE.FindStringSubmatch(body)[1]
	code, body = b.post("/dashboard/pairing", url.Values{"csrf_token": {token}, "user_code": {st.UserCode},
		"site": {f.siteA.ID}, "decision": {"approve"}})
	if code != http.StatusOK || !strings.Contains(body, "Approved") {
		t.Fatalf("approve: %d %s", code, body)
	}
	code, out := pollPairing(t, f, st.DeviceCode)
	if code != http.StatusOK || out["site_id"] != f.siteA.ID || out["api_key"] == nil {
		t.Fatalf("poll after approval: %d %v", code, out)
	}
	k, err := f.db.KeyByHash(ctx, apikey.Hash(out["api_key"].(string)))
	if err != nil || k.Scopes != apikey.ReadOnly || k.Source != store.SourcePairing {
		t.Fatalf("paired key %+v %v", k, err)
	}

	// The site's pairings list it; disconnecting revokes its key.
	pairings := "/dashboard/sites/" + f.siteA.ID + "/pairings"
	code, body = b.get(pairings)
	m := regexp.MustCompile(`data-pairing-id="([^"]+)"`).FindStringSubmatch(body)
	if code != http.StatusOK || m == nil || !strings.Contains(body, "delivered") {
		t.Fatalf("pairings: %d %s", code, body)
	}
	code, body = b.post(pairings+"/"+m[1]+"/disconnect", url.Values{"csrf_token": {token}})
	if code != http.StatusOK || !strings.Contains(body, "is disconnected") || !strings.Contains(body, "disconnected") {
		t.Fatalf("disconnect: %d %s", code, body)
	}
	if k, _ := f.db.KeyByHash(ctx, apikey.Hash(out["api_key"].(string))); k.RevokedAt == nil {
		t.Fatal("the paired key is not revoked")
	}

	// A denied pairing gets access_denied.
	st = startPairing(t, f, "https://other.example/")
	code, body = b.post("/dashboard/pairing", url.Values{"csrf_token": {token}, "user_code": {st.UserCode}, "decision": {"deny"}})
	if code != http.StatusOK || !strings.Contains(body, "Denied") {
		t.Fatalf("deny: %d %s", code, body)
	}
	if code, out := pollPairing(t, f, st.DeviceCode); code != http.StatusBadRequest || out["error"] != "access_denied" {
		t.Fatalf("poll after denial: %d %v", code, out)
	}
}

// TestAccessControl tries every page and action of account A's site as
// account B's user: each is 404 and changes nothing.
func TestAccessControl(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	key, _, err := f.db.CreateKey(ctx, store.NewKey{SiteID: f.siteA.ID, Name: "A's key", Scopes: apikey.ReadOnly, Source: store.SourceCLI})
	if err != nil {
		t.Fatal(err)
	}
	// A delivered pairing of site A.
	a := f.browser(t)
	a.mustLogin("a@bayside.example", passwordA)
	st := startPairing(t, f, "https://bayside.example/")
	tokenA := a.csrf("/dashboard")
	if code, _ := a.post("/dashboard/pairing", url.Values{"csrf_token": {tokenA}, "user_code": {st.UserCode},
		"site": {f.siteA.ID}, "decision": {"approve"}}); code != http.StatusOK {
		t.Fatalf("approve as A: %d", code)
	}
	if code, _ := pollPairing(t, f, st.DeviceCode); code != http.StatusOK {
		t.Fatal("no delivery")
	}
	ps, _ := f.db.Pairings().ListPairings(ctx, f.siteA.ID)
	if len(ps) != 1 {
		t.Fatalf("%d pairings", len(ps))
	}

	b := f.browser(t)
	b.mustLogin("b@hillside.example", passwordB)
	token := b.csrf("/dashboard")
	siteA := "/dashboard/sites/" + f.siteA.ID
	for _, path := range []string{siteA, siteA + "/keys", siteA + "/pairings", "/dashboard/sites/not-a-uuid"} {
		if code, body := b.get(path); code != http.StatusNotFound || strings.Contains(body, "Bayside") {
			t.Errorf("GET %s as B: %d", path, code)
		}
	}
	st2 := startPairing(t, f, "https://sneaky.example/")
	for _, tc := range []struct {
		path string
		form url.Values
	}{
		{siteA + "/keys", url.Values{"name": {"B's"}, "scope": {"listings:read"}}},
		{siteA + "/keys/" + key.ID + "/revoke", nil},
		{siteA + "/pairings/" + ps[0].ID + "/disconnect", nil},
		// B's own site in the path, A's key or pairing: still 404.
		{"/dashboard/sites/" + f.siteB.ID + "/keys/" + key.ID + "/revoke", nil},
		{"/dashboard/sites/" + f.siteB.ID + "/pairings/" + ps[0].ID + "/disconnect", nil},
		{"/dashboard/pairing", url.Values{"user_code": {st2.UserCode}, "site": {f.siteA.ID}, "decision": {"approve"}}},
	} {
		form := url.Values{"csrf_token": {token}}
		for k, v := range tc.form {
			form[k] = v
		}
		if code, _ := b.post(tc.path, form); code != http.StatusNotFound {
			t.Errorf("POST %s as B: %d", tc.path, code)
		}
	}
	// A's keys: its own, the pairing's read key and the pairing's beacon
	// id, none revoked, none added by B.
	ks, _ := f.db.ListKeys(ctx, f.siteA.ID)
	changed := len(ks) != 3
	for _, k := range ks {
		changed = changed || k.RevokedAt != nil || k.Name == "B's"
	}
	if changed {
		t.Fatalf("A's keys changed: %+v", ks)
	}
	if code, out := pollPairing(t, f, st2.DeviceCode); code != http.StatusBadRequest || out["error"] != "authorization_pending" {
		t.Fatalf("B approved a pairing for A's site: %d %v", code, out)
	}
	if ps, _ := f.db.Pairings().ListPairings(ctx, f.siteA.ID); ps[0].Status != pairing.StatusDelivered {
		t.Fatalf("A's pairing %s", ps[0].Status)
	}
}

// A form whose fields hold what no text column can (a NUL, bytes that are
// not UTF-8) is refused as unreadable (400), signed in or not, where the
// sign-in form's e-mail address with a NUL failed its query (500).
func TestFormsOfTextNoColumnHolds(t *testing.T) {
	f := newFixture(t)
	b := f.browser(t)
	for _, tc := range []struct{ email, password string }{
		{"a\x00@bayside.example", passwordA}, {"a@bayside.example", "pass\x00word"}, {"\xff@bayside.example", passwordA}} {
		if code, body := b.login(tc.email, tc.password); code != http.StatusBadRequest || !strings.Contains(body, "The form could not be read.") {
			t.Errorf("sign in as %q: %d %s", tc.email, code, body)
		}
	}
	b.mustLogin("a@bayside.example", passwordA)
	token := b.csrf("/dashboard/sites/" + f.siteA.ID)
	if code, body := b.post("/dashboard/sites/"+f.siteA.ID+"/webhooks", url.Values{"csrf_token": {token},
		"url": {"https://hooks.example/\x00"}}); code != http.StatusBadRequest || !strings.Contains(body, "The form could not be read.") {
		t.Errorf("webhook with a NUL: %d %s", code, body)
	}
	// And a page's query: the listings page searched with its q.
	for _, q := range []string{"q=%00", "q=a%00b", "q=%FF", "status=%00"} {
		path := "/dashboard/sites/" + f.siteA.ID + "/listings?" + q
		if code, body := b.get(path); code != http.StatusBadRequest || !strings.Contains(body, "The address could not be read.") {
			t.Errorf("GET %s: %d %s", path, code, body)
		}
	}
	if code, body := b.get("/dashboard/login?next=%00"); code != http.StatusBadRequest {
		t.Errorf("sign-in page with a NUL: %d %s", code, body)
	}
}
