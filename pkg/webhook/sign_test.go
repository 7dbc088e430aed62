package webhook

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The specification's test vector, from the official libraries' tests.
const (
	specSecret    = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	specMsgID     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	specTimestamp = 1614265330
	specPayload   = `{"test": 2432232314}`
	specSignature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

// testBody is a lead event as the tests send it.
const testBody = `{"type":"lead.created","timestamp":"2026-03-01T10:00:00Z","site_id":"4b3c","data":{"id":17,"name":"Sam","message":"Café? ☕ \"yes\"\n"}}`

func TestSignKnownAnswer(t *testing.T) {
	got, err := Sign(specSecret, specMsgID, time.Unix(specTimestamp, 0), []byte(specPayload))
	if err != nil || got != specSignature {
		t.Fatalf("Sign = %q, %v; want %q", got, err, specSignature)
	}
}

func TestSignErrors(t *testing.T) {
	ts := time.Unix(specTimestamp, 0)
	for _, tc := range []struct {
		name, secret, id string
		ts               time.Time
		want             error
	}{
		{"bad secret", "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", specMsgID, ts, ErrSecret},
		{"empty id", specSecret, "", ts, ErrMessage},
		{"id with a dot", specSecret, "msg.1", ts, ErrMessage},
		{"id with a space", specSecret, "msg 1", ts, ErrMessage},
		{"id with a newline", specSecret, "msg\n1", ts, ErrMessage},
		{"id not ASCII", specSecret, "msg_é", ts, ErrMessage},
		{"id too long", specSecret, strings.Repeat("m", MaxMessageIDLen+1), ts, ErrMessage},
		{"zero time", specSecret, specMsgID, time.Time{}, ErrMessage},
		{"1970", specSecret, specMsgID, time.Unix(0, 0), ErrMessage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Sign(tc.secret, tc.id, tc.ts, nil); !errors.Is(err, tc.want) {
				t.Fatalf("Sign = %v, want %v", err, tc.want)
			}
			if strings.Contains(tc.secret, "MfKQ") {
				if _, err := Sign(tc.secret, tc.id, tc.ts, nil); err != nil && strings.Contains(err.Error(), "MfKQ") {
					t.Fatalf("the error %q repeats the secret", err)
				}
			}
		})
	}
	if _, err := Sign(specSecret, strings.Repeat("m", MaxMessageIDLen), ts, nil); err != nil {
		t.Fatalf("an id of MaxMessageIDLen bytes: %v", err)
	}
}

func TestSignatureHeader(t *testing.T) {
	now := time.Unix(1_770_000_000, 0)
	current, previous := DeriveSecret(testMaster, testEndpoint, 2), DeriveSecret(testMaster, testEndpoint, 1)
	h := http.Header{}
	if err := SetHeaders(h, []string{current, previous}, "msg_1", now, []byte(testBody)); err != nil {
		t.Fatal(err)
	}
	sigs := strings.Split(h.Get(HeaderSignature), " ")
	if len(sigs) != 2 {
		t.Fatalf("webhook-signature %q: want two signatures", h.Get(HeaderSignature))
	}
	for i, secret := range []string{current, previous} {
		want, _ := Sign(secret, "msg_1", now, []byte(testBody))
		if sigs[i] != want {
			t.Errorf("signature %d = %s, want %s", i, sigs[i], want)
		}
		if err := Verify(secret, h, []byte(testBody), 0, now); err != nil {
			t.Errorf("secret %d does not verify: %v", i, err)
		}
	}
	if h.Get(HeaderID) != "msg_1" || h.Get(HeaderTimestamp) != "1770000000" {
		t.Errorf("headers = %v", h)
	}

	if got, _ := SignatureHeader([]string{current, current}, "msg_1", now, nil); strings.Contains(got, " ") {
		t.Errorf("a repeated secret signed twice: %q", got)
	}
	if _, err := SignatureHeader(nil, "msg_1", now, nil); !errors.Is(err, ErrMessage) {
		t.Errorf("no secrets: %v, want ErrMessage", err)
	}
	if _, err := SignatureHeader([]string{current, "whsec_!"}, "msg_1", now, nil); !errors.Is(err, ErrSecret) {
		t.Errorf("a bad second secret: %v, want ErrSecret", err)
	}
	h2 := http.Header{}
	if err := SetHeaders(h2, []string{current}, "msg.1", now, nil); err == nil || len(h2) != 0 {
		t.Errorf("SetHeaders with a bad id = %v and set %v", err, h2)
	}
}

