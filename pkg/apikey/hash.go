package apikey

import "crypto/sha256"

// Hash returns the SHA-256 of the full key (prefix and checksum included),
// the only form in which keys are stored and the key of the edge's key cache.
// A fast unsalted hash is enough because keys carry about 178 bits of
// randomness: there is nothing to brute-force. Hash does not check the key's
// format; call Check first. It is safe for concurrent use.
func Hash(key string) [32]byte {
	return sha256.Sum256([]byte(key))
}

// HashBytes is Hash for a []byte key; HashBytes(b) == Hash(string(b)). It does
// not allocate and does not retain b.
func HashBytes(b []byte) [32]byte {
	return sha256.Sum256(b)
}
