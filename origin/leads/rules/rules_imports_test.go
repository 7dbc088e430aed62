package rules_test

import (
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"
)

// The rules of lead intake are plain Go: no HTTP, no database driver, no
// package of the origin (its adapters import the rules, not the other way
// round).
func TestRulesImportNoAdapters(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, pkg := range pkgs {
		for path, file := range pkg.Files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			checked++
			for _, imp := range file.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				if strings.HasPrefix(p, "net/http") || strings.Contains(p, "jackc/") ||
					strings.HasPrefix(p, "github.com/listgate/listgate/origin/") {
					t.Errorf("%s imports %s: rules must not depend on adapters", path, p)
				}
			}
		}
	}
	if checked < 7 {
		t.Errorf("checked only %d files", checked)
	}
}
