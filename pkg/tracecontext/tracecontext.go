// Package tracecontext parses and formats the W3C Trace Context headers
// (traceparent and tracestate, https://www.w3.org/TR/trace-context/) without
// allocating, for the edge's request path and the origin's logs. It knows
// nothing of OpenTelemetry: pkg/telemetry does the spans.
//
// Parsing is strict: version 00 only, exactly 55 characters, lowercase hex,
// trace and parent ids not all zeros, no flag but sampled (01) and random
// (02), which version 00 defines. A header that fails is to be treated
// as absent — the receiver starts a new trace — as the specification says.
package tracecontext

// HeaderParent and HeaderState are the headers' names.
const (
	HeaderParent = "traceparent"
	HeaderState  = "tracestate"
)

// Length of a version-00 traceparent: "00-" 32 hex "-" 16 hex "-" 2 hex.
const Length = 55

// MaxStateBytes bounds a tracestate header kept and passed on; a longer one
// is dropped (the specification lets a vendor truncate or drop it; 512 is
// what it asks platforms to propagate at least).
const MaxStateBytes = 512

// maxStateMembers is the specification's limit of list members.
const maxStateMembers = 32

// TraceID and SpanID are a trace's and a span's ids.
type (
	TraceID [16]byte
	SpanID  [8]byte
)

// Parent is a parsed traceparent.
type Parent struct {
	TraceID TraceID
	SpanID  SpanID // the caller's span: the parent of the receiver's
	Flags   byte   // bit 0: sampled; bit 1: random
}

// Sampled reports the sampled flag.
func (p Parent) Sampled() bool { return p.Flags&1 == 1 }

// Parse parses a traceparent header value; ok is false when it is not a
// valid version-00 traceparent.
func Parse(b []byte) (p Parent, ok bool) {
	if len(b) != Length || b[0] != '0' || b[1] != '0' || b[2] != '-' || b[35] != '-' || b[52] != '-' {
		return Parent{}, false
	}
	if !decode(p.TraceID[:], b[3:35]) || !decode(p.SpanID[:], b[36:52]) {
		return Parent{}, false
	}
	var f [1]byte
	if !decode(f[:], b[53:55]) {
		return Parent{}, false
	}
	p.Flags = f[0]
	if p.Flags > 3 || isZero(p.TraceID[:]) || isZero(p.SpanID[:]) {
		return Parent{}, false
	}
	return p, true
}

// ParseString is Parse of a string.
func ParseString(s string) (Parent, bool) {
	if len(s) != Length {
		return Parent{}, false
	}
	var b [Length]byte
	copy(b[:], s)
	return Parse(b[:])
}

// AppendTo appends the traceparent header value of p.
func (p Parent) AppendTo(dst []byte) []byte {
	dst = append(dst, '0', '0', '-')
	dst = appendHex(dst, p.TraceID[:])
	dst = append(dst, '-')
	dst = appendHex(dst, p.SpanID[:])
	dst = append(dst, '-')
	return appendHex(dst, []byte{p.Flags})
}

// String is the header value.
func (p Parent) String() string { return string(p.AppendTo(make([]byte, 0, Length))) }

// AppendTo appends the id in lowercase hex.
func (t TraceID) AppendTo(dst []byte) []byte { return appendHex(dst, t[:]) }

// String is the id in lowercase hex, as logs and trace viewers show it.
func (t TraceID) String() string { return string(t.AppendTo(make([]byte, 0, 32))) }

// IsValid reports whether the id is not all zeros.
func (t TraceID) IsValid() bool { return !isZero(t[:]) }

// AppendTo appends the id in lowercase hex.
func (s SpanID) AppendTo(dst []byte) []byte { return appendHex(dst, s[:]) }

// String is the id in lowercase hex.
func (s SpanID) String() string { return string(s.AppendTo(make([]byte, 0, 16))) }

// ValidState reports whether a tracestate header value may be passed on: at
// most MaxStateBytes, at most 32 list members, each empty or key=value with
// the specification's grammar (simple-key, or tenant-id@system-id, in
// lowercase letters, digits and "_-*/"; a value of printable ASCII but ","
// and "=", not ending in a space), no key twice.
func ValidState(b []byte) bool {
	if len(b) > MaxStateBytes {
		return false
	}
	var keys [maxStateMembers][]byte
	members := 0
	for len(b) > 0 {
		var m []byte
		m, b, _ = cut(b, ',')
		m = trimOWS(m)
		if len(m) == 0 {
			continue
		}
		if members == maxStateMembers {
			return false
		}
		key, ok := validMember(m)
		if !ok {
			return false
		}
		for _, k := range keys[:members] {
			if string(k) == string(key) {
				return false
			}
		}
		keys[members] = key
		members++
	}
	return true
}

// validMember checks one key=value and returns its key.
func validMember(m []byte) ([]byte, bool) {
	key, val, found := cut(m, '=')
	if !found || len(val) == 0 || len(val) > 256 || !validKey(key) {
		return nil, false
	}
	for i, c := range val {
		if c < 0x20 || c > 0x7e || c == ',' || c == '=' || (c == ' ' && i == len(val)-1) {
			return nil, false
		}
	}
	return key, true
}

// validKey: simple-key = lcalpha 0*255(keychar); multi-tenant-key =
// tenant-id "@" system-id, tenant-id = (lcalpha / DIGIT) 0*240(keychar),
// system-id = lcalpha 0*13(keychar).
func validKey(key []byte) bool {
	tenant, system, multi := cut(key, '@')
	if !multi {
		return len(key) > 0 && len(key) <= 256 && key[0] >= 'a' && key[0] <= 'z' && keyChars(key[1:])
	}
	return len(tenant) > 0 && len(tenant) <= 241 && (tenant[0] >= 'a' && tenant[0] <= 'z' || tenant[0] >= '0' && tenant[0] <= '9') &&
		keyChars(tenant[1:]) && len(system) > 0 && len(system) <= 14 && system[0] >= 'a' && system[0] <= 'z' && keyChars(system[1:])
}

func keyChars(b []byte) bool {
	for _, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '*' || c == '/') {
			return false
		}
	}
	return true
}

func cut(b []byte, sep byte) (before, after []byte, found bool) {
	for i, c := range b {
		if c == sep {
			return b[:i], b[i+1:], true
		}
	}
	return b, nil, false
}

func trimOWS(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

const hexDigits = "0123456789abcdef"

func appendHex(dst, src []byte) []byte {
	for _, c := range src {
		dst = append(dst, hexDigits[c>>4], hexDigits[c&0xf])
	}
	return dst
}

// decode decodes lowercase hex into dst (len(src) == 2*len(dst)).
func decode(dst, src []byte) bool {
	for i := range dst {
		hi, ok1 := nibble(src[2*i])
		lo, ok2 := nibble(src[2*i+1])
		if !ok1 || !ok2 {
			return false
		}
		dst[i] = hi<<4 | lo
	}
	return true
}

func nibble(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

func isZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
