package rules

import (
	"crypto/sha256"
	"time"
)

// Idempotency-Key rules.
const (
	// MaxIdempotencyKey is the longest key, in bytes.
	MaxIdempotencyKey = 255
	// IdempotencyTTL is how long a key's first response is replayed.
	IdempotencyTTL = 24 * time.Hour
)

// CheckIdempotencyKey returns "" when k is a good Idempotency-Key — 1 to 255
// printable ASCII characters (space to tilde) — and the problem otherwise.
func CheckIdempotencyKey(k string) string {
	if k == "" || len(k) > MaxIdempotencyKey {
		return "must be 1 to 255 characters"
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x20 || k[i] > 0x7e {
			return "must be printable ASCII characters"
		}
	}
	return ""
}

// BodyHash is the fingerprint of a request body that an Idempotency-Key is
// bound to: SHA-256 of the raw bytes.
func BodyHash(body []byte) []byte {
	h := sha256.Sum256(body)
	return h[:]
}
