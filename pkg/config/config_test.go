package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) Getenv {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

const token = "0123456789abcdef0123456789abcdef"

// The annotated file in configs/ must say exactly what the defaults are.
func TestOriginYAMLIsTheDefaults(t *testing.T) {
	got, err := LoadOrigin("../../configs/origin.yaml", env(map[string]string{
		"LISTGATE_DATABASE_URL": "postgres://x@127.0.0.1/db", "LISTGATE_INTERNAL_TOKEN": token}))
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultOrigin()
	want.DatabaseURL, want.InternalToken = "postgres://x@127.0.0.1/db", token
	if got != want {
		t.Errorf("configs/origin.yaml gives\n%+v\nwant the defaults\n%+v", got, want)
	}
}

func TestOriginEnvironmentOverridesFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "origin.yaml")
	os.WriteFile(path, []byte("addr: 127.0.0.1:9000\nshutdown_timeout: 3s\nlog_level: debug\n"), 0o600)
	got, err := LoadOrigin(path, env(map[string]string{
		"LISTGATE_DATABASE_URL": "postgres://db", "LISTGATE_INTERNAL_TOKEN": token,
		"LISTGATE_ORIGIN_ADDR": "127.0.0.1:9100", "LISTGATE_DATABASE_MAX_CONNS": "7",
		"LISTGATE_ORIGIN_REQUEST_TIMEOUT": "2s"}))
	if err != nil {
		t.Fatal(err)
	}
	if got.Addr != "127.0.0.1:9100" || got.ShutdownTimeout != 3*time.Second || got.LogLevel != "debug" || got.DatabaseMaxConns != 7 ||
		got.RequestTimeout != 2*time.Second {
		t.Errorf("%+v", got)
	}
	if st := got.StatementTimeout(); st != 1800*time.Millisecond {
		t.Errorf("StatementTimeout() = %v, want 1.8s (nine tenths of the request timeout)", st)
	}
}

func TestOriginInvalid(t *testing.T) {
	base := map[string]string{"LISTGATE_DATABASE_URL": "postgres://user:hunter2@db/x", "LISTGATE_INTERNAL_TOKEN": token}
	for name, tc := range map[string]struct {
		file string
		env  map[string]string
		want string
	}{
		"no database":                        {"", map[string]string{"LISTGATE_INTERNAL_TOKEN": token}, "LISTGATE_DATABASE_URL"},
		"short token":                        {"", map[string]string{"LISTGATE_DATABASE_URL": "postgres://db", "LISTGATE_INTERNAL_TOKEN": "short"}, "LISTGATE_INTERNAL_TOKEN"},
		"unknown key":                        {"adress: x\n", base, "adress"},
		"bad duration":                       {"read_timeout: soon\n", base, "soon"},
		"zero timeout":                       {"write_timeout: 0s\n", base, "write_timeout"},
		"bad addr":                           {"addr: nowhere\n", base, "addr"},
		"bad level":                          {"log_level: loud\n", base, "log_level"},
		"bad public url":                     {"public_url: ftp://x\n", base, "public_url"},
		"no workers":                         {"feed_workers: 0\n", base, "feed_workers"},
		"tiny feeds":                         {"feed_max_bytes: 100\n", base, "feed_max_bytes"},
		"short ttl":                          {"oauth_token_ttl: 1s\n", base, "oauth_token_ttl"},
		"bad ttl":                            {"oauth_token_ttl: forever\n", base, "forever"},
		"lead window":                        {"lead_duplicate_window: 10s\n", base, "lead_duplicate_window"},
		"request timeout past write timeout": {"request_timeout: 2m\nwrite_timeout: 1m\n", base, "request_timeout"},
		"tiny request timeout":               {"request_timeout: 1ms\n", base, "request_timeout"},
		"bad request timeout env":            {"", map[string]string{"LISTGATE_DATABASE_URL": "postgres://db", "LISTGATE_INTERNAL_TOKEN": token, "LISTGATE_ORIGIN_REQUEST_TIMEOUT": "soon"}, "LISTGATE_ORIGIN_REQUEST_TIMEOUT"},
		"bad max conns":                      {"", map[string]string{"LISTGATE_DATABASE_URL": "postgres://db", "LISTGATE_INTERNAL_TOKEN": token, "LISTGATE_DATABASE_MAX_CONNS": "lots"}, "MAX_CONNS"},
	} {
		t.Run(name, func(t *testing.T) {
			path := ""
			if tc.file != "" {
				path = filepath.Join(t.TempDir(), "c.yaml")
				os.WriteFile(path, []byte(tc.file), 0o600)
			}
			_, err := LoadOrigin(path, env(tc.env))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one naming %s", err, tc.want)
			}
			if strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), token) {
				t.Errorf("error leaks a secret: %v", err)
			}
		})
	}
}
