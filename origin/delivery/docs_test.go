package delivery_test

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/listgate/listgate/origin/delivery"
)

// The full lead.created example in docs/webhooks.md (the last) has exactly the fields a
// payload has.
func TestPayloadExampleInDocs(t *testing.T) {
	b, err := os.ReadFile("../../docs/webhooks.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i := strings.LastIndex(doc, "```json\n{\n  \"type\": \"lead.created\"")
	if i < 0 {
		t.Fatal("docs/webhooks.md has no lead.created example")
	}
	block := doc[i+len("```json\n"):]
	block = block[:strings.Index(block, "```")]
	var example map[string]any
	if err := json.Unmarshal([]byte(block), &example); err != nil {
		t.Fatalf("the example is not JSON: %v", err)
	}
	s := "x"
	p := delivery.Payload{Type: "lead.created", Timestamp: time.Now(), SiteID: "s", Data: delivery.Lead{
		Metadata: json.RawMessage(`{}`), Listing: &delivery.Listing{Headline: &s}}}
	out, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var real map[string]any
	if err := json.Unmarshal(out, &real); err != nil {
		t.Fatal(err)
	}
	for _, path := range [][2]map[string]any{{example, real},
		{example["data"].(map[string]any), real["data"].(map[string]any)},
		{example["data"].(map[string]any)["listing"].(map[string]any), real["data"].(map[string]any)["listing"].(map[string]any)}} {
		if got, want := keys(path[0]), keys(path[1]); !slices.Equal(got, want) {
			t.Errorf("documented fields %v, a payload has %v", got, want)
		}
	}
}

func keys(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
