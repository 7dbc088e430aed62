package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The headers of a webhook (Standard Webhooks). Header names are case
// insensitive; http.Header stores them as "Webhook-Id" and so on.
const (
	// HeaderID names the message: the same across every retry of it, so a
	// receiver dedupes on it.
	HeaderID = "webhook-id"
	// HeaderTimestamp is the unix time in seconds of the attempt's signature.
	HeaderTimestamp = "webhook-timestamp"
	// HeaderSignature holds one or more space-separated "v1,<base64>"
	// signatures, one per secret that signs.
	HeaderSignature = "webhook-signature"
)

// DefaultTolerance is how far a webhook-timestamp may be from the receiver's
// clock, either way, for Verify when given no tolerance. It is the
// specification's recommendation.
const DefaultTolerance = 5 * time.Minute

// MaxMessageIDLen bounds a message id, in bytes.
const MaxMessageIDLen = 255

// Errors from Sign, SignatureHeader, SetHeaders and Verify. They are
// returned wrapped with detail (never a secret); compare with errors.Is.
var (
	// ErrMessage reports a message Sign refuses: an id that is empty, longer
	// than MaxMessageIDLen, or has a byte outside visible ASCII or a '.',
	// or a timestamp not after 1970, or no secret to sign with.
	ErrMessage = errors.New("webhook: cannot sign message")
	// ErrMissingHeader reports a webhook without one of the three headers.
	ErrMissingHeader = errors.New("webhook: missing header")
	// ErrTimestamp reports a webhook-timestamp that is not unix seconds
	// (digits only).
	ErrTimestamp = errors.New("webhook: bad webhook-timestamp")
	// ErrTooOld reports a webhook-timestamp further in the past than the
	// tolerance: a replay, or a receiver whose clock is wrong.
	ErrTooOld = errors.New("webhook: message timestamp too old")
	// ErrTooNew reports a webhook-timestamp further in the future than the
	// tolerance.
	ErrTooNew = errors.New("webhook: message timestamp too new")
	// ErrNoSignature reports that no v1 signature matches the secret.
	ErrNoSignature = errors.New("webhook: no matching signature")
)

// Sign returns the signature of a message with one secret: "v1," and the
// standard base64 of HMAC-SHA256(key, msgID + "." + unix seconds of ts +
// "." + body), key being the base64-decoded part of secret after "whsec_".
// Errors wrap ErrSecret or ErrMessage. It is safe for concurrent use.
func Sign(secret, msgID string, ts time.Time, body []byte) (string, error) {
	key, err := secretKey(secret)
	if err != nil {
		return "", err
	}
	if err := checkMessage(msgID, ts); err != nil {
		return "", err
	}
	return sign(key, msgID, strconv.FormatInt(ts.Unix(), 10), body), nil
}

// SignatureHeader returns the webhook-signature header of a message signed
// with each of secrets, space-separated, in order (a repeated secret signs
// once). While an endpoint's secret is rotated both its new and its previous
// secret sign, so a receiver holding either accepts the message. Errors
// wrap ErrSecret or ErrMessage (also for an empty secrets).
func SignatureHeader(secrets []string, msgID string, ts time.Time, body []byte) (string, error) {
	if len(secrets) == 0 {
		return "", fmt.Errorf("%w: no secret", ErrMessage)
	}
	if err := checkMessage(msgID, ts); err != nil {
		return "", err
	}
	sigs := make([]string, 0, len(secrets))
	for i, secret := range secrets {
		if slices.Contains(secrets[:i], secret) {
			continue
		}
		key, err := secretKey(secret)
		if err != nil {
			return "", fmt.Errorf("secret %d: %w", i, err)
		}
		sigs = append(sigs, sign(key, msgID, strconv.FormatInt(ts.Unix(), 10), body))
	}
	return strings.Join(sigs, " "), nil
}

// SetHeaders sets a request's webhook-id, webhook-timestamp and
// webhook-signature headers for body sent at ts, signed with each of
// secrets (see SignatureHeader). Each attempt is signed anew with its own
// ts; msgID and body stay the same across retries. On error h is unchanged.
func SetHeaders(h http.Header, secrets []string, msgID string, ts time.Time, body []byte) error {
	sig, err := SignatureHeader(secrets, msgID, ts, body)
	if err != nil {
		return err
	}
	h.Set(HeaderID, msgID)
	h.Set(HeaderTimestamp, strconv.FormatInt(ts.Unix(), 10))
	h.Set(HeaderSignature, sig)
	return nil
}

// Verify checks a received webhook as a receiver should: the three headers
// are present, webhook-timestamp is within tolerance of now either way
// (tolerance <= 0 means DefaultTolerance), and one of the v1 signatures in
// webhook-signature (several values of the header are read as one list) is
// body's signature with secret, compared in constant time. Signatures of
// other versions are ignored. Errors wrap ErrSecret, ErrMissingHeader,
// ErrTimestamp, ErrTooOld, ErrTooNew or ErrNoSignature.
func Verify(secret string, header http.Header, body []byte, tolerance time.Duration, now time.Time) error {
	key, err := secretKey(secret)
	if err != nil {
		return err
	}
	id, tsText := header.Get(HeaderID), header.Get(HeaderTimestamp)
	sigs := strings.Fields(strings.Join(header.Values(HeaderSignature), " "))
	switch {
	case id == "":
		return fmt.Errorf("%w: %s", ErrMissingHeader, HeaderID)
	case tsText == "":
		return fmt.Errorf("%w: %s", ErrMissingHeader, HeaderTimestamp)
	case len(sigs) == 0:
		return fmt.Errorf("%w: %s", ErrMissingHeader, HeaderSignature)
	}
	ts, err := strconv.ParseInt(tsText, 10, 64)
	if err != nil || !isDigits(tsText) {
		return fmt.Errorf("%w: not unix seconds", ErrTimestamp)
	}
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	switch age := now.Sub(time.Unix(ts, 0)); {
	case age > tolerance:
		return fmt.Errorf("%w: %s old, tolerance %s", ErrTooOld, age.Truncate(time.Second), tolerance)
	case age < -tolerance:
		return fmt.Errorf("%w: %s ahead, tolerance %s", ErrTooNew, (-age).Truncate(time.Second), tolerance)
	}
	// The header's own text is signed, as receivers that do not parse it do.
	want := []byte(sign(key, id, tsText, body))
	for _, sig := range sigs {
		if strings.HasPrefix(sig, "v1,") && hmac.Equal([]byte(sig), want) {
			return nil
		}
	}
	return ErrNoSignature
}

// sign returns "v1," and the base64 of the message's HMAC.
func sign(key []byte, msgID, ts string, body []byte) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(msgID))
	mac.Write([]byte{'.'})
	mac.Write([]byte(ts))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// checkMessage checks what Sign signs besides the body. The id must be a
// valid header value and hold no '.', so that "{id}.{timestamp}.{body}"
// splits one way only.
func checkMessage(msgID string, ts time.Time) error {
	if msgID == "" || len(msgID) > MaxMessageIDLen {
		return fmt.Errorf("%w: the id must be 1 to %d bytes", ErrMessage, MaxMessageIDLen)
	}
	for i := 0; i < len(msgID); i++ {
		if c := msgID[i]; c <= ' ' || c > '~' || c == '.' {
			return fmt.Errorf("%w: the id may hold only visible ASCII other than '.'", ErrMessage)
		}
	}
	if ts.Unix() <= 0 {
		return fmt.Errorf("%w: the timestamp must be after 1970", ErrMessage)
	}
	return nil
}
