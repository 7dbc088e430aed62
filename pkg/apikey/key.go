// Package apikey defines Listgate API keys: their format, offline validation,
// hashing for storage and lookup, and the scopes a key can grant.
//
// A key is "lgk_" followed by 30 base62 characters of randomness (alphabet
// 0-9A-Za-z, about 178 bits) and 6 base62 characters encoding the CRC32 (IEEE)
// of those 30, left-padded with '0': 40 ASCII characters in all. The checksum
// lets the edge and secret scanners reject a string that is not a key without
// a lookup; it is not a secret and says nothing about whether a key exists or
// is revoked. Keys are shown once and stored only as their SHA-256 (Hash).
//
// The package uses only the standard library, imports no adapter, and holds
// no mutable state: every function is safe for concurrent use. Its errors
// never contain a key.
package apikey

import (
	"crypto/rand"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// Key format constants.
const (
	// Prefix starts every key.
	Prefix = "lgk_"
	// Len is the length of a key in bytes (all of them ASCII).
	Len = len(Prefix) + RandomLen + ChecksumLen
	// RandomLen is the number of random base62 characters after Prefix.
	RandomLen = 30
	// ChecksumLen is the number of base62 characters of the CRC32 that end a key.
	ChecksumLen = 6
	// Pattern is a regular expression (RE2 syntax, unanchored) matching strings
	// shaped like a key, for secret scanners. A match still needs Check.
	Pattern = `lgk_[0-9A-Za-z]{36}`
)

// alphabet lists the base62 digits in value order.
const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// isDigit reports for every byte whether it is a base62 digit.
var isDigit = func() (t [256]bool) {
	for i := 0; i < len(alphabet); i++ {
		t[alphabet[i]] = true
	}
	return t
}()

// Errors returned by Check. They are returned unwrapped and never mention the
// key itself; compare with errors.Is.
var (
	// ErrFormat reports a string that is not key-shaped: wrong length, wrong
	// prefix, or a byte outside the base62 alphabet (including any non-ASCII).
	ErrFormat = errors.New("apikey: malformed key")
	// ErrChecksum reports a key-shaped string whose last 6 characters are not
	// the checksum of its random part: a typo, a truncated copy or a forgery.
	ErrChecksum = errors.New("apikey: key checksum mismatch")
)

// Generate returns a new random key read from crypto/rand. Each random
// character is drawn uniformly from the base62 alphabet by rejection sampling.
// The error is non-nil only if the system's random source fails, in which case
// no key is returned. It is safe for concurrent use.
func Generate() (string, error) {
	return generate(rand.Reader)
}

// generate builds a key from the random bytes of r.
func generate(r io.Reader) (string, error) {
	var key [Len]byte
	copy(key[:], Prefix)
	random := key[len(Prefix) : len(Prefix)+RandomLen]
	if err := fillBase62(r, random); err != nil {
		return "", fmt.Errorf("apikey: generate: %w", err)
	}
	sum := encodeChecksum(checksum(random))
	copy(key[len(Prefix)+RandomLen:], sum[:])
	return string(key[:]), nil
}

// fillBase62 fills dst with base62 digits drawn uniformly from r's bytes.
// A byte b is used only if b < 248 (4×62): then b%62 is uniform over the
// alphabet. The 8 larger values are discarded (rejection sampling), so each
// byte is kept with probability 248/256 and one 64-byte read almost always
// suffices.
func fillBase62(r io.Reader, dst []byte) error {
	const limit = 256 - 256%len(alphabet) // 248
	var buf [64]byte
	n := 0
	for n < len(dst) {
		if _, err := io.ReadFull(r, buf[:]); err != nil {
			return err
		}
		for _, b := range buf {
			if int(b) >= limit {
				continue
			}
			dst[n] = alphabet[int(b)%len(alphabet)]
			n++
			if n == len(dst) {
				break
			}
		}
	}
	return nil
}

// Check validates key offline: length, prefix, alphabet and checksum. It
// returns nil, ErrFormat or ErrChecksum (unwrapped). A nil error means only
// that key is well formed, not that it exists; look up Hash(key) for that.
// Check does not allocate.
func Check(key string) error {
	return check(key)
}

// ValidBytes reports whether b is a well-formed key, like Check(string(b)) ==
// nil, without allocating. It is meant for the edge's hot path, where the
// credential is a []byte view of a request header; b is not retained.
func ValidBytes(b []byte) bool {
	return check(b) == nil
}

// check implements Check and ValidBytes for both string and []byte.
func check[T ~string | ~[]byte](k T) error {
	if len(k) != Len {
		return ErrFormat
	}
	for i := 0; i < len(Prefix); i++ {
		if k[i] != Prefix[i] {
			return ErrFormat
		}
	}
	for i := len(Prefix); i < Len; i++ {
		if !isDigit[k[i]] {
			return ErrFormat
		}
	}
	want := encodeChecksum(checksum(k[len(Prefix) : len(Prefix)+RandomLen]))
	got := k[len(Prefix)+RandomLen:]
	for i := range want {
		if got[i] != want[i] {
			return ErrChecksum
		}
	}
	return nil
}

// checksum returns the CRC32 (IEEE) of s, the same value as
// crc32.ChecksumIEEE, computed bytewise so that strings need no conversion.
func checksum[T ~string | ~[]byte](s T) uint32 {
	tab := crc32.IEEETable
	c := ^uint32(0)
	for i := 0; i < len(s); i++ {
		c = tab[byte(c)^s[i]] ^ (c >> 8)
	}
	return ^c
}

// encodeChecksum writes sum in base62, most significant digit first,
// left-padded with '0' to ChecksumLen digits (62^6 > 2^32, so it always fits).
func encodeChecksum(sum uint32) (out [ChecksumLen]byte) {
	for i := ChecksumLen - 1; i >= 0; i-- {
		out[i] = alphabet[sum%uint32(len(alphabet))]
		sum /= uint32(len(alphabet))
	}
	return out
}
