package pairing

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"io"
	"strings"
)

// UserCodeAlphabet is the alphabet of user codes: twenty consonants, none
// of which looks like a digit or another letter (no vowels, so no words
// either). A code is 8 of them, shown as XXXX-XXXX: 20^8 ≈ 2.6·10^10 codes.
const UserCodeAlphabet = "BCDFGHJKLMNPQRSTVWXZ"

// Lengths of the codes.
const (
	// UserCodeLen is the length of a normalised user code, dash included.
	UserCodeLen = 9
	// userCodeLetters is the number of letters in a user code.
	userCodeLetters = 8
	// deviceCodeBytes is the randomness of a device code.
	deviceCodeBytes = 32
	// DeviceCodeLen is the length of a device code: 32 random bytes,
	// base64url without padding.
	DeviceCodeLen = 43
)

// ErrMalformedUserCode is NormalizeUserCode's error: the text is not a user
// code in any accepted spelling.
var ErrMalformedUserCode = errors.New("pairing: not a user code (8 letters of BCDFGHJKLMNPQRSTVWXZ, as XXXX-XXXX)")

// isCodeLetter tells the letters of UserCodeAlphabet apart, upper case only.
var isCodeLetter = func() (t [256]bool) {
	for i := 0; i < len(UserCodeAlphabet); i++ {
		t[UserCodeAlphabet[i]] = true
	}
	return t
}()

// newUserCode returns a user code, XXXX-XXXX, with letters drawn uniformly
// from UserCodeAlphabet using the random bytes of r (rejection sampling:
// a byte is used only below 240, the largest multiple of 20).
func newUserCode(r io.Reader) (string, error) {
	const limit = 256 - 256%len(UserCodeAlphabet) // 240
	var out [UserCodeLen]byte
	var buf [32]byte
	n := 0
	for n < userCodeLetters {
		if _, err := io.ReadFull(r, buf[:]); err != nil {
			return "", err
		}
		for _, b := range buf {
			if int(b) >= limit {
				continue
			}
			pos := n
			if n >= 4 {
				pos++ // after the dash
			}
			out[pos] = UserCodeAlphabet[int(b)%len(UserCodeAlphabet)]
			n++
			if n == userCodeLetters {
				break
			}
		}
	}
	out[4] = '-'
	return string(out[:]), nil
}

// newDeviceCode returns a device code: 32 bytes of r, base64url without
// padding (43 characters).
func newDeviceCode(r io.Reader) (string, error) {
	var b [deviceCodeBytes]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// NormalizeUserCode returns code in its canonical form, XXXX-XXXX in upper
// case, accepting what people type: any case, with or without the dash
// (or with a space instead), with spaces around. Anything else — another
// length, a letter outside UserCodeAlphabet, a digit, a second dash — is
// ErrMalformedUserCode. It never panics and does not allocate for a bad
// code.
func NormalizeUserCode(code string) (string, error) {
	code = strings.TrimSpace(code)
	var letters [userCodeLetters]byte
	n := 0
	for i := 0; i < len(code); i++ {
		c := code[i]
		if (c == '-' || c == ' ') && n == 4 && i == 4 {
			continue // the one separator, between the groups
		}
		if c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		if !isCodeLetter[c] || n == userCodeLetters {
			return "", ErrMalformedUserCode
		}
		letters[n] = c
		n++
	}
	if n != userCodeLetters {
		return "", ErrMalformedUserCode
	}
	return string(letters[:4]) + "-" + string(letters[4:]), nil
}

// wellFormedDeviceCode reports whether code could be a device code: 43
// base64url characters.
func wellFormedDeviceCode(code string) bool {
	if len(code) != DeviceCodeLen {
		return false
	}
	for i := 0; i < len(code); i++ {
		c := code[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// HashCode is how codes are stored: SHA-256 of the code's text (a user code
// in its normalised form).
func HashCode(code string) [32]byte { return sha256.Sum256([]byte(code)) }

// userCodeGroupHash is the hash of a normalised user code's first group,
// the lookup key for a code being entered: a wrong code whose first group
// is a live code's counts as a wrong try against that code (Config.MaxWrongEntries).
func userCodeGroupHash(normalised string) [32]byte {
	return sha256.Sum256([]byte("group:" + normalised[:4]))
}