func TestVerify(t *testing.T) {
	secret := DeriveSecret(testMaster, testEndpoint, 1)
	other := DeriveSecret(testMaster, testEndpoint, 2)
	sent := time.Unix(1_770_000_000, 0)
	body := []byte(testBody)
	signed := func(secrets ...string) http.Header {
		h := http.Header{}
		if err := SetHeaders(h, secrets, "msg_42", sent, body); err != nil {
			t.Fatal(err)
		}
		return h
	}
	with := func(h http.Header, key, value string) http.Header {
		h = h.Clone()
		if value == "" {
			h.Del(key)
		} else {
			h.Set(key, value)
		}
		return h
	}
	good := signed(secret)
	sig := good.Get(HeaderSignature)
	for _, tc := range []struct {
		name      string
		header    http.Header
		body      string
		tolerance time.Duration
		now       time.Time
		want      error
	}{
		{"valid", good, testBody, 0, sent, nil},
		{"valid, rotation", signed(other, secret), testBody, 0, sent, nil},
		{"signature among others", with(good, HeaderSignature, "v2,abc  v1,bm90IGl0 "+sig+" v1a,"), testBody, 0, sent, nil},
		{"signature in a second header line", http.Header{"Webhook-Id": {"msg_42"}, "Webhook-Timestamp": {"1770000000"}, "Webhook-Signature": {"v1,bm90IGl0", sig}}, testBody, 0, sent, nil},
		{"at the tolerance, late", good, testBody, 0, sent.Add(DefaultTolerance), nil},
		{"at the tolerance, early", good, testBody, 0, sent.Add(-DefaultTolerance), nil},
		{"too old", good, testBody, 0, sent.Add(DefaultTolerance + time.Second), ErrTooOld},
		{"too new", good, testBody, 0, sent.Add(-DefaultTolerance - time.Second), ErrTooNew},
		{"wider tolerance", good, testBody, time.Hour, sent.Add(59 * time.Minute), nil},
		{"narrower tolerance", good, testBody, time.Second, sent.Add(2 * time.Second), ErrTooOld},
		{"timestamp 1", with(good, HeaderTimestamp, "1"), testBody, 0, sent, ErrTooOld},
		{"negative timestamp", with(good, HeaderTimestamp, "-9223372036854775808"), testBody, 0, sent, ErrTimestamp},
		{"timestamp overflows", with(good, HeaderTimestamp, "99999999999999999999"), testBody, 0, sent, ErrTimestamp},
		{"tampered body", good, strings.Replace(testBody, "Sam", "Sal", 1), 0, sent, ErrNoSignature},
		{"empty body", good, "", 0, sent, ErrNoSignature},
		{"tampered id", with(good, HeaderID, "msg_43"), testBody, 0, sent, ErrNoSignature},
		{"tampered timestamp", with(good, HeaderTimestamp, "1770000001"), testBody, 0, sent, ErrNoSignature},
		{"timestamp with a plus", with(good, HeaderTimestamp, "+1770000000"), testBody, 0, sent, ErrTimestamp},
		{"timestamp with a leading zero", with(good, HeaderTimestamp, "01770000000"), testBody, 0, sent, ErrNoSignature},
		{"other secret", signed(other), testBody, 0, sent, ErrNoSignature},
		{"other version", with(good, HeaderSignature, "v2"+strings.TrimPrefix(sig, "v1")), testBody, 0, sent, ErrNoSignature},
		{"truncated signature", with(good, HeaderSignature, sig[:len(sig)-2]), testBody, 0, sent, ErrNoSignature},
		{"no id", with(good, HeaderID, ""), testBody, 0, sent, ErrMissingHeader},
		{"no timestamp", with(good, HeaderTimestamp, ""), testBody, 0, sent, ErrMissingHeader},
		{"no signature", with(good, HeaderSignature, ""), testBody, 0, sent, ErrMissingHeader},
		{"blank signature", with(good, HeaderSignature, "  "), testBody, 0, sent, ErrMissingHeader},
		{"timestamp not a number", with(good, HeaderTimestamp, "yesterday"), testBody, 0, sent, ErrTimestamp},
		{"timestamp in milliseconds", with(good, HeaderTimestamp, "1770000000000"), testBody, 0, sent, ErrTooNew},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Verify(secret, tc.header, []byte(tc.body), tc.tolerance, tc.now)
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Fatalf("Verify = %v, want %v", err, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), strings.TrimPrefix(secret, SecretPrefix)) {
				t.Fatalf("the error %q repeats the secret", err)
			}
		})
	}
	if err := Verify("whsec", good, body, 0, sent); !errors.Is(err, ErrSecret) {
		t.Errorf("Verify with a bad secret = %v, want ErrSecret", err)
	}
}

func BenchmarkSignatureHeader(b *testing.B) {
	secrets := []string{DeriveSecret(testMaster, testEndpoint, 2), DeriveSecret(testMaster, testEndpoint, 1)}
	body := []byte(strings.Repeat(testBody, 8))
	ts := time.Unix(specTimestamp, 0)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := SignatureHeader(secrets, specMsgID, ts, body); err != nil {
			b.Fatal(err)
		}
	}
}
