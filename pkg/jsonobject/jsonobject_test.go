package jsonobject_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/listgate/listgate/pkg/jsonobject"
)

func TestSplit(t *testing.T) {
	for name, tc := range map[string]struct {
		body    string
		members []jsonobject.Member
		problem string
	}{
		"members in order": {`{"b":1,"a":"x","b":null}`, []jsonobject.Member{{Name: "b", Raw: json.RawMessage(`1`)},
			{Name: "a", Raw: json.RawMessage(`"x"`)}, {Name: "b", Raw: json.RawMessage(`null`), Repeated: true}}, ""},
		"escaped name":    {`{"\u0061":[1, 2]}`, []jsonobject.Member{{Name: "a", Raw: json.RawMessage(`[1, 2]`)}}, ""},
		"byte order mark": {"\xef\xbb\xbf{\"a\":1.50}", []jsonobject.Member{{Name: "a", Raw: json.RawMessage(`1.50`)}}, ""},
		"empty object":    {" {} \n", nil, ""},
		"not UTF-8":       {"{\"a\":\"\xff\"}", nil, "is not valid UTF-8"},
		"empty":           {" ", nil, "is empty: send a JSON object"},
		"array":           {`[1]`, nil, "must be a JSON object"},
		"huge number":     {`1e999`, nil, "must be a JSON object"},
		"unclosed":        {`{"a":1`, nil, "is not valid JSON"},
		"bad value":       {`{"a":tru}`, nil, "is not valid JSON"},
		"bad name":        {`{a:1}`, nil, "is not valid JSON"},
		"trailing":        {`{"a":1} {}`, nil, "has data after the JSON object"},
		"trailing junk":   {`{"a":1} x`, nil, "has data after the JSON object"},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := jsonobject.Split([]byte(tc.body))
			if tc.problem == "" {
				if err != nil || !reflect.DeepEqual(got, tc.members) {
					t.Fatalf("got %+v, %v; want %+v", got, err, tc.members)
				}
				return
			}
			je, ok := errors.AsType[*jsonobject.Error](err)
			if !ok || je.Problem != tc.problem || got != nil {
				t.Fatalf("got %+v, %v; want problem %q", got, err, tc.problem)
			}
			if (je.Syntax != nil) != (tc.problem == "is not valid JSON") {
				t.Errorf("Syntax %v for %q", je.Syntax, je.Problem)
			}
		})
	}
}

func TestString(t *testing.T) {
	for raw, want := range map[string]struct {
		s           string
		present, ok bool
	}{
		`"a\u00e9"`: {"aé", true, true},
		`""`:        {"", true, true},
		`null`:      {"", false, true},
		`1`:         {"", true, false},
		`["a"]`:     {"", true, false},
		`"open`:     {"", true, false},
		``:          {"", true, false},
	} {
		s, present, ok := jsonobject.String(json.RawMessage(raw))
		if s != want.s || present != want.present || ok != want.ok {
			t.Errorf("String(%s) = %q %v %v, want %q %v %v", raw, s, present, ok, want.s, want.present, want.ok)
		}
	}
}
