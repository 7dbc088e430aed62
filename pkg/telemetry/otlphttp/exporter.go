// Package otlphttp is an OpenTelemetry span exporter over OTLP/HTTP with
// protobuf: it encodes the SDK's spans as an ExportTraceServiceRequest by
// hand (AppendRequest, with protowire) and posts them to a collector. It
// is what the programs need of the official otlptracehttp exporter
// without that exporter's dependencies (gRPC and its gateway, which made
// each binary some 25 MB larger).
//
// It runs behind the SDK's batch processor, which calls ExportSpans from
// its own goroutine: a slow or unreachable collector never holds up a
// request, and spans past the processor's queue are dropped.
package otlphttp

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"google.golang.org/protobuf/encoding/protowire"
)

// Defaults and bounds.
const (
	// DefaultTimeout bounds one export, its retries included
	// (OTEL_EXPORTER_OTLP_TIMEOUT).
	DefaultTimeout = 10 * time.Second
	// DefaultMaxBody bounds a request's body before compression; a larger
	// batch is sent in several requests, a span larger alone is dropped.
	DefaultMaxBody = 4 << 20

	maxRetries      = 2               // after the first attempt, for 429, 502, 503, 504 and transport errors
	maxRetryWait    = 5 * time.Second // the longest Retry-After waited for
	maxResponseBody = 64 << 10        // read of a collector's answer
	maxErrorText    = 200             // of a collector's error text, in an error
)

var backoff = [maxRetries]time.Duration{250 * time.Millisecond, time.Second}

// Config is where and how spans are sent.
type Config struct {
	// URL is the full traces URL (http or https), such as
	// http://collector:4318/v1/traces.
	URL string
	// Headers are added to every request (a collector's credentials).
	// Their values are never logged nor put in errors.
	Headers map[string]string
	// Timeout bounds one export with its retries; 0 is DefaultTimeout.
	Timeout time.Duration
	// Gzip compresses the requests' bodies.
	Gzip bool
	// TLS is the client's TLS configuration for an https URL (nil: the
	// system's roots).
	TLS *tls.Config
	// MaxBody bounds a request's body before compression; 0 is
	// DefaultMaxBody.
	MaxBody int
}

// Exporter is an sdktrace.SpanExporter posting to one collector.
type Exporter struct {
	url       string
	display   string // the URL without credentials and query, for errors
	headers   map[string]string
	timeout   time.Duration
	gzip      bool
	maxBody   int
	client    *http.Client
	transport *http.Transport
	stopped   atomic.Bool
}

var _ sdktrace.SpanExporter = (*Exporter)(nil)

