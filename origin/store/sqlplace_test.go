package store_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// sqlOwners are the packages besides store that may hold SQL and reach
// the pool (docs/architecture.md, "Where SQL lives"): each is built around
// one kind of query that is its logic.
var sqlOwners = map[string]bool{
	"origin/listings": true, // the read API's query builder
	"origin/ingest":   true, // REAXML applied listing by listing
	"origin/events":   true, // the outbox stream: cursor reads, LISTEN, prune
}

var poolUse = regexp.MustCompile(`\.Pool\b`)

// No other origin package queries the database itself: it calls store.
func TestSQLLivesInStore(t *testing.T) {
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(filepath.Join(root, "origin"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		rel = filepath.ToSlash(rel)
		if rel == "origin/store" || strings.HasPrefix(rel, "origin/store/") || sqlOwners[rel] {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			if poolUse.MatchString(line) {
				t.Errorf("%s:%d reaches the pool: put the query in origin/store\n\t%s", path, i+1, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
