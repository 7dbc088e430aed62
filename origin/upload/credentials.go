package upload

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"io"

	"github.com/listgate/listgate/origin/store"
)

// Credential formats: a prefix that says what the string is (for people and
// secret scanners) and base62 characters from crypto/rand.
const (
	ClientIDPrefix = "lgc_"
	ClientIDLen    = len(ClientIDPrefix) + 24
	SecretPrefix   = "lgs_"
	SecretLen      = len(SecretPrefix) + 40
	TokenPrefix    = "lgt_"
	TokenLen       = len(TokenPrefix) + 40
)

// alphabet lists the base62 digits.
const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// newCredential returns prefix followed by n base62 characters read from
// r, each drawn uniformly by rejection sampling.
func newCredential(r io.Reader, prefix string, n int) (string, error) {
	out := make([]byte, len(prefix), len(prefix)+n)
	copy(out, prefix)
	var buf [64]byte
	for len(out) < cap(out) {
		if _, err := io.ReadFull(r, buf[:]); err != nil {
			return "", fmt.Errorf("upload: random source: %w", err)
		}
		for _, b := range buf {
			// 248 = 4·62: bytes at or above it would bias the draw.
			if b < 248 && len(out) < cap(out) {
				out = append(out, alphabet[b%62])
			}
		}
	}
	return string(out), nil
}

// wellFormed reports whether s is prefix followed by exactly n-len(prefix)
// base62 characters, so that a string that cannot be a credential is
// refused without a database lookup.
func wellFormed(s, prefix string, n int) bool {
	if len(s) != n || s[:len(prefix)] != prefix {
		return false
	}
	for i := len(prefix); i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') {
			return false
		}
	}
	return true
}

// hashSecret is the stored form of a client secret or an access token. A
// fast unsalted hash is enough: both carry about 238 bits of randomness.
func hashSecret(s string) [32]byte { return sha256.Sum256([]byte(s)) }

// CreateClient creates an upload API client for a site and returns its
// record and its secret, which exists nowhere else: the caller shows it
// once. An unknown site is NOT_FOUND; a blank name is VALIDATION_ERROR.
func CreateClient(ctx context.Context, db *store.DB, siteID, name string) (store.OAuthClient, string, error) {
	id, err := newCredential(rand.Reader, ClientIDPrefix, ClientIDLen-len(ClientIDPrefix))
	if err != nil {
		return store.OAuthClient{}, "", err
	}
	secret, err := newCredential(rand.Reader, SecretPrefix, SecretLen-len(SecretPrefix))
	if err != nil {
		return store.OAuthClient{}, "", err
	}
	c, err := db.CreateOAuthClient(ctx, store.NewOAuthClient{SiteID: siteID, ClientID: id, Name: name,
		SecretHash: hashSecret(secret)})
	if err != nil {
		return store.OAuthClient{}, "", err
	}
	return c, secret, nil
}