// New checks cfg and returns its exporter.
func New(cfg Config) (*Exporter, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil {
		return nil, errors.New("the OTLP traces endpoint is not a URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("the OTLP traces endpoint %s: want an http:// or https:// URL with a host", displayURL(u))
	}
	if cfg.TLS != nil && u.Scheme != "https" {
		return nil, fmt.Errorf("the OTLP traces endpoint %s: certificates are given for a plain http:// endpoint", displayURL(u))
	}
	for k, v := range cfg.Headers {
		if err := checkHeader(k, v); err != nil {
			return nil, err
		}
	}
	e := &Exporter{url: u.String(), display: displayURL(u), headers: cfg.Headers, timeout: cfg.Timeout,
		gzip: cfg.Gzip, maxBody: cfg.MaxBody}
	if e.timeout <= 0 {
		e.timeout = DefaultTimeout
	}
	if e.maxBody <= 0 {
		e.maxBody = DefaultMaxBody
	}
	e.transport = http.DefaultTransport.(*http.Transport).Clone() // proxies from the environment, dial and TLS timeouts
	if cfg.TLS != nil {
		e.transport.TLSClientConfig = cfg.TLS
	}
	e.client = &http.Client{Transport: e.transport,
		// A redirect would carry the headers (credentials) elsewhere.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return e, nil
}

// displayURL is u without its user information and query, which may hold
// credentials.
func displayURL(u *url.URL) string {
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
}

// checkHeader refuses a header net/http would refuse on every request, so
// that the mistake shows at start-up; the value is not repeated.
func checkHeader(k, v string) error {
	if k == "" {
		return errors.New("an OTLP header with an empty name")
	}
	for i := 0; i < len(k); i++ {
		if !isTokenChar(k[i]) {
			return errors.New("an OTLP header's name is not a valid HTTP header name") // it may hold the value
		}
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < ' ' && c != '\t' || c == 0x7f {
			return fmt.Errorf("the OTLP header %s has a control character in its value", k)
		}
	}
	return nil
}

func isTokenChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// ErrShutdown is returned by ExportSpans after Shutdown.
var ErrShutdown = errors.New("otlp exporter shut down")

// ExportSpans sends spans, in as many requests as the body bound needs,
// retrying briefly on 429, 502, 503, 504 (after their Retry-After when it
// is at most 5 s; not at all when it is longer) and on transport errors, within the exporter's timeout and ctx.
// The error says what was lost; it holds no header value.
func (e *Exporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if e.stopped.Load() {
		return ErrShutdown
	}
	if len(spans) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	return e.export(ctx, spans)
}

func (e *Exporter) export(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	body := AppendRequest(nil, spans)
	if len(body) > e.maxBody {
		if len(spans) == 1 {
			return fmt.Errorf("otlp export to %s: span %q dropped: %d bytes encoded, over the %d-byte request bound",
				e.display, spans[0].Name(), len(body), e.maxBody)
		}
		h := len(spans) / 2
		return errors.Join(e.export(ctx, spans[:h]), e.export(ctx, spans[h:]))
	}
	if e.gzip {
		var zb bytes.Buffer
		zw := gzip.NewWriter(&zb)
		zw.Write(body)
		zw.Close()
		body = zb.Bytes()
	}
	if err := e.send(ctx, body); err != nil {
		lost := fmt.Sprintf("%d spans", len(spans))
		if len(spans) == 1 {
			lost = "1 span"
		}
		return fmt.Errorf("otlp export to %s, %s lost: %w", e.display, lost, err)
	}
	return nil
}

// send posts body, retrying as ExportSpans says.
func (e *Exporter) send(ctx context.Context, body []byte) error {
	for attempt := 0; ; attempt++ {
		retryAfter, retry, err := e.post(ctx, body)
		if err == nil || !retry || attempt == maxRetries || ctx.Err() != nil {
			return err
		}
		wait := backoff[attempt]
		if retryAfter > maxRetryWait {
			return fmt.Errorf("%w (not retried: Retry-After %s)", err, retryAfter)
		} else if retryAfter > 0 {
			wait = retryAfter
		}
		if d, ok := ctx.Deadline(); ok && time.Until(d) < wait {
			return fmt.Errorf("%w (not retried: the export's time ends first)", err)
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return err
		}
	}
}

// post makes one attempt. retry says whether another may succeed, after
// retryAfter when the collector said so.
func (e *Exporter) post(ctx context.Context, body []byte) (retryAfter time.Duration, retry bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		return 0, false, errors.New("cannot make the request")
	}
	for k, v := range e.headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("User-Agent", "listgate-otlp-exporter")
	if e.gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := e.client.Do(req)
	if err != nil {
		// The url.Error repeats the URL, query included: keep its cause.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return 0, true, err
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponseBody))
	io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponseBody)) // let the connection be reused
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/x-protobuf") && len(answer) > 0 {
			rejected, msg, err := ParsePartialSuccess(answer)
			if err != nil {
				return 0, false, fmt.Errorf("the collector's answer: %w", err)
			}
			if rejected != 0 || msg != "" {
				return 0, false, fmt.Errorf("the collector rejected %d spans: %s", rejected, quoteShort(msg))
			}
		}
		return 0, false, nil
	}
	err = fmt.Errorf("the collector answered %s", resp.Status)
	if ct := resp.Header.Get("Content-Type"); len(answer) > 0 && (strings.HasPrefix(ct, "text/") || strings.HasPrefix(ct, "application/json")) {
		err = fmt.Errorf("the collector answered %s: %s", resp.Status, quoteShort(string(answer)))
	}
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()), true, err
	}
	return 0, false, err
}

// quoteShort quotes s cut to maxErrorText bytes.
func quoteShort(s string) string {
	if len(s) > maxErrorText {
		s = s[:maxErrorText] + "…"
	}
	return strconv.Quote(s)
}

// parseRetryAfter is a Retry-After header's wait: seconds or an HTTP date;
// 0 when absent or invalid.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseUint(v, 10, 32); err == nil {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// ParsePartialSuccess reads an ExportTraceServiceResponse: the spans the
// collector rejected and its message (both zero on full success).
func ParsePartialSuccess(b []byte) (rejected int64, msg string, err error) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return 0, "", errors.New("not an OTLP export response")
		}
		b = b[n:]
		if num == 1 && typ == protowire.BytesType {
			ps, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return 0, "", errors.New("not an OTLP export response")
			}
			b = b[n:]
			for len(ps) > 0 {
				pnum, ptyp, n := protowire.ConsumeTag(ps)
				if n < 0 {
					return 0, "", errors.New("not an OTLP export response")
				}
				ps = ps[n:]
				switch {
				case pnum == 1 && ptyp == protowire.VarintType:
					v, n := protowire.ConsumeVarint(ps)
					if n < 0 {
						return 0, "", errors.New("not an OTLP export response")
					}
					rejected, ps = int64(v), ps[n:]
				case pnum == 2 && ptyp == protowire.BytesType:
					v, n := protowire.ConsumeBytes(ps)
					if n < 0 {
						return 0, "", errors.New("not an OTLP export response")
					}
					msg, ps = string(v), ps[n:]
				default:
					n := protowire.ConsumeFieldValue(pnum, ptyp, ps)
					if n < 0 {
						return 0, "", errors.New("not an OTLP export response")
					}
					ps = ps[n:]
				}
			}
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return 0, "", errors.New("not an OTLP export response")
		}
		b = b[n:]
	}
	return rejected, msg, nil
}

// Shutdown stops the exporter: later exports fail with ErrShutdown. The
// SDK calls it after the last batch.
func (e *Exporter) Shutdown(ctx context.Context) error {
	e.stopped.Store(true)
	e.transport.CloseIdleConnections()
	return ctx.Err()
}
