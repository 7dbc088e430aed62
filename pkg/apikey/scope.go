package apikey

import (
	"errors"
	"fmt"
	"strings"
)

// Scope is a set of permissions granted to a key, as a bit set. The zero
// value is the empty set. Scope is a plain value: copy and compare it freely.
type Scope uint8

// The scopes a key can grant. Their names, in the fixed order used by String
// and Names, are listings:read, agents:read, stats:read, leads:write and
// views:write.
const (
	// ListingsRead ("listings:read") reads listings, search, featured
	// listings, field definitions and media objects.
	ListingsRead Scope = 1 << iota
	// AgentsRead ("agents:read") reads agents.
	AgentsRead
	// StatsRead ("stats:read") reads stats summaries.
	StatsRead
	// LeadsWrite ("leads:write") submits leads.
	LeadsWrite
	// ViewsWrite ("views:write") sends listing view beacons, and nothing
	// else: a beacon id is public by design (it sits in a page's source),
	// so a key with ViewsWrite has no other scope (ValidSet).
	ViewsWrite
)

// Scope sets with names of their own.
const (
	// ReadOnly is every read scope: what a paired WordPress site's key gets.
	ReadOnly = ListingsRead | AgentsRead | StatsRead
	// All is every scope this package knows.
	All = ReadOnly | LeadsWrite | ViewsWrite
)

// ValidSet reports whether s may be granted to one key: not empty, only
// known scopes, and ViewsWrite only alone (a public beacon id can never
// read or write anything else).
func (s Scope) ValidSet() bool {
	return s != 0 && s&^All == 0 && (s&ViewsWrite == 0 || s == ViewsWrite)
}

// scopeNames maps each scope to its name, in String's order.
var scopeNames = [...]struct {
	scope Scope
	name  string
}{
	{ListingsRead, "listings:read"},
	{AgentsRead, "agents:read"},
	{StatsRead, "stats:read"},
	{LeadsWrite, "leads:write"},
	{ViewsWrite, "views:write"},
}

// scopeStrings holds String's result for every subset of All, so that String
// does not allocate on the edge's forwarding path.
var scopeStrings = func() (t [All + 1]string) {
	for s := range t {
		t[s] = strings.Join(Scope(s).Names(), ",")
	}
	return t
}()

// Errors returned (wrapped) by ParseScopes and its variants; compare with
// errors.Is.
var (
	// ErrNoScopes reports an empty or blank scope list.
	ErrNoScopes = errors.New("apikey: empty scope list")
	// ErrUnknownScope reports a name that is not a scope; the error returned
	// wraps it and quotes the offending name (cut to 64 bytes).
	ErrUnknownScope = errors.New("apikey: unknown scope")
)

// Has reports whether s contains every scope in want. Has(0) is true.
func (s Scope) Has(want Scope) bool {
	return s&want == want
}

// Names returns the names of the scopes in s in the fixed order
// listings:read, agents:read, stats:read, leads:write, views:write; nil for
// the empty set.
// Bits that are no known scope are ignored. The slice is new on every call.
func (s Scope) Names() []string {
	var names []string
	for _, n := range scopeNames {
		if s&n.scope != 0 {
			names = append(names, n.name)
		}
	}
	return names
}

// String returns the names of the scopes in s joined by commas, without
// spaces, in the order of Names: the form of the X-Listgate-Scopes header,
// which ParseScopes reads back. The empty set is "". Bits that are no known
// scope are appended as "Scope(0x..)", which ParseScopes rejects. String does
// not allocate unless s has such bits.
func (s Scope) String() string {
	if s <= All {
		return scopeStrings[s]
	}
	known := scopeStrings[s&All]
	if known != "" {
		known += ","
	}
	return fmt.Sprintf("%sScope(%#02x)", known, uint8(s&^All))
}

// ScopeByName returns the scope called name and true, or 0 and false if there
// is none. Names are matched exactly: case-sensitive, no trimming.
func ScopeByName(name string) (Scope, bool) {
	return scopeByName(name)
}

// ParseScopes parses a comma-separated list of scope names such as
// "listings:read, leads:write". ASCII spaces and tabs around each name are
// trimmed, duplicates are accepted, and order does not matter. An empty or
// blank list is ErrNoScopes; an empty element (as in "a,,b" or a trailing
// comma) or an unknown name is an error wrapping ErrUnknownScope that quotes
// the bad name. On error the returned set is 0.
func ParseScopes(list string) (Scope, error) {
	return parseScopes(list)
}

// ParseScopesBytes is ParseScopes for a []byte list, such as a header value
// on the edge. It does not allocate unless it returns an error, and does not
// retain list.
func ParseScopesBytes(list []byte) (Scope, error) {
	return parseScopes(list)
}

// ParseScopeList parses scope names given one per element, as in a JSON array
// or repeated command-line flags, with ParseScopes's rules: each element is
// trimmed, duplicates are accepted, an empty slice is ErrNoScopes and an
// empty or unknown element wraps ErrUnknownScope. Elements are not split on
// commas.
func ParseScopeList(names []string) (Scope, error) {
	if len(names) == 0 {
		return 0, ErrNoScopes
	}
	var set Scope
	for _, n := range names {
		sc, err := lookupScope(trimSpace(n))
		if err != nil {
			return 0, err
		}
		set |= sc
	}
	return set, nil
}

// parseScopes implements ParseScopes for both string and []byte.
func parseScopes[T ~string | ~[]byte](list T) (Scope, error) {
	if len(trimSpace(list)) == 0 {
		return 0, ErrNoScopes
	}
	var set Scope
	start := 0
	for i := 0; i <= len(list); i++ {
		if i < len(list) && list[i] != ',' {
			continue
		}
		sc, err := lookupScope(trimSpace(list[start:i]))
		if err != nil {
			return 0, err
		}
		set |= sc
		start = i + 1
	}
	return set, nil
}

// lookupScope is scopeByName with ParseScopes's error.
func lookupScope[T ~string | ~[]byte](name T) (Scope, error) {
	if sc, ok := scopeByName(name); ok {
		return sc, nil
	}
	const maxQuoted = 64
	bad := string(name)
	if len(bad) > maxQuoted {
		bad = bad[:maxQuoted] + "..."
	}
	return 0, fmt.Errorf("%w %q", ErrUnknownScope, bad)
}

// scopeByName implements ScopeByName for both string and []byte without
// allocating.
func scopeByName[T ~string | ~[]byte](name T) (Scope, bool) {
	for _, n := range scopeNames {
		if equal(name, n.name) {
			return n.scope, true
		}
	}
	return 0, false
}

// equal reports whether a and b hold the same bytes.
func equal[T ~string | ~[]byte](a T, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(b); i++ {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// trimSpace removes leading and trailing ASCII spaces and tabs.
func trimSpace[T ~string | ~[]byte](s T) T {
	i, j := 0, len(s)
	for i < j && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	for j > i && (s[j-1] == ' ' || s[j-1] == '\t') {
		j--
	}
	return s[i:j]
}
