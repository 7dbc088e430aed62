package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/listgate/listgate/origin/store/storetest"
)

func TestImportReaxmlCommand(t *testing.T) {
	c := newCLI(t, storetest.URL(t))
	var site struct{ ID string }
	c.mustJSON(&site, "sites", "create", "--name", "Import Realty", "--plan", "starter", "--json")

	bad := filepath.Join(t.TempDir(), "bad.xml")
	os.WriteFile(bad, []byte(`<propertyList><rental modTime="2024-01-01-10:00:00"><agentID>A</agentID><uniqueID>1</uniqueID></rental>
<rental modTime="yesterday"><agentID>A</agentID><uniqueID>2</uniqueID></rental></propertyList>`), 0o600)
	files := []string{"../../shared/testdata/reaxml/i4ucode_rental_sample.xml", bad}

	type summary struct {
		Created, Updated, Unchanged, Deleted, Skipped int
		List                                          []struct {
			File, Message string
			Line          int
			ListingID     string `json:"listing_id"`
		} `json:"errors"`
	}
	var first summary
	c.mustJSON(&first, append([]string{"import", "reaxml", "--site", site.ID, "--json"}, files...)...)
	if first.Created != 4 || len(first.List) != 1 {
		t.Fatalf("first import %+v", first)
	}
	if e := first.List[0]; e.File != bad || e.Line != 2 || e.ListingID != "A:2" {
		t.Errorf("error %+v", e)
	}
	var second summary
	c.mustJSON(&second, append([]string{"import", "reaxml", "--site", site.ID, "--json"}, files...)...)
	if second.Created+second.Updated != 0 || second.Unchanged != 4 {
		t.Errorf("second import %+v", second)
	}
	code, out, _ := c.run("import", "reaxml", "--site", site.ID, files[0])
	if code != 0 || !strings.Contains(out, "unchanged 3") {
		t.Errorf("text output: %d %q", code, out)
	}
	for name, args := range map[string][]string{
		"no files":     {"import", "reaxml", "--site", site.ID},
		"no site":      {"import", "reaxml", files[0]},
		"no format":    {"import", "--site", site.ID, files[0]},
		"missing file": {"import", "reaxml", "--site", site.ID, "/nonexistent.xml"},
	} {
		if code, _, _ := c.run(args...); code == 0 {
			t.Errorf("%s: exit 0", name)
		}
	}
}
