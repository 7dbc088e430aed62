package rules_test

import (
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/listgate/listgate/origin/leads/rules"
)

func mustDecode(tb testing.TB, body string) rules.Lead {
	tb.Helper()
	l, p := rules.Decode([]byte(body))
	if p != nil {
		tb.Fatalf("Decode(%s): %v", body, p)
	}
	return l
}

func TestDecodeValid(t *testing.T) {
	for name, tc := range map[string]struct {
		body  string
		check func(t *testing.T, l rules.Lead)
	}{
		"defaults": {`{"name":"Ann","email":"ann@example.com"}`, func(t *testing.T, l rules.Lead) {
			if l.Type != rules.TypeGeneral || l.Priority != rules.PriorityWarm || string(l.Metadata) != "{}" ||
				l.ListingRef != 0 || l.ListingID != "" || l.AgentEmail != "" || l.Message != "" {
				t.Errorf("%+v", l)
			}
		}},
		"name trimmed": {`{"name":"  Ann Lee \t","email":"ann@example.com"}`, func(t *testing.T, l rules.Lead) {
			if l.Name != "Ann Lee" {
				t.Errorf("name %q", l.Name)
			}
		}},
		"email kept and normalised": {`{"name":"Ann","email":"  Ann.Lee+Home@Example.COM "}`, func(t *testing.T, l rules.Lead) {
			if l.Email != "Ann.Lee+Home@Example.COM" || l.EmailNorm != "ann.lee+home@example.com" {
				t.Errorf("email %q norm %q", l.Email, l.EmailNorm)
			}
		}},
		"international domain": {`{"name":"Ann","email":"ann@bücher.de"}`, func(t *testing.T, l rules.Lead) {
			if l.EmailNorm != "ann@bücher.de" {
				t.Errorf("norm %q", l.EmailNorm)
			}
		}},
		"phone in E.164, original kept": {`{"name":"Ann","phone":"(02) 9999 9999","mobile":"0412 345 678"}`, func(t *testing.T, l rules.Lead) {
			if l.Phone != "(02) 9999 9999" || l.PhoneE164 != "+61299999999" || l.Mobile != "0412 345 678" || l.MobileE164 != "+61412345678" {
				t.Errorf("%+v", l)
			}
		}},
		"foreign phone": {`{"name":"Ann","phone":"+44 20 7946 0958"}`, func(t *testing.T, l rules.Lead) {
			if l.PhoneE164 != "+442079460958" {
				t.Errorf("%q", l.PhoneE164)
			}
		}},
		"same number twice matches once": {`{"name":"Ann","phone":"0412345678","mobile":"+61 412 345 678"}`, func(t *testing.T, l rules.Lead) {
			if got := l.Phones(); !reflect.DeepEqual(got, []string{"+61412345678"}) {
				t.Errorf("phones %v", got)
			}
		}},
		"null and blank optional fields are absent": {`{"name":"Ann","email":"a@example.com","phone":"  ","mobile":null,"message":null,
			"type":null,"priority":"","listing_ref":null,"listing_id":" ","agent_email":"","metadata":null}`, func(t *testing.T, l rules.Lead) {
			if l.Phone != "" || l.Type != rules.TypeGeneral || l.Priority != rules.PriorityWarm || l.ListingID != "" || string(l.Metadata) != "{}" {
				t.Errorf("%+v", l)
			}
		}},
		"every field": {`{"name":"Ann","email":"a@example.com","message":"Is it still available?\nThanks","type":"rental_application",
			"priority":"hot","listing_ref":42,"listing_id":"AG:L1","agent_email":"Al@Agency.example","metadata":{"utm_source":"google","score":7,"ok":true,"none":null}}`,
			func(t *testing.T, l rules.Lead) {
				if l.Type != rules.TypeRentalApplication || l.Priority != rules.PriorityHot || l.ListingRef != 42 ||
					l.ListingID != "AG:L1" || l.AgentEmail != "Al@Agency.example" || l.Message != "Is it still available?\nThanks" {
					t.Errorf("%+v", l)
				}
				if want := `{"none":null,"ok":true,"score":7,"utm_source":"google"}`; string(l.Metadata) != want {
					t.Errorf("metadata %s, want %s", l.Metadata, want)
				}
				if a, u, ok := l.ListingIDParts(); !ok || a != "AG" || u != "L1" {
					t.Errorf("parts %q %q %v", a, u, ok)
				}
			}},
		"metadata numbers made canonical": {`{"name":"Ann","email":"a@example.com","metadata":{"a":1.50,"b":1e21,"c":1e-400,"d":12345678901234567890,"e":-0.0}}`,
			func(t *testing.T, l rules.Lead) {
				if want := `{"a":1.5,"b":1e+21,"c":0,"d":12345678901234567890,"e":0}`; string(l.Metadata) != want {
					t.Errorf("metadata %s, want %s", l.Metadata, want)
				}
			}},
		"no HTML escaping in payload": {`{"name":"<b>Ann</b> & co","email":"a@example.com"}`, func(t *testing.T, l rules.Lead) {
			if want := `{"name":"<b>Ann</b> & co","email":"a@example.com"}`; string(l.Payload) != want {
				t.Errorf("payload %s", l.Payload)
			}
		}},
		"payload keeps values as sent, drops nulls": {`{"metadata":{"z":1,"a":"x"},"email":" A@Example.com ","name":" Ann ","phone":null}`, func(t *testing.T, l rules.Lead) {
			if want := `{"name":" Ann ","email":" A@Example.com ","metadata":{"a":"x","z":1}}`; string(l.Payload) != want {
				t.Errorf("payload %s, want %s", l.Payload, want)
			}
		}},
		"limits exactly": {`{"name":"` + strings.Repeat("é", 200) + `","email":"a@example.com","message":"` + strings.Repeat("ü", 5000) + `"}`,
			func(t *testing.T, l rules.Lead) {}},
		"byte order mark": {"\xef\xbb\xbf" + `{"name":"Ann","email":"a@example.com"}`, func(t *testing.T, l rules.Lead) {
			if l.Name != "Ann" {
				t.Errorf("%+v", l)
			}
		}},
		"metadata of 50 keys": {`{"name":"Ann","email":"a@example.com","metadata":{` + metadataKeys(50) + `}}`, func(t *testing.T, l rules.Lead) {}},
	} {
		t.Run(name, func(t *testing.T) {
			l := mustDecode(t, tc.body)
			tc.check(t, l)
			// What Decode accepts, it accepts again from the payload, the same.
			if again := mustDecode(t, string(l.Payload)); !reflect.DeepEqual(again, l) {
				t.Errorf("payload decodes to\n%+v\nwant\n%+v", again, l)
			}
		})
	}
}

