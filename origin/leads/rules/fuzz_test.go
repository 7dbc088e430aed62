package rules_test

import (
	"reflect"
	"testing"

	"github.com/listgate/listgate/origin/leads/rules"
)

// FuzzDecodeLead feeds arbitrary bodies to the decoder: it never panics,
// every rejection says why, and whatever it accepts is a well-formed lead
// whose payload decodes again to the same lead.
//
//	go test ./origin/leads/rules -run '^$' -fuzz FuzzDecodeLead -fuzztime 60s
func FuzzDecodeLead(f *testing.F) {
	for _, seed := range []string{
		`{"name":"Ann","email":"ann@example.com"}`,
		`{"name":" Ann ","phone":"(02) 9999 9999","mobile":"+61 412 345 678","type":"inquiry","priority":"hot"}`,
		`{"name":"Ann","email":"A@B.co","message":"hi\n","listing_ref":12,"listing_id":"AG:L1","agent_email":"al@agency.example"}`,
		`{"name":"Ann","email":"a@example.com","metadata":{"a":1.5e3,"b":"x","c":true,"d":null,"e":-0}}`,
		`{"name":"Ann","email":"a@example.com","metadata":{"a":{"b":1}}}`,
		`{"name":"Ann","name":"Bob"}`,
		`{"name":"\u0000"}`,
		`{"name":"Ann","email":"\ud800@example.com"}`,
		`{"name":null,"email":null}`,
		`[1,2]`, `{`, ``, `{"a":1} x`, "{\"name\":\"\xff\"}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		l, problems := rules.Decode(body)
		if problems != nil {
			if len(problems) == 0 {
				t.Fatal("non-nil empty problems")
			}
			for k, v := range problems {
				if v == "" {
					t.Fatalf("problem %q without a message", k)
				}
			}
			return
		}
		if l.Name == "" || !l.HasContact() || l.Type == "" || l.Priority == "" || len(l.Metadata) == 0 || len(l.Payload) == 0 {
			t.Fatalf("accepted an incomplete lead %+v from %q", l, body)
		}
		if l.Email != "" && l.EmailNorm == "" || l.Phone != "" && l.PhoneE164 == "" || l.Mobile != "" && l.MobileE164 == "" {
			t.Fatalf("contact not normalised: %+v", l)
		}
		again, problems := rules.Decode(l.Payload)
		if problems != nil {
			t.Fatalf("accepted %q but not its payload %s: %v", body, l.Payload, problems)
		}
		if !reflect.DeepEqual(again, l) {
			t.Fatalf("payload %s decodes to\n%+v\nwant\n%+v", l.Payload, again, l)
		}
	})
}
