package webhook

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

// FuzzVerify feeds Verify headers and bodies as a receiver gets them from
// the network: it never panics, its errors are the documented ones, and it
// accepts a message only when the header holds the message's signature
// with the secret.
func FuzzVerify(f *testing.F) {
	secret := DeriveSecret(testMaster, testEndpoint, 1)
	now := time.Unix(1772359200, 0)
	good, _ := Sign(secret, "msg_1", now, []byte(testBody))
	for _, tc := range [][4]string{
		{"msg_1", "1772359200", good, testBody},
		{"msg_1", "1772359200", "v1,x " + good, testBody},
		{"msg_1", "1772359200", "v2," + good[3:], testBody},
		{"msg_1", "+1772359200", good, testBody},
		{"msg_1", "99999999999999999999", good, testBody},
		{"", "", "", ""},
		{"msg.1", "1772359200", "v1,", "{}"},
	} {
		f.Add(tc[0], tc[1], tc[2], []byte(tc[3]))
	}
	f.Fuzz(func(t *testing.T, id, ts, sig string, body []byte) {
		h := http.Header{}
		h.Set(HeaderID, id)
		h.Set(HeaderTimestamp, ts)
		h.Set(HeaderSignature, sig)
		err := Verify(secret, h, body, 0, now)
		if err != nil {
			for _, want := range []error{ErrMissingHeader, ErrTimestamp, ErrTooOld, ErrTooNew, ErrNoSignature} {
				if errors.Is(err, want) {
					return
				}
			}
			t.Fatalf("Verify: %v is none of the documented errors", err)
		}
		key, _ := secretKey(secret)
		if want := sign(key, h.Get(HeaderID), h.Get(HeaderTimestamp), body); !strings.Contains(h.Get(HeaderSignature), want) {
			t.Fatalf("Verify accepted id %q, timestamp %q, signature %q: none is %s", id, ts, sig, want)
		}
	})
}
