package reaxml

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the sample feeds")

// TestGolden decodes every shared sample feed and compares the result with
// testdata/golden/<name>.json. Run with -update to regenerate.
func TestGolden(t *testing.T) {
	for _, path := range mustSamples(t) {
		name := strings.TrimSuffix(filepath.Base(path), ".xml")
		t.Run(name, func(t *testing.T) {
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			got := mustJSON(t, decodeAll(t, f, Options{}, 10000))
			golden := filepath.Join("testdata", "golden", name+".json")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want := mustReadFile(t, golden)
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from %s; run go test ./pkg/reaxml -run TestGolden -update and review the diff\n%s",
					path, golden, firstDiff(string(want), string(got)))
			}
		})
	}
}

// TestGoldenFilesHaveSamples fails on a golden file whose sample is gone.
func TestGoldenFilesHaveSamples(t *testing.T) {
	goldens, _ := filepath.Glob(filepath.Join("testdata", "golden", "*.json"))
	for _, g := range goldens {
		name := strings.TrimSuffix(filepath.Base(g), ".json")
		if _, err := os.Stat(filepath.Join(sampleDir, name+".xml")); err != nil {
			t.Errorf("golden %s has no sample feed %s.xml", g, name)
		}
	}
}

func firstDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return fmt.Sprintf("line %d:\n- %s\n+ %s", i+1, w, g)
		}
	}
	return ""
}
