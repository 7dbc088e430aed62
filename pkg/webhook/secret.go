package webhook

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// SecretPrefix starts every signing secret; the rest is the standard base64
// (with padding) of the HMAC key, as the Standard Webhooks libraries expect.
const SecretPrefix = "whsec_"

// MinMasterKeyLen is the shortest master key ParseMasterKey accepts and
// DeriveSecret uses, in bytes (256 bits).
const MinMasterKeyLen = 32

// secretKeyLen is the length in bytes of a derived signing key (192 bits):
// its base64 is 32 characters with no padding.
const secretKeyLen = 24

// deriveLabel starts the message DeriveSecret authenticates, so that the
// master key's HMACs for this purpose cannot collide with any other use.
const deriveLabel = "listgate webhook secret\x00"

// Errors about secrets. They are returned wrapped with detail (never the
// secret or key itself); compare with errors.Is.
var (
	// ErrMasterKey reports a master key that is empty, not hex or base64, or
	// shorter than MinMasterKeyLen bytes.
	ErrMasterKey = errors.New("webhook: bad master key")
	// ErrSecret reports a signing secret that is not SecretPrefix followed by
	// the standard base64 of at least one byte.
	ErrSecret = errors.New("webhook: bad signing secret")
)

// DeriveSecret returns the signing secret of generation generation of the
// endpoint endpointID:
//
//	"whsec_" + base64(HMAC-SHA256(master, "listgate webhook secret\x00" + endpointID + "\x00" + decimal(generation))[:24])
//
// HMAC-SHA256 keyed with a uniformly random master key is a pseudorandom
// function, so each secret is independent of every other and reveals
// nothing about the master key; this is HKDF-Expand's first block, which
// needs no extract step for a key that is already uniform. The generation
// comes last and never contains a NUL byte, so distinct (endpointID,
// generation) pairs authenticate distinct messages. Rotation raises the
// generation (the store starts at 1); changing the master key changes every
// endpoint's secret at once.
//
// master must come from ParseMasterKey or NewMasterKey: DeriveSecret panics
// if it is shorter than MinMasterKeyLen, because a missing key would
// otherwise give every endpoint a secret anyone could compute. It is safe
// for concurrent use.
func DeriveSecret(master []byte, endpointID string, generation int) string {
	if len(master) < MinMasterKeyLen {
		panic(fmt.Sprintf("webhook: DeriveSecret: master key is %d bytes, need at least %d (use ParseMasterKey)", len(master), MinMasterKeyLen))
	}
	mac := hmac.New(sha256.New, master)
	mac.Write([]byte(deriveLabel))
	mac.Write([]byte(endpointID))
	mac.Write([]byte{0})
	mac.Write([]byte(strconv.Itoa(generation)))
	return SecretPrefix + base64.StdEncoding.EncodeToString(mac.Sum(nil)[:secretKeyLen])
}

// ParseMasterKey decodes the operator's master key (LISTGATE_SECRET_KEY):
// hex (upper or lower case) or base64 (standard or URL alphabet, padded or
// not) of at least MinMasterKeyLen bytes. Surrounding white space is
// ignored. A string of only hex digits and of even length is read as hex.
// Errors wrap ErrMasterKey and never contain the key.
func ParseMasterKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, fmt.Errorf("%w: it is empty (generate one with NewMasterKey, e.g. 'openssl rand -base64 32')", ErrMasterKey)
	}
	key, ok := decodeHex(s)
	if !ok {
		key, ok = decodeBase64(s)
	}
	if !ok {
		return nil, fmt.Errorf("%w: it is neither hex nor base64", ErrMasterKey)
	}
	if len(key) < MinMasterKeyLen {
		return nil, fmt.Errorf("%w: it is %d bytes, need at least %d (generate one with NewMasterKey, e.g. 'openssl rand -base64 32')",
			ErrMasterKey, len(key), MinMasterKeyLen)
	}
	return key, nil
}

// NewMasterKey returns a new master key: the standard base64 of 32 bytes
// from crypto/rand (which does not fail), for LISTGATE_SECRET_KEY.
func NewMasterKey() string {
	key := make([]byte, MinMasterKeyLen)
	rand.Read(key) // never fails: see crypto/rand.Read
	return base64.StdEncoding.EncodeToString(key)
}

// decodeHex decodes s if it is only hex digits, of even length.
func decodeHex(s string) ([]byte, bool) {
	if len(s)%2 != 0 {
		return nil, false
	}
	b, err := hex.DecodeString(s)
	return b, err == nil
}

// decodeBase64 decodes s in any of the four common base64 forms.
func decodeBase64(s string) ([]byte, bool) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.Strict().DecodeString(s); err == nil {
			return b, true
		}
	}
	return nil, false
}

// secretKey returns the HMAC key of a signing secret.
func secretKey(secret string) ([]byte, error) {
	b64, ok := strings.CutPrefix(secret, SecretPrefix)
	if !ok {
		return nil, fmt.Errorf("%w: it does not start with %q", ErrSecret, SecretPrefix)
	}
	key, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, fmt.Errorf("%w: the part after %q is not standard base64", ErrSecret, SecretPrefix)
	}
	if len(key) == 0 {
		return nil, fmt.Errorf("%w: it is empty after %q", ErrSecret, SecretPrefix)
	}
	return key, nil
}
