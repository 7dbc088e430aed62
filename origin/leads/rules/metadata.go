package rules

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// decodeMetadata checks the metadata object: at most MaxMetadataKeys keys,
// each 1 to MaxMetadataKey characters and given once, values strings,
// numbers, booleans or null, no NUL characters, and at most
// MaxMetadataBytes once encoded canonically. It returns the canonical
// encoding (keys sorted, numbers in a form Postgres jsonb always accepts),
// the values for the payload, and "" — or a message naming every problem.
func decodeMetadata(raw json.RawMessage) (json.RawMessage, map[string]any, string) {
	if len(raw) == 0 || raw[0] != '{' {
		return nil, nil, "must be an object"
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil { // '{'; raw came whole out of a valid document
		return nil, nil, "must be an object"
	}
	values := map[string]any{}
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	count := 0
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, "must be an object"
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, "must be an object"
		}
		count++
		shown := quoteKey(key)
		switch {
		case key == "":
			add("keys must not be empty")
			continue
		case utf8.RuneCountInString(key) > MaxMetadataKey:
			add("key %s is longer than %d characters", shown, MaxMetadataKey)
			continue
		case strings.IndexByte(key, 0) >= 0:
			add("key %s contains a NUL character", shown)
			continue
		}
		if _, dup := values[key]; dup {
			add("key %s is given more than once", shown)
			continue
		}
		value, msg := metadataValue(v)
		if msg != "" {
			add("value of %s %s", shown, msg)
			continue
		}
		values[key] = value
	}
	if count > MaxMetadataKeys {
		add("must have at most %d keys, has %d", MaxMetadataKeys, count)
	}
	if len(problems) > 0 {
		return nil, nil, joinProblems(problems)
	}
	canonical := encodeCanonical(values)
	if len(canonical) > MaxMetadataBytes {
		return nil, nil, fmt.Sprintf("must be at most %d bytes encoded, is %d", MaxMetadataBytes, len(canonical))
	}
	return canonical, values, ""
}

// metadataValue checks one metadata value and returns it in canonical form.
func metadataValue(v json.RawMessage) (any, string) {
	switch v[0] {
	case 'n':
		return nil, ""
	case 't':
		return true, ""
	case 'f':
		return false, ""
	case '"':
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, "is not a valid string"
		}
		if strings.IndexByte(s, 0) >= 0 {
			return nil, "contains a NUL character"
		}
		return s, ""
	case '{', '[':
		return nil, "must be a string, number, boolean or null"
	}
	n, ok := canonicalNumber(string(v))
	if !ok {
		return nil, "is a number out of range"
	}
	return n, ""
}

// canonicalNumber returns a JSON number literal: an integer of up to 30
// characters as it is, any other number as the shortest form of its
// float64 value. ok is false for a number beyond float64's range. The result
// is stable (canonicalNumber of it returns it) and always fits Postgres
// numeric, which a literal like 1e-99999 would not.
func canonicalNumber(lit string) (json.Number, bool) {
	if isIntegerLiteral([]byte(lit)) && len(lit) <= 30 {
		return json.Number(lit), true
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil && !isUnderflow(f) || math.IsInf(f, 0) || math.IsNaN(f) {
		return "", false
	}
	if f == 0 {
		return "0", true // also -0 and underflow
	}
	return json.Number(strconv.FormatFloat(f, 'g', -1, 64)), true
}

// isUnderflow reports whether ParseFloat's range error came from a number
// too small for float64 (it returns ±0 then), which rounds to 0.
func isUnderflow(f float64) bool { return f == 0 }

// quoteKey quotes a metadata key for a message, shortened to 40 characters.
func quoteKey(k string) string {
	if utf8.RuneCountInString(k) > 40 {
		k = string([]rune(k)[:40]) + "…"
	}
	return strconv.Quote(k)
}

// joinProblems joins up to five messages; more are counted.
func joinProblems(p []string) string {
	if len(p) <= 5 {
		return strings.Join(p, "; ")
	}
	return strings.Join(p[:5], "; ") + fmt.Sprintf("; and %d more", len(p)-5)
}
