package apikey

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestScopeString(t *testing.T) {
	tests := []struct {
		name  string
		scope Scope
		want  string
	}{
		{"empty", 0, ""},
		{"listings", ListingsRead, "listings:read"},
		{"agents", AgentsRead, "agents:read"},
		{"stats", StatsRead, "stats:read"},
		{"leads", LeadsWrite, "leads:write"},
		{"pair in fixed order", LeadsWrite | ListingsRead, "listings:read,leads:write"},
		{"read only", ReadOnly, "listings:read,agents:read,stats:read"},
		{"all", All, "listings:read,agents:read,stats:read,leads:write,views:write"},
		{"views", ViewsWrite, "views:write"},
		{"unknown bit alone", 1 << 5, "Scope(0x20)"},
		{"unknown bits with known", StatsRead | 0xc0, "stats:read,Scope(0xc0)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.scope.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
			if got, want := strings.Join(tt.scope.Names(), ","), tt.want; tt.scope <= All && got != want {
				t.Errorf("Names() = %q, want %q", got, want)
			}
		})
	}
}

func TestScopeNames(t *testing.T) {
	if got := Scope(0).Names(); got != nil {
		t.Errorf("Scope(0).Names() = %q, want nil", got)
	}
	if got, want := (AgentsRead | 0xe0).Names(), []string{"agents:read"}; !slices.Equal(got, want) {
		t.Errorf("Names() with unknown bits = %q, want %q", got, want)
	}
	for _, name := range All.Names() {
		if s, ok := ScopeByName(name); !ok || s.String() != name {
			t.Errorf("ScopeByName(%q) = %v, %v", name, s, ok)
		}
	}
}

func TestScopeHas(t *testing.T) {
	tests := []struct {
		name      string
		set, want Scope
		has       bool
	}{
		{"member", ReadOnly, StatsRead, true},
		{"non-member", ReadOnly, LeadsWrite, false},
		{"subset", All, ListingsRead | LeadsWrite, true},
		{"partial subset", ListingsRead, ListingsRead | AgentsRead, false},
		{"empty want", 0, 0, true},
		{"empty set", 0, ListingsRead, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.set.Has(tt.want); got != tt.has {
				t.Errorf("(%v).Has(%v) = %v, want %v", tt.set, tt.want, got, tt.has)
			}
		})
	}
}

