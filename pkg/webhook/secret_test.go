package webhook

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

// testMaster is the master key of the tests: bytes 0 to 31.
var testMaster = func() []byte {
	b := make([]byte, 32)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}()

const testEndpoint = "3f0c2a9e-5b1d-4c8e-9a7f-2d6b8e1c4f03"

// TestDeriveSecretKnownAnswer pins the derivation: changing it changes every
// deployed endpoint's secret. The values were computed with Python's hmac.
func TestDeriveSecretKnownAnswer(t *testing.T) {
	for _, tc := range []struct {
		name string
		gen  int
		want string
	}{
		{"generation 1", 1, "whsec_ED9iYPweF5bN0b+OrAzuVxT3zdexBG7t"},
		{"generation 2", 2, "whsec_Z9mn9vpPri4UvQwEDQz8hAT8pRzP57gK"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := DeriveSecret(testMaster, testEndpoint, tc.gen); got != tc.want {
				t.Fatalf("DeriveSecret = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestDeriveSecretIndependent(t *testing.T) {
	other := bytes.Clone(testMaster)
	other[31] ^= 1
	seen := map[string]string{}
	for name, s := range map[string]string{
		"base":             DeriveSecret(testMaster, testEndpoint, 1),
		"next generation":  DeriveSecret(testMaster, testEndpoint, 2),
		"other endpoint":   DeriveSecret(testMaster, "a"+testEndpoint, 1),
		"other master":     DeriveSecret(other, testEndpoint, 1),
		"id ends in digit": DeriveSecret(testMaster, testEndpoint+"\x001", 1),
		"generation 11":    DeriveSecret(testMaster, testEndpoint, 11),
		"generation 0":     DeriveSecret(testMaster, testEndpoint, 0),
		"generation -1":    DeriveSecret(testMaster, testEndpoint, -1),
	} {
		if prev, ok := seen[s]; ok {
			t.Errorf("%s and %s derive the same secret", name, prev)
		}
		seen[s] = name
		key, err := secretKey(s)
		if err != nil {
			t.Fatalf("%s: derived secret does not parse: %v", name, err)
		}
		if len(key) != secretKeyLen || len(s) != len(SecretPrefix)+32 {
			t.Errorf("%s: %s: want a %d-byte key in 32 base64 characters", name, s, secretKeyLen)
		}
	}
	if DeriveSecret(testMaster, testEndpoint, 1) != DeriveSecret(bytes.Clone(testMaster), testEndpoint, 1) {
		t.Error("DeriveSecret is not deterministic")
	}
}

func TestDeriveSecretPanicsWithoutKey(t *testing.T) {
	for _, master := range [][]byte{nil, {}, testMaster[:31]} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("DeriveSecret with a %d-byte master key did not panic", len(master))
				}
			}()
			DeriveSecret(master, testEndpoint, 1)
		}()
	}
}

func TestParseMasterKey(t *testing.T) {
	key48 := bytes.Repeat([]byte{0xfb, 0xff, 0x3e}, 16) // base64 with + and / (- and _ in the URL alphabet)
	for _, tc := range []struct {
		name    string
		in      string
		want    []byte
		wantErr string
	}{
		{"hex", hex.EncodeToString(testMaster), testMaster, ""},
		{"upper-case hex", strings.ToUpper(hex.EncodeToString(testMaster)), testMaster, ""},
		{"base64", base64.StdEncoding.EncodeToString(testMaster), testMaster, ""},
		{"base64 without padding", base64.RawStdEncoding.EncodeToString(testMaster), testMaster, ""},
		{"base64 URL", base64.URLEncoding.EncodeToString(key48), key48, ""},
		{"base64 URL without padding", base64.RawURLEncoding.EncodeToString(testMaster), testMaster, ""},
		{"base64 standard 48 bytes", base64.StdEncoding.EncodeToString(key48), key48, ""},
		{"surrounding white space", " \t" + base64.StdEncoding.EncodeToString(testMaster) + "\n", testMaster, ""},
		{"empty", "", nil, "it is empty"},
		{"only spaces", "   ", nil, "it is empty"},
		{"too short hex", hex.EncodeToString(testMaster[:16]), nil, "16 bytes, need at least 32"},
		{"too short base64", base64.StdEncoding.EncodeToString(testMaster[:31]), nil, "31 bytes, need at least 32"},
		{"neither", "this is not a key, it is a sentence!", nil, "neither hex nor base64"},
		{"mixed alphabets", "ab+_" + base64.RawStdEncoding.EncodeToString(testMaster), nil, "neither hex nor base64"},
		{"whsec secret", DeriveSecret(testMaster, testEndpoint, 1), nil, "neither hex nor base64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseMasterKey(tc.in)
			if tc.wantErr != "" {
				if !errors.Is(err, ErrMasterKey) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseMasterKey = %v, want ErrMasterKey with %q", err, tc.wantErr)
				}
				if s := strings.TrimSpace(tc.in); len(s) > 4 && strings.Contains(err.Error(), s) {
					t.Fatalf("the error %q repeats the key", err)
				}
				return
			}
			if err != nil || !bytes.Equal(got, tc.want) {
				t.Fatalf("ParseMasterKey = %x, %v; want %x", got, err, tc.want)
			}
		})
	}
}

func TestNewMasterKey(t *testing.T) {
	a, b := NewMasterKey(), NewMasterKey()
	if a == b {
		t.Fatal("two master keys are equal")
	}
	key, err := ParseMasterKey(a)
	if err != nil || len(key) != MinMasterKeyLen {
		t.Fatalf("ParseMasterKey(NewMasterKey()) = %d bytes, %v", len(key), err)
	}
}

func TestSecretKeyErrors(t *testing.T) {
	for _, tc := range []struct{ name, secret, want string }{
		{"no prefix", base64.StdEncoding.EncodeToString(testMaster), "does not start with"},
		{"only the prefix", SecretPrefix, "empty"},
		{"not base64", SecretPrefix + "not base64!", "not standard base64"},
		{"URL alphabet", SecretPrefix + "-_-_", "not standard base64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := secretKey(tc.secret)
			if !errors.Is(err, ErrSecret) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("secretKey = %v, want ErrSecret with %q", err, tc.want)
			}
		})
	}
}
