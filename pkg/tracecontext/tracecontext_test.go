package tracecontext

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

const valid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		in   string
		ok   bool
	}{
		{"valid", valid, true},
		{"not sampled", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", true},
		{"random flag", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-03", true},
		{"reserved flags", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-09", false},
		{"empty", "", false},
		{"uppercase", "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", false},
		{"version ff", "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false},
		{"version 01", "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false},
		{"longer", valid + "-00", false},
		{"short", valid[:54], false},
		{"zero trace", "00-00000000000000000000000000000000-00f067aa0ba902b7-01", false},
		{"zero span", "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", false},
		{"not hex", "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01", false},
		{"bad flags", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0x", false},
		{"separator", "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false},
		{"spaces", " 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, ok := Parse([]byte(tt.in))
			if ok != tt.ok {
				t.Fatalf("Parse(%q) ok = %v, want %v", tt.in, ok, tt.ok)
			}
			if ok && p.String() != tt.in {
				t.Errorf("round trip: %q, want %q", p.String(), tt.in)
			}
			if p2, ok2 := ParseString(tt.in); ok2 != ok || p2 != p {
				t.Errorf("ParseString differs from Parse")
			}
		})
	}
	p, _ := Parse([]byte(valid))
	if p.TraceID.String() != "4bf92f3577b34da6a3ce929d0e0e4736" || p.SpanID.String() != "00f067aa0ba902b7" || !p.Sampled() {
		t.Errorf("fields: %s %s %v", p.TraceID, p.SpanID, p.Sampled())
	}
}

func TestParseAllocatesNothing(t *testing.T) {
	b := []byte(valid)
	var buf [Length]byte
	if n := testing.AllocsPerRun(100, func() {
		p, _ := Parse(b)
		p.AppendTo(buf[:0])
	}); n != 0 {
		t.Errorf("%v allocations", n)
	}
}

func TestValidState(t *testing.T) {
	tests := []struct {
		name string
		in   string
		ok   bool
	}{
		{"empty", "", true},
		{"one", "rojo=00f067aa0ba902b7", true},
		{"two", "rojo=00f067aa0ba902b7, congo=t61rcWkgMzE", true},
		{"tenant", "fw529a3039@dt=MzE", true},
		{"empty members", "a=1,,b=2", true},
		{"no value", "rojo=", false},
		{"no key", "=x", false},
		{"upper key", "Rojo=1", false},
		{"two at", "a@b@c=1", false},
		{"comma in value", "a=1=2", false},
		{"control", "a=1\x01", false},
		{"too long", "a=" + strings.Repeat("x", MaxStateBytes), false},
		{"too many", strings.Repeat("a=1,", 33), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if ok := ValidState([]byte(tt.in)); ok != tt.ok {
				t.Errorf("ValidState(%q) = %v, want %v", tt.in, ok, tt.ok)
			}
		})
	}
}

// FuzzParse checks Parse against OpenTelemetry's own propagator: for a
// version-00 header of 55 characters both accept the same values with the
// same ids (OpenTelemetry also takes a trailing "-", which version 00 does
// not allow), and a value Parse accepts formats back to itself.
func FuzzParse(f *testing.F) {
	for _, s := range []string{valid, "", "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
		"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		valid + "-", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-ff"} {
		f.Add(s)
	}
	prop := propagation.TraceContext{}
	f.Fuzz(func(t *testing.T, s string) {
		p, ok := Parse([]byte(s))
		if ok {
			if p.String() != s {
				t.Fatalf("round trip %q → %q", s, p.String())
			}
			if !p.TraceID.IsValid() || p.SpanID == (SpanID{}) {
				t.Fatalf("zero id accepted: %q", s)
			}
		}
		if !strings.HasPrefix(s, "00-") {
			if ok {
				t.Fatalf("accepted a version other than 00: %q", s)
			}
			return
		}
		sc := trace.SpanContextFromContext(prop.Extract(context.Background(), propagation.MapCarrier{"traceparent": s}))
		if sc.IsValid() != ok && (ok || len(s) == Length) {
			t.Fatalf("Parse(%q) = %v, OpenTelemetry says %v", s, ok, sc.IsValid())
		}
		if ok && (sc.TraceID() != trace.TraceID(p.TraceID) || sc.SpanID() != trace.SpanID(p.SpanID)) {
			t.Fatalf("ids differ from OpenTelemetry's for %q", s)
		}
	})
}

// FuzzValidState: a state ValidState accepts is one OpenTelemetry parses
// too, once the empty members the specification allows (and OpenTelemetry
// does not) are dropped; and it never panics.
func FuzzValidState(f *testing.F) {
	for _, s := range []string{"", "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE", "a@b=1", "a=1=2", "00=0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !ValidState([]byte(s)) {
			return
		}
		var members []string
		for m := range strings.SplitSeq(s, ",") {
			if m = strings.Trim(m, " \t"); m != "" {
				members = append(members, m)
			}
		}
		if _, err := trace.ParseTraceState(strings.Join(members, ",")); err != nil {
			t.Fatalf("ValidState(%q) but OpenTelemetry: %v", s, err)
		}
	})
}
