package usage

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/listgate/listgate/origin/api"
	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/origin/store/storetest"
	"github.com/listgate/listgate/pkg/devdb/devdbtest"
	"github.com/listgate/listgate/pkg/model"
)

func TestMain(m *testing.M) { os.Exit(devdbtest.RunTests(m)) }

const token = "0123456789abcdef0123456789abcdef-usage"

type env struct {
	db *store.DB
	h  http.Handler
}

func newEnv(tb testing.TB) *env {
	tb.Helper()
	db := storetest.NewDB(tb)
	srv := api.New(api.Config{Ready: db.Ping, Unavailable: store.IsUnavailable, Metrics: db.WritePoolMetrics,
		InternalToken: token, Log: slog.New(slog.DiscardHandler),
		Mounts: []api.Mounter{New(Config{DB: db})}})
	return &env{db: db, h: srv.Handler()}
}

// post sends body with the internal token when withToken and returns the
// status and the response body.
func (e *env) post(tb testing.TB, body string, withToken bool) (int, string) {
	tb.Helper()
	req := httptest.NewRequest("POST", Path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if withToken {
		req.Header.Set(api.HeaderInternalToken, token)
	}
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	b, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(b)
}

func (e *env) rows(tb testing.TB) map[string]int64 {
	tb.Helper()
	rows, err := e.db.Pool.Query(context.Background(), `SELECT site_id::text, minute, requests FROM usage_minutes`)
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var site string
		var m time.Time
		var n int64
		if err := rows.Scan(&site, &m, &n); err != nil {
			tb.Fatal(err)
		}
		out[site+" "+m.UTC().Format(time.RFC3339)] = n
	}
	return out
}

func TestReport(t *testing.T) {
	e := newEnv(t)
	site, err := e.db.CreateSite(context.Background(), "Usage Realty", model.Starter, "")
	if err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf(`{"counts": [
		{"site_id": %[1]q, "minute": "2026-03-04T10:30:00Z", "requests": 5},
		{"site_id": %[1]q, "minute": "2026-03-04T21:01:00+10:00", "requests": 7},
		{"site_id": %[1]q, "minute": "2026-03-04T10:30:00Z", "requests": 1},
		{"site_id": "00000000-0000-4000-8000-000000000000", "minute": "2026-03-04T10:30:00Z", "requests": 3}
	]}`, site.ID)
	for range 2 {
		if code, b := e.post(t, body, true); code != http.StatusNoContent || b != "" {
			t.Fatalf("status %d: %s", code, b)
		}
	}
	want := map[string]int64{site.ID + " 2026-03-04T10:30:00Z": 12, site.ID + " 2026-03-04T11:01:00Z": 14}
	if got := e.rows(t); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
	if code, b := e.post(t, `{"counts": []}`, true); code != http.StatusNoContent {
		t.Fatalf("empty report: %d %s", code, b)
	}

	if code, b := e.post(t, body, false); code != http.StatusUnauthorized || !strings.Contains(b, "UNAUTHORIZED") {
		t.Fatalf("without token: %d %s", code, b)
	}

	for name, bad := range map[string]string{
		"not JSON":            `{"counts": [`,
		"not an object":       `[]`,
		"no counts":           `{}`,
		"unknown field":       `{"counts": [], "extra": 1}`,
		"unknown entry field": fmt.Sprintf(`{"counts": [{"site_id": %q, "minute": "2026-03-04T10:30:00Z", "requests": 1, "x": 1}]}`, site.ID),
		"trailing data":       `{"counts": []} {}`,
		"bad site id":         `{"counts": [{"site_id": "abc", "minute": "2026-03-04T10:30:00Z", "requests": 1}]}`,
		"no site id":          `{"counts": [{"minute": "2026-03-04T10:30:00Z", "requests": 1}]}`,
		"seconds":             fmt.Sprintf(`{"counts": [{"site_id": %q, "minute": "2026-03-04T10:30:05Z", "requests": 1}]}`, site.ID),
		"not RFC 3339":        fmt.Sprintf(`{"counts": [{"site_id": %q, "minute": "2026-03-04 10:30", "requests": 1}]}`, site.ID),
		"negative":            fmt.Sprintf(`{"counts": [{"site_id": %q, "minute": "2026-03-04T10:30:00Z", "requests": -1}]}`, site.ID),
		"fractional":          fmt.Sprintf(`{"counts": [{"site_id": %q, "minute": "2026-03-04T10:30:00Z", "requests": 1.5}]}`, site.ID),
		"string requests":     fmt.Sprintf(`{"counts": [{"site_id": %q, "minute": "2026-03-04T10:30:00Z", "requests": "1"}]}`, site.ID),
		"no requests":         fmt.Sprintf(`{"counts": [{"site_id": %q, "minute": "2026-03-04T10:30:00Z"}]}`, site.ID),
	} {
		if code, b := e.post(t, bad, true); code != http.StatusUnprocessableEntity || !strings.Contains(b, "VALIDATION_ERROR") {
			t.Errorf("%s: %d %s", name, code, b)
		}
	}

	// Over 10,000 entries (the body is under 1 MiB), and over 1 MiB.
	var many strings.Builder
	many.WriteString(`{"counts":[`)
	for i := range MaxCounts + 1 {
		if i > 0 {
			many.WriteString(",")
		}
		fmt.Fprintf(&many, `{"site_id":%q,"minute":"2026-03-04T10:30:00Z","requests":1}`, site.ID)
	}
	many.WriteString(`]}`)
	if many.Len() > MaxBody {
		t.Fatalf("the entry-limit body is %d bytes", many.Len())
	}
	if code, b := e.post(t, many.String(), true); code != http.StatusRequestEntityTooLarge {
		t.Fatalf("%d entries: %d %s", MaxCounts+1, code, b)
	}
	huge := strings.Repeat(" ", MaxBody) + `{"counts":[]}`
	if code, b := e.post(t, huge, true); code != http.StatusRequestEntityTooLarge {
		t.Fatalf("over 1 MiB: %d %s", code, b)
	}
	if got := e.rows(t); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("rows changed by refused reports: %v", got)
	}
}