func metadataKeys(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"k` + strings.Repeat("x", i) + `":1`)
	}
	return b.String()
}

// Each rule of API.md, with the details it gives: field → part of the message.
func TestDecodeProblems(t *testing.T) {
	const ok = `"name":"Ann","email":"a@example.com"`
	long := func(n int) string { return strings.Repeat("x", n) }
	for name, tc := range map[string]struct {
		body string
		want map[string]string
	}{
		"empty body":          {``, map[string]string{"body": "empty"}},
		"malformed JSON":      {`{"name":"Ann",`, map[string]string{"body": "not valid JSON"}},
		"bad token":           {`{"name": Ann}`, map[string]string{"body": "not valid JSON"}},
		"array":               {`[{"name":"Ann"}]`, map[string]string{"body": "JSON object"}},
		"string":              {`"Ann"`, map[string]string{"body": "JSON object"}},
		"null":                {`null`, map[string]string{"body": "JSON object"}},
		"trailing data":       {`{` + ok + `} {}`, map[string]string{"body": "after the JSON object"}},
		"not UTF-8":           {"{\"name\":\"Ann\xff\",\"email\":\"a@example.com\"}", map[string]string{"body": "UTF-8"}},
		"unknown field":       {`{` + ok + `,"nmae":"x"}`, map[string]string{"nmae": "not a field"}},
		"two unknown fields":  {`{` + ok + `,"a":1,"b":2}`, map[string]string{"a": "not a field", "b": "not a field"}},
		"repeated field":      {`{` + ok + `,"name":"Bob"}`, map[string]string{"name": "more than once"}},
		"name missing":        {`{"email":"a@example.com"}`, map[string]string{"name": "required"}},
		"name null":           {`{"name":null,"email":"a@example.com"}`, map[string]string{"name": "required"}},
		"name blank":          {`{"name":"  \t ","email":"a@example.com"}`, map[string]string{"name": "blank"}},
		"name too long":       {`{"name":"` + long(201) + `","email":"a@example.com"}`, map[string]string{"name": "at most 200"}},
		"name not a string":   {`{"name":42,"email":"a@example.com"}`, map[string]string{"name": "must be a string"}},
		"name with NUL":       {`{"name":"A\u0000nn","email":"a@example.com"}`, map[string]string{"name": "NUL"}},
		"no contact":          {`{"name":"Ann"}`, map[string]string{"contact": "at least one of email, phone, mobile"}},
		"blank contacts":      {`{"name":"Ann","email":" ","phone":"","mobile":null}`, map[string]string{"contact": "at least one"}},
		"email invalid":       {`{"name":"Ann","email":"ann at example.com"}`, map[string]string{"email": "not an e-mail address"}},
		"email display name":  {`{"name":"Ann","email":"Ann <ann@example.com>"}`, map[string]string{"email": "not an e-mail address"}},
		"email no dot":        {`{"name":"Ann","email":"ann@localhost"}`, map[string]string{"email": "not an e-mail address"}},
		"email IP literal":    {`{"name":"Ann","email":"ann@[192.0.2.1]"}`, map[string]string{"email": "not an e-mail address"}},
		"email double dot":    {`{"name":"Ann","email":"ann@example..com"}`, map[string]string{"email": "not an e-mail address"}},
		"email short TLD":     {`{"name":"Ann","email":"ann@example.c"}`, map[string]string{"email": "not an e-mail address"}},
		"email numeric TLD":   {`{"name":"Ann","email":"ann@example.123"}`, map[string]string{"email": "not an e-mail address"}},
		"email hyphen label":  {`{"name":"Ann","email":"ann@-example.com"}`, map[string]string{"email": "not an e-mail address"}},
		"email too long":      {`{"name":"Ann","email":"a@` + long(250) + `.com"}`, map[string]string{"email": "at most 254"}},
		"email long local":    {`{"name":"Ann","email":"` + long(65) + `@example.com"}`, map[string]string{"email": "not an e-mail address"}},
		"email not a string":  {`{"name":"Ann","email":["a@example.com"]}`, map[string]string{"email": "must be a string"}},
		"phone invalid":       {`{"name":"Ann","phone":"12345"}`, map[string]string{"phone": "not a phone number"}},
		"phone letters":       {`{"name":"Ann","phone":"call me"}`, map[string]string{"phone": "not a phone number"}},
		"phone too long":      {`{"name":"Ann","phone":"` + strings.Repeat("0", 65) + `"}`, map[string]string{"phone": "at most 64"}},
		"phone a number":      {`{"name":"Ann","phone":412345678}`, map[string]string{"phone": "must be a string"}},
		"mobile invalid":      {`{"name":"Ann","mobile":"04"}`, map[string]string{"mobile": "not a phone number"}},
		"type unknown":        {`{` + ok + `,"type":"purchase"}`, map[string]string{"type": "one of inquiry, appraisal"}},
		"type wrong case":     {`{` + ok + `,"type":"Inquiry"}`, map[string]string{"type": "one of"}},
		"type not a string":   {`{` + ok + `,"type":1}`, map[string]string{"type": "must be a string"}},
		"priority unknown":    {`{` + ok + `,"priority":"urgent"}`, map[string]string{"priority": "one of hot, warm, cold"}},
		"priority bool":       {`{` + ok + `,"priority":true}`, map[string]string{"priority": "must be a string"}},
		"message too long":    {`{` + ok + `,"message":"` + long(5001) + `"}`, map[string]string{"message": "at most 5000"}},
		"message object":      {`{` + ok + `,"message":{}}`, map[string]string{"message": "must be a string"}},
		"listing_ref string":  {`{` + ok + `,"listing_ref":"42"}`, map[string]string{"listing_ref": "must be an integer"}},
		"listing_ref float":   {`{` + ok + `,"listing_ref":4.2}`, map[string]string{"listing_ref": "must be an integer"}},
		"listing_ref exp":     {`{` + ok + `,"listing_ref":1e3}`, map[string]string{"listing_ref": "must be an integer"}},
		"listing_ref zero":    {`{` + ok + `,"listing_ref":0}`, map[string]string{"listing_ref": "positive"}},
		"listing_ref minus":   {`{` + ok + `,"listing_ref":-3}`, map[string]string{"listing_ref": "positive"}},
		"listing_ref huge":    {`{` + ok + `,"listing_ref":99999999999999999999}`, map[string]string{"listing_ref": "positive"}},
		"listing_id number":   {`{` + ok + `,"listing_id":42}`, map[string]string{"listing_id": "must be a string"}},
		"listing_id too long": {`{` + ok + `,"listing_id":"` + long(201) + `"}`, map[string]string{"listing_id": "at most 200"}},
		"agent_email invalid": {`{` + ok + `,"agent_email":"al"}`, map[string]string{"agent_email": "not an e-mail address"}},
		"metadata array":      {`{` + ok + `,"metadata":[1]}`, map[string]string{"metadata": "must be an object"}},
		"metadata string":     {`{` + ok + `,"metadata":"x"}`, map[string]string{"metadata": "must be an object"}},
		"metadata nested":     {`{` + ok + `,"metadata":{"a":{"b":1}}}`, map[string]string{"metadata": `value of "a" must be a string, number, boolean or null`}},
		"metadata list value": {`{` + ok + `,"metadata":{"a":[1]}}`, map[string]string{"metadata": `value of "a" must be`}},
		"metadata 51 keys":    {`{` + ok + `,"metadata":{` + metadataKeys(51) + `}}`, map[string]string{"metadata": "at most 50 keys"}},
		"metadata long key":   {`{` + ok + `,"metadata":{"` + long(65) + `":1}}`, map[string]string{"metadata": "longer than 64"}},
		"metadata empty key":  {`{` + ok + `,"metadata":{"":1}}`, map[string]string{"metadata": "must not be empty"}},
		"metadata repeated":   {`{` + ok + `,"metadata":{"a":1,"a":2}}`, map[string]string{"metadata": `"a" is given more than once`}},
		"metadata too big":    {`{` + ok + `,"metadata":{"a":"` + long(8190) + `"}}`, map[string]string{"metadata": "at most 8192 bytes"}},
		"metadata NUL":        {`{` + ok + `,"metadata":{"a":"x\u0000"}}`, map[string]string{"metadata": "NUL"}},
		"metadata overflow":   {`{` + ok + `,"metadata":{"a":1e400}}`, map[string]string{"metadata": "out of range"}},
		"every problem at once": {`{"name":"","email":"nope","phone":"1","type":"x","priority":"y","message":7,"listing_ref":"1",
			"listing_id":[],"agent_email":"z","metadata":[],"extra":true}`, map[string]string{
			"name": "blank", "email": "not an e-mail", "phone": "not a phone", "type": "one of", "priority": "one of",
			"message": "string", "listing_ref": "integer", "listing_id": "string", "agent_email": "not an e-mail",
			"metadata": "object", "extra": "not a field"}},
		"several metadata problems": {`{` + ok + `,"metadata":{"a":{},"":1,"b":[]}}`, map[string]string{"metadata": `value of "a" must be`}},
	} {
		t.Run(name, func(t *testing.T) {
			_, got := rules.Decode([]byte(tc.body))
			if !sameKeys(got, tc.want) {
				t.Fatalf("problems %v\nwant keys %v", got, keys(tc.want))
			}
			for k, part := range tc.want {
				if !strings.Contains(got[k], part) {
					t.Errorf("%s: %q does not say %q", k, got[k], part)
				}
			}
		})
	}
}

func sameKeys(a rules.Problems, b map[string]string) bool {
	return reflect.DeepEqual(keys(a), keys(b))
}

func keys[M ~map[string]string](m M) []string {
	var k []string
	for s := range m {
		k = append(k, s)
	}
	sort.Strings(k)
	return k
}

func TestResolveRefs(t *testing.T) {
	l1 := rules.ListingKey{Ref: 1, AgencyID: "AG", UniqueID: "L1"}
	sharedA := rules.ListingKey{Ref: 2, AgencyID: "AG", UniqueID: "S"}
	sharedB := rules.ListingKey{Ref: 3, AgencyID: "BG", UniqueID: "S"}
	for name, tc := range map[string]struct {
		lead    string
		facts   rules.RefFacts
		want    rules.Refs
		problem map[string]string
	}{
		"nothing":         {`{}`, rules.RefFacts{}, rules.Refs{}, nil},
		"ref found":       {`{"listing_ref":1}`, rules.RefFacts{ByRef: 1}, rules.Refs{ListingRef: 1}, nil},
		"ref missing":     {`{"listing_ref":9}`, rules.RefFacts{}, rules.Refs{}, map[string]string{"listing_ref": "no listing"}},
		"bare id":         {`{"listing_id":"L1"}`, rules.RefFacts{ByID: []rules.ListingKey{l1}}, rules.Refs{ListingRef: 1}, nil},
		"qualified id":    {`{"listing_id":"BG:S"}`, rules.RefFacts{ByID: []rules.ListingKey{sharedB}}, rules.Refs{ListingRef: 3}, nil},
		"id missing":      {`{"listing_id":"L9"}`, rules.RefFacts{}, rules.Refs{}, map[string]string{"listing_id": "no listing"}},
		"qualified wrong": {`{"listing_id":"ZZ:S"}`, rules.RefFacts{}, rules.Refs{}, map[string]string{"listing_id": "no listing"}},
		"shared bare id": {`{"listing_id":"S"}`, rules.RefFacts{ByID: []rules.ListingKey{sharedB, sharedA}}, rules.Refs{},
			map[string]string{"listing_id": `(AG, BG): use the form AGENCYID:UNIQUEID, such as "AG:S"`}},
		"both agree":    {`{"listing_ref":1,"listing_id":"AG:L1"}`, rules.RefFacts{ByRef: 1, ByID: []rules.ListingKey{l1}}, rules.Refs{ListingRef: 1}, nil},
		"both disagree": {`{"listing_ref":2,"listing_id":"L1"}`, rules.RefFacts{ByRef: 2, ByID: []rules.ListingKey{l1}}, rules.Refs{}, map[string]string{"listing_id": "different listing"}},
		"both missing": {`{"listing_ref":9,"listing_id":"L9"}`, rules.RefFacts{}, rules.Refs{},
			map[string]string{"listing_ref": "no listing", "listing_id": "no listing"}},
		"agent found":   {`{"agent_email":"AL@agency.example"}`, rules.RefFacts{AgentID: 7, AgentEmail: "al@agency.example"}, rules.Refs{AgentID: 7, AgentEmail: "al@agency.example"}, nil},
		"agent missing": {`{"agent_email":"zed@agency.example"}`, rules.RefFacts{}, rules.Refs{}, map[string]string{"agent_email": "not an agent"}},
	} {
		t.Run(name, func(t *testing.T) {
			body := strings.Replace(tc.lead, "{", `{"name":"Ann","email":"a@example.com",`, 1)
			body = strings.Replace(body, ",}", "}", 1)
			l := mustDecode(t, body)
			got, problems := rules.ResolveRefs(&l, tc.facts)
			if !sameKeys(problems, tc.problem) {
				t.Fatalf("problems %v, want %v", problems, tc.problem)
			}
			for k, part := range tc.problem {
				if !strings.Contains(problems[k], part) {
					t.Errorf("%s: %q does not say %q", k, problems[k], part)
				}
			}
			if got != tc.want {
				t.Errorf("refs %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestLockKeys(t *testing.T) {
	const site, other = "2b1f5c4e-0000-4000-8000-000000000001", "2b1f5c4e-0000-4000-8000-000000000002"
	keysOf := func(site string, ref int64, body string) []int64 {
		l := mustDecode(t, body)
		return rules.LockKeys(site, ref, &l)
	}
	shares := func(a, b []int64) bool {
		for _, k := range a {
			for _, j := range b {
				if k == j {
					return true
				}
			}
		}
		return false
	}
	base := keysOf(site, 5, `{"name":"Ann","email":"Ann@Example.com","phone":"0412 345 678","type":"inquiry"}`)
	if len(base) != 2 || base[0] >= base[1] {
		t.Fatalf("keys %v: want two, sorted", base)
	}
	for name, tc := range map[string]struct {
		site   string
		ref    int64
		body   string
		shared bool
	}{
		"same e-mail, other case":    {site, 5, `{"name":"Bob","email":" ann@EXAMPLE.com","type":"inquiry"}`, true},
		"same number as mobile":      {site, 5, `{"name":"Bob","mobile":"+61412345678","type":"inquiry"}`, true},
		"other contact":              {site, 5, `{"name":"Ann","email":"bob@example.com","type":"inquiry"}`, false},
		"other type":                 {site, 5, `{"name":"Ann","email":"ann@example.com","type":"appraisal"}`, false},
		"other listing":              {site, 6, `{"name":"Ann","email":"ann@example.com","type":"inquiry"}`, false},
		"no listing":                 {site, 0, `{"name":"Ann","email":"ann@example.com","type":"inquiry"}`, false},
		"other site":                 {other, 5, `{"name":"Ann","email":"ann@example.com","type":"inquiry"}`, false},
		"e-mail text is not a phone": {site, 5, `{"name":"Ann","email":"61412345678@example.com","type":"inquiry"}`, false},
	} {
		t.Run(name, func(t *testing.T) {
			if got := shares(base, keysOf(tc.site, tc.ref, tc.body)); got != tc.shared {
				t.Errorf("shares a lock key: %v, want %v", got, tc.shared)
			}
		})
	}
	same := keysOf(site, 5, `{"name":"Ann","phone":"0412345678","mobile":"0412 345 678","type":"inquiry"}`)
	if len(same) != 1 {
		t.Errorf("one number twice gives keys %v, want one", same)
	}
}

func TestCheckIdempotencyKey(t *testing.T) {
	for name, tc := range map[string]struct {
		key string
		ok  bool
	}{
		"uuid":          {"5f0c6f5e-8c1f-4a51-9f3e-2b8f0f3a8c11", true},
		"one character": {"x", true},
		"spaces inside": {"order 42 / try 1", true},
		"255":           {strings.Repeat("k", 255), true},
		"empty":         {"", false},
		"256":           {strings.Repeat("k", 256), false},
		"non-ASCII":     {"clé", false},
		"control":       {"a\tb", false},
		"DEL":           {"a\x7f", false},
	} {
		t.Run(name, func(t *testing.T) {
			if got := rules.CheckIdempotencyKey(tc.key) == ""; got != tc.ok {
				t.Errorf("CheckIdempotencyKey(%q) ok=%v, want %v", tc.key, got, tc.ok)
			}
		})
	}
}

func TestResponseEncode(t *testing.T) {
	to := "al@agency.example"
	for name, tc := range map[string]struct {
		r    rules.Response
		want string
	}{
		"assigned":   {rules.Response{LeadID: 12, Status: "new", AssignedTo: &to}, `{"lead_id":12,"status":"new","duplicate":false,"assigned_to":"al@agency.example"}` + "\n"},
		"unassigned": {rules.Response{LeadID: 3, Status: "contacted", Duplicate: true}, `{"lead_id":3,"status":"contacted","duplicate":true,"assigned_to":null}` + "\n"},
	} {
		t.Run(name, func(t *testing.T) {
			if got := string(tc.r.Encode()); got != tc.want {
				t.Errorf("%s, want %s", got, tc.want)
			}
		})
	}
}
