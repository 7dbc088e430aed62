// Package promtexttest checks a Prometheus text exposition the way
// Prometheus reads it, for tests: it parses it with Prometheus' own parser
// (github.com/prometheus/common/expfmt) and holds every family to
// Listgate's rules. Only tests import it.
package promtexttest

import (
	"errors"
	"fmt"
	"io"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Families parses an exposition with Prometheus' text parser, which refuses
// a family described twice (a second HELP or TYPE line) or a TYPE after its
// samples, and then checks every family:
//
//   - it has a TYPE line (the parser alone takes a family without one as
//     untyped) and a HELP line with text;
//   - its name is listgate_<program>_… (program edge or origin), or one of
//     the Go runtime's and process's standard go_… and process_… names;
//   - of Listgate's own families, a counter's name ends in _total, and only
//     a counter's does, and a duration is in seconds and a size in bytes
//     (no _ms, _milliseconds, _us or _kb suffix).
//
// It returns the families by name and every problem found, joined.
func Families(r io.Reader) (map[string]*dto.MetricFamily, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("Prometheus' parser: %w", err)
	}
	var errs []error
	for name, mf := range mfs {
		if err := check(name, mf); err != nil {
			errs = append(errs, err)
		}
	}
	return mfs, errors.Join(errs...)
}

func check(name string, mf *dto.MetricFamily) error {
	if mf.Type == nil || mf.GetType() == dto.MetricType_UNTYPED {
		return fmt.Errorf("%s: no TYPE line", name)
	}
	if mf.Help == nil || strings.TrimSpace(mf.GetHelp()) == "" {
		return fmt.Errorf("%s: no HELP text", name)
	}
	standard := strings.HasPrefix(name, "go_") || strings.HasPrefix(name, "process_")
	if !standard && !strings.HasPrefix(name, "listgate_edge_") && !strings.HasPrefix(name, "listgate_origin_") {
		return fmt.Errorf("%s: not in the listgate_edge_ or listgate_origin_ namespace", name)
	}
	if standard {
		return nil // the library's names, as Prometheus' Go client has them
	}
	counter := mf.GetType() == dto.MetricType_COUNTER
	if counter != strings.HasSuffix(name, "_total") {
		return fmt.Errorf("%s: a %s; counters, and only counters, end in _total", name, strings.ToLower(mf.GetType().String()))
	}
	for _, bad := range []string{"_ms", "_milliseconds", "_us", "_microseconds", "_kb", "_kib", "_mb"} {
		if strings.HasSuffix(strings.TrimSuffix(name, "_total"), bad) {
			return fmt.Errorf("%s: not in base units (seconds, bytes)", name)
		}
	}
	return nil
}

// SeriesNames are the names a PromQL expression can select from the
// families: each family's name, and a histogram's _bucket, _sum and _count
// (a summary's _sum and _count).
func SeriesNames(mfs map[string]*dto.MetricFamily) map[string]bool {
	names := map[string]bool{}
	for name, mf := range mfs {
		names[name] = true
		switch mf.GetType() {
		case dto.MetricType_HISTOGRAM:
			names[name+"_bucket"], names[name+"_sum"], names[name+"_count"] = true, true, true
		case dto.MetricType_SUMMARY:
			names[name+"_sum"], names[name+"_count"] = true, true
		}
	}
	return names
}