// TestReportID: a report sent again with the same report_id is applied
// once; without one, reports add up.
func TestReportID(t *testing.T) {
	e := newEnv(t)
	site, err := e.db.CreateSite(context.Background(), "Usage Realty", model.Starter, "")
	if err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf(`{"report_id": "0b7cf3a4-5d8e-4f1a-9c2b-3d4e5f6a7b8c", "counts": [
		{"site_id": %[1]q, "minute": "2026-03-04T10:30:00Z", "requests": 5}]}`, site.ID)
	for range 3 {
		if code, b := e.post(t, body, true); code != http.StatusNoContent {
			t.Fatalf("status %d: %s", code, b)
		}
	}
	want := map[string]int64{site.ID + " 2026-03-04T10:30:00Z": 5}
	if got := e.rows(t); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
	var hour int64
	if err := e.db.Pool.QueryRow(context.Background(), `SELECT requests FROM usage_hours WHERE site_id = $1`, site.ID).Scan(&hour); err != nil || hour != 5 {
		t.Fatalf("hour %d, %v", hour, err)
	}
	for name, bad := range map[string]string{
		"bad report id":    `{"report_id": "nope", "counts": []}`,
		"number report id": `{"report_id": 1, "counts": []}`,
	} {
		if code, b := e.post(t, bad, true); code != http.StatusUnprocessableEntity || !strings.Contains(b, "VALIDATION_ERROR") {
			t.Errorf("%s: %d %s", name, code, b)
		}
	}
}

// FuzzDecodeReport: whatever the body, decodeReport returns counts that
// the store accepts, or an error; never a panic.
func FuzzDecodeReport(f *testing.F) {
	f.Add(`{"counts": []}`)
	f.Add(`{"report_id": "0b7cf3a4-5d8e-4f1a-9c2b-3d4e5f6a7b8c", "counts": [{"site_id": "0b7cf3a4-5d8e-4f1a-9c2b-3d4e5f6a7b8c", "minute": "2026-03-04T10:30:00Z", "requests": 5}]}`)
	f.Add(`{"counts": [{"site_id": "x", "minute": "2026-03-04T10:30:05+10:00", "requests": -1}]} {}`)
	f.Fuzz(func(t *testing.T, body string) {
		id, counts, err := decodeReport(strings.NewReader(body))
		if err != nil {
			if id != "" || counts != nil {
				t.Fatalf("error %v with a result", err)
			}
			return
		}
		if id != "" && !api.IsUUID(id) {
			t.Fatalf("report id %q", id)
		}
		for _, c := range counts {
			if !api.IsUUID(c.SiteID) || c.Requests < 0 || c.Requests > MaxRequests || !c.Minute.Truncate(time.Minute).Equal(c.Minute) {
				t.Fatalf("count %+v", c)
			}
		}
	})
}
