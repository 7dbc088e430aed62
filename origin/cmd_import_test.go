package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/jackc/pgx/v5"

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
		Status                                        string
		Created, Updated, Unchanged, Deleted, Skipped int
		List                                          []struct {
			File, Message string
			Line          int
			ListingID     string `json:"listing_id"`
		} `json:"errors"`
	}
	// A listing that fails is a partial import: exit status 3, and the
	// summary printed all the same.
	var first summary
	code, out, errOut := c.run(append([]string{"import", "reaxml", "--site", site.ID, "--json"}, files...)...)
	if code != exitPartial || !strings.Contains(errOut, "partly imported") {
		t.Fatalf("first import: exit %d, %q", code, errOut)
	}
	if err := json.Unmarshal([]byte(out), &first); err != nil || first.Status != "partial" || first.Created != 4 || len(first.List) != 1 {
		t.Fatalf("first import %+v %v", first, err)
	}
	if e := first.List[0]; e.File != bad || e.Line != 2 || e.ListingID != "A:2" {
		t.Errorf("error %+v", e)
	}
	// --json after the files, as `origin --help` shows it.
	var second summary
	c.mustJSON(&second, "import", "reaxml", "--site", site.ID, files[0], "--json")
	if second.Status != "ok" || second.Created+second.Updated != 0 || second.Unchanged != 3 {
		t.Errorf("second import %+v", second)
	}
	code, out, _ = c.run("import", "reaxml", files[0], "--site", site.ID)
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

// import reaxml checks every file before it imports any, and tells a file
// that failed (reported as a partial import) from one that all failed.
func TestImportReaxmlFailures(t *testing.T) {
	url := storetest.URL(t)
	c := newCLI(t, url)
	var site struct{ ID string }
	c.mustJSON(&site, "sites", "create", "--name", "Partial Realty", "--plan", "starter", "--json")
	good := "../../shared/testdata/reaxml/i4ucode_rental_sample.xml"
	dir := t.TempDir()
	notXML := filepath.Join(dir, "notes.txt")
	os.WriteFile(notXML, []byte("these are not listings\n"), 0o600)
	unreadable := filepath.Join(dir, "locked.xml")
	os.WriteFile(unreadable, []byte("<propertyList/>"), 0o000)
	listings := func() int {
		conn, err := pgx.Connect(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		var n int
		if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM listings WHERE site_id = $1`, site.ID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	// A missing file after a good one: nothing is imported.
	code, out, errOut := c.run("import", "reaxml", "--site", site.ID, good, filepath.Join(dir, "missing.xml"), "--json")
	if code != exitFailed || out != "" || !strings.Contains(errOut, "missing.xml: no such file") || !strings.Contains(errOut, "nothing was imported") {
		t.Fatalf("missing file: exit %d, %q, %q", code, out, errOut)
	}
	if os.Getuid() != 0 { // root reads any file
		code, _, errOut = c.run("import", "reaxml", "--site", site.ID, good, unreadable)
		if code != exitFailed || !strings.Contains(errOut, "locked.xml: permission denied") {
			t.Fatalf("unreadable file: exit %d, %q", code, errOut)
		}
	}
	code, _, errOut = c.run("import", "reaxml", "--site", site.ID, good, dir)
	if code != exitFailed || !strings.Contains(errOut, "is a directory") {
		t.Fatalf("directory: exit %d, %q", code, errOut)
	}
	code, _, errOut = c.run("import", "reaxml", "--site", "00000000-0000-0000-0000-000000000000", good)
	if code != exitFailed || !strings.Contains(errOut, "no such site") {
		t.Fatalf("unknown site: exit %d, %q", code, errOut)
	}
	if n := listings(); n != 0 {
		t.Fatalf("%d listings imported by failed commands", n)
	}

	// A file that is not a feed beside a good one: partial, the good one
	// imported, the error without package prefixes.
	var sum struct {
		Status  string
		Created int
		Files   []struct{ File, Status, Error string }
	}
	code, out, errOut = c.run("import", "reaxml", notXML, "--json", "--site", site.ID, good)
	if code != exitPartial || !strings.Contains(errOut, "1 of 2 file(s) failed") {
		t.Fatalf("one bad file: exit %d, %q", code, errOut)
	}
	if err := json.Unmarshal([]byte(out), &sum); err != nil || sum.Status != "partial" || sum.Created != 3 || len(sum.Files) != 2 {
		t.Fatalf("one bad file: %+v %v\n%s", sum, err, out)
	}
	if f := sum.Files[0]; f.File != notXML || f.Status != "failed" || !strings.Contains(f.Error, "is it a REAXML feed?") ||
		strings.Contains(f.Error, "ingest:") || strings.Contains(f.Error, "reaxml:") || strings.Contains(f.Error, "feed:") {
		t.Errorf("the bad file's outcome %+v", f)
	}
	if f := sum.Files[1]; f.Status != "ok" || f.Error != "" {
		t.Errorf("the good file's outcome %+v", f)
	}
	if n := listings(); n != 3 {
		t.Fatalf("%d listings after the partial import, want 3", n)
	}

	// Every file failing is a failure, in text too.
	code, out, errOut = c.run("import", "reaxml", "--site", site.ID, notXML)
	if code != exitFailed || !strings.Contains(out, "notes.txt: not imported: not a REAXML feed") || !strings.Contains(errOut, "nothing was imported") {
		t.Fatalf("all files bad: exit %d, %q, %q", code, out, errOut)
	}
}
