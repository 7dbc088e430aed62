package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/listgate/listgate/pkg/reaxml"
	"github.com/listgate/listgate/pkg/reaxml/reaxmlgen"
)

// A new listing's document and columns, made straight from its record
// (newDoc), are those the decode, merge-free path makes (doc, decodeDoc,
// columnsOf): the same JSON value — jsonb keeps no key order — and the
// same columns, for every listing of generated feeds and of the sample
// feeds.
func TestNewDocMatchesDecodedDoc(t *testing.T) {
	var feeds [][]byte
	for _, o := range []reaxmlgen.Options{{Seed: 11, Listings: 600}, {Seed: 11, Listings: 600, Revision: 1, Changed: 0.5}} {
		var b bytes.Buffer
		if err := reaxmlgen.Generate(&b, o); err != nil {
			t.Fatal(err)
		}
		feeds = append(feeds, b.Bytes())
	}
	files, _ := filepath.Glob("../../../shared/testdata/reaxml/*.xml")
	if len(files) == 0 {
		t.Fatal("no sample feeds")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		feeds = append(feeds, b)
	}
	n := 0
	for _, feed := range feeds {
		dec := reaxml.NewDecoder(bytes.NewReader(feed), reaxml.Options{})
		for {
			l, err := dec.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			var le *reaxml.ListingError
			if errors.As(err, &le) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			rec, err := newRecord(l)
			if err != nil {
				t.Fatal(err)
			}
			got, gotCols, ok, err := rec.newDoc()
			if err != nil || !ok {
				t.Fatalf("%s:%s: newDoc: ok %v, %v", l.AgentID, l.UniqueID, ok, err)
			}
			doc, err := rec.doc()
			if err != nil {
				t.Fatal(err)
			}
			merged, want, err := decodeDoc(doc)
			if err != nil {
				t.Fatal(err)
			}
			var a, b any
			if err := json.Unmarshal(got, &a); err != nil {
				t.Fatalf("newDoc is not JSON: %v\n%s", err, got)
			}
			if err := json.Unmarshal(want, &b); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("%s:%s: documents differ\nnewDoc: %s\ndecoded: %s", l.AgentID, l.UniqueID, got, want)
			}
			if wantCols := columnsOf(merged); !reflect.DeepEqual(gotCols, wantCols) {
				t.Fatalf("%s:%s: columns differ\nnewDoc: %+v\ndecoded: %+v", l.AgentID, l.UniqueID, gotCols, wantCols)
			}
			n++
		}
	}
	if n < 1000 {
		t.Fatalf("only %d listings compared", n)
	}
}