func TestScopeByName(t *testing.T) {
	tests := []struct {
		name string
		want Scope
		ok   bool
	}{
		{"listings:read", ListingsRead, true},
		{"agents:read", AgentsRead, true},
		{"stats:read", StatsRead, true},
		{"leads:write", LeadsWrite, true},
		{"Listings:read", 0, false},
		{" listings:read", 0, false},
		{"listings", 0, false},
		{"listings:write", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ScopeByName(tt.name)
			if got != tt.want || ok != tt.ok {
				t.Errorf("ScopeByName(%q) = %v, %v; want %v, %v", tt.name, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestParseScopes(t *testing.T) {
	tests := []struct {
		name    string
		list    string
		want    Scope
		wantErr error
		errHas  string // the error must quote this
	}{
		{name: "one", list: "listings:read", want: ListingsRead},
		{name: "two", list: "listings:read,leads:write", want: ListingsRead | LeadsWrite},
		{name: "any order", list: "leads:write,listings:read", want: ListingsRead | LeadsWrite},
		{name: "spaces trimmed", list: " listings:read ,\tstats:read\t", want: ListingsRead | StatsRead},
		{name: "duplicates", list: "agents:read,agents:read", want: AgentsRead},
		{name: "all", list: "stats:read,agents:read,views:write,leads:write,listings:read", want: All},
		{name: "read only string", list: ReadOnly.String(), want: ReadOnly},
		{name: "empty", list: "", wantErr: ErrNoScopes},
		{name: "blank", list: " \t ", wantErr: ErrNoScopes},
		{name: "unknown", list: "listings:read,listings:write", wantErr: ErrUnknownScope, errHas: `"listings:write"`},
		{name: "wrong case", list: "LEADS:WRITE", wantErr: ErrUnknownScope, errHas: `"LEADS:WRITE"`},
		{name: "trailing comma", list: "listings:read,", wantErr: ErrUnknownScope, errHas: `""`},
		{name: "empty element", list: "listings:read,,stats:read", wantErr: ErrUnknownScope, errHas: `""`},
		{name: "lone comma", list: ",", wantErr: ErrUnknownScope, errHas: `""`},
		{name: "semicolon separator", list: "listings:read;stats:read", wantErr: ErrUnknownScope, errHas: `"listings:read;stats:read"`},
		{name: "unicode space not trimmed", list: "\u00a0stats:read", wantErr: ErrUnknownScope, errHas: `"\u00a0stats:read"`},
		{name: "long name cut", list: strings.Repeat("x", 100), wantErr: ErrUnknownScope, errHas: `"` + strings.Repeat("x", 64) + `..."`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, p := range []struct {
				name  string
				parse func(string) (Scope, error)
			}{
				{"ParseScopes", ParseScopes},
				{"ParseScopesBytes", func(s string) (Scope, error) { return ParseScopesBytes([]byte(s)) }},
			} {
				got, err := p.parse(tt.list)
				if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
					t.Fatalf("%s(%q) error = %v, want %v", p.name, tt.list, err, tt.wantErr)
				}
				if got != tt.want {
					t.Errorf("%s(%q) = %v, want %v", p.name, tt.list, got, tt.want)
				}
				if err != nil && !strings.Contains(err.Error(), tt.errHas) {
					t.Errorf("%s(%q) error %q does not contain %s", p.name, tt.list, err, tt.errHas)
				}
			}
		})
	}
}

func TestParseScopeList(t *testing.T) {
	tests := []struct {
		name    string
		names   []string
		want    Scope
		wantErr error
	}{
		{name: "one", names: []string{"stats:read"}, want: StatsRead},
		{name: "several trimmed", names: []string{" leads:write", "agents:read "}, want: LeadsWrite | AgentsRead},
		{name: "duplicates", names: []string{"stats:read", "stats:read"}, want: StatsRead},
		{name: "nil", names: nil, wantErr: ErrNoScopes},
		{name: "empty", names: []string{}, wantErr: ErrNoScopes},
		{name: "empty element", names: []string{"stats:read", ""}, wantErr: ErrUnknownScope},
		{name: "comma list is one unknown name", names: []string{"stats:read,agents:read"}, wantErr: ErrUnknownScope},
		{name: "unknown", names: []string{"admin"}, wantErr: ErrUnknownScope},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseScopeList(tt.names)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Fatalf("ParseScopeList(%q) error = %v, want %v", tt.names, err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("ParseScopeList(%q) = %v, want %v", tt.names, got, tt.want)
			}
		})
	}
}

// TestScopeRoundTrip checks every non-empty set of known scopes through
// String/ParseScopes and Names/ParseScopeList.
func TestScopeRoundTrip(t *testing.T) {
	for s := Scope(1); s <= All; s++ {
		if got, err := ParseScopes(s.String()); err != nil || got != s {
			t.Errorf("ParseScopes(%q) = %v, %v; want %v", s.String(), got, err, s)
		}
		if got, err := ParseScopeList(s.Names()); err != nil || got != s {
			t.Errorf("ParseScopeList(%q) = %v, %v; want %v", s.Names(), got, err, s)
		}
	}
}

func TestScopeAllocs(t *testing.T) {
	header := []byte("listings:read, agents:read,stats:read ,leads:write, views:write")
	tests := []struct {
		name string
		f    func()
	}{
		{"ParseScopesBytes", func() {
			if s, err := ParseScopesBytes(header); err != nil || s != All {
				t.Fatalf("ParseScopesBytes = %v, %v", s, err)
			}
		}},
		{"String", func() { _ = All.String() }},
		{"Has", func() { _ = ReadOnly.Has(StatsRead) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if n := testing.AllocsPerRun(100, tt.f); n != 0 {
				t.Errorf("%v allocations per run, want 0", n)
			}
		})
	}
}

func BenchmarkParseScopesBytes(b *testing.B) {
	header := []byte("listings:read,agents:read,stats:read")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseScopesBytes(header); err != nil {
			b.Fatal(err)
		}
	}
}

func TestValidSet(t *testing.T) {
	for _, tt := range []struct {
		name  string
		scope Scope
		want  bool
	}{
		{"empty", 0, false},
		{"read only", ReadOnly, true},
		{"leads", LeadsWrite, true},
		{"views alone", ViewsWrite, true},
		{"views with a read", ViewsWrite | StatsRead, false},
		{"views with listings", ViewsWrite | ListingsRead, false},
		{"all", All, false},
		{"unknown bit", 1 << 7, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.scope.ValidSet(); got != tt.want {
				t.Errorf("%v.ValidSet() = %v, want %v", tt.scope, got, tt.want)
			}
		})
	}
}
