package otlphttp

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// FromEnv is the configuration for url from the standard variables, each
// OTEL_EXPORTER_OTLP_TRACES_* one taking the place of its
// OTEL_EXPORTER_OTLP_* one: _HEADERS (name=value pairs separated by
// commas, values URL-encoded), _TIMEOUT (milliseconds), _COMPRESSION (gzip
// or none), _CERTIFICATE (the collector's CA, PEM) and _CLIENT_CERTIFICATE
// with _CLIENT_KEY (mutual TLS). A value it cannot use is an error, which
// names the variable but never repeats a header's value. get returns ""
// for an unset variable.
func FromEnv(get func(string) string, url string) (Config, error) {
	cfg := Config{URL: url}
	lookup := func(name string) (string, string) {
		if v := strings.TrimSpace(get("OTEL_EXPORTER_OTLP_TRACES_" + name)); v != "" {
			return "OTEL_EXPORTER_OTLP_TRACES_" + name, v
		}
		return "OTEL_EXPORTER_OTLP_" + name, strings.TrimSpace(get("OTEL_EXPORTER_OTLP_" + name))
	}
	if name, v := lookup("HEADERS"); v != "" {
		h, err := ParseHeaders(v)
		if err != nil {
			return cfg, fmt.Errorf("%s: %w", name, err)
		}
		cfg.Headers = h
	}
	if name, v := lookup("TIMEOUT"); v != "" {
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil || ms <= 0 || ms > int64(time.Hour/time.Millisecond) {
			return cfg, fmt.Errorf("%s=%s: want milliseconds, from 1 to 3600000", name, v)
		}
		cfg.Timeout = time.Duration(ms) * time.Millisecond
	}
	switch name, v := lookup("COMPRESSION"); v {
	case "", "none":
	case "gzip":
		cfg.Gzip = true
	default:
		return cfg, fmt.Errorf("%s=%s: want gzip or none", name, v)
	}
	var tc *tls.Config
	if name, v := lookup("CERTIFICATE"); v != "" {
		pem, err := os.ReadFile(v)
		if err != nil {
			return cfg, fmt.Errorf("%s: %w", name, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return cfg, fmt.Errorf("%s: no PEM certificate in %s", name, v)
		}
		tc = &tls.Config{RootCAs: pool}
	}
	certName, cert := lookup("CLIENT_CERTIFICATE")
	keyName, key := lookup("CLIENT_KEY")
	switch {
	case cert != "" && key != "":
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return cfg, fmt.Errorf("%s, %s: %w", certName, keyName, err)
		}
		if tc == nil {
			tc = &tls.Config{}
		}
		tc.Certificates = []tls.Certificate{pair}
	case cert != "" || key != "":
		return cfg, fmt.Errorf("%s and %s go together", certName, keyName)
	}
	cfg.TLS = tc
	return cfg, nil
}

// ParseHeaders reads OTEL_EXPORTER_OTLP_HEADERS's format: name=value
// pairs separated by commas, each value URL-encoded (%2C for a comma),
// names and values trimmed; empty entries are skipped. An error names the
// entry's position or its header's name, never the value.
func ParseHeaders(s string) (map[string]string, error) {
	h := map[string]string{}
	for i, entry := range strings.Split(s, ",") {
		if strings.TrimSpace(entry) == "" {
			continue
		}
		k, v, ok := strings.Cut(entry, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("entry %d is not name=value", i+1)
		}
		if err := checkHeader(k, ""); err != nil {
			return nil, fmt.Errorf("entry %d: %w", i+1, err)
		}
		uv, err := url.PathUnescape(v)
		if err != nil {
			return nil, fmt.Errorf("the value of %s is not URL-encoded", k)
		}
		uv = strings.TrimSpace(uv)
		if err := checkHeader(k, uv); err != nil {
			return nil, err
		}
		h[k] = uv
	}
	return h, nil
}
