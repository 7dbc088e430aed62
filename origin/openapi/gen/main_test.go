package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/listgate/listgate/origin/openapi"
)

// committed is docs/api-reference.md, relative to this package.
var committed = filepath.Join("..", "..", "..", filepath.FromSlash(DefaultOutput))

// docs/api-reference.md is what the generator writes from the document.
func TestReferenceIsCurrent(t *testing.T) {
	want, err := reference()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(committed)
	if err != nil {
		t.Fatalf("%v: run `go run ./origin/openapi/gen` from the repository root", err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		line := 0
		for line < len(gl) && line < len(wl) && gl[line] == wl[line] {
			line++
		}
		at := func(l []string) string {
			if line < len(l) {
				return l[line]
			}
			return "(end of file)"
		}
		t.Fatalf("%s is stale: run `go run ./origin/openapi/gen` from the repository root.\n"+
			"First difference at line %d:\n  committed: %s\n  generated: %s", DefaultOutput, line+1, at(gl), at(wl))
	}
}

// Every operation has a section, and every link in the reference leads to
// an anchor it defines.
func TestReferenceLinks(t *testing.T) {
	out, err := render(openapi.Document())
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]bool{}
	for _, m := range regexp.MustCompile(`<a id="([^"]+)"></a>`).FindAllStringSubmatch(string(out), -1) {
		if anchors[m[1]] {
			t.Errorf("anchor %s defined twice", m[1])
		}
		anchors[m[1]] = true
	}
	for _, m := range regexp.MustCompile(`\]\(#([^)]+)\)`).FindAllStringSubmatch(string(out), -1) {
		if !anchors[m[1]] {
			t.Errorf("link to #%s, which the reference does not define", m[1])
		}
	}
	for _, want := range []string{"### `GET /v1/sites/{site}/listings`", "### `POST /v1/leads`", "### `DELETE /v1/pairing`",
		"### `POST /v1/oauth/token`", "### `GET /healthz`", "<a id=\"schema-listing\"></a>", "| 422 | `VALIDATION_ERROR` |"} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("the reference lacks %q", want)
		}
	}
	again, _ := render(openapi.Document())
	if !bytes.Equal(out, again) {
		t.Error("two renderings differ")
	}
}
