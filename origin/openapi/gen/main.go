// Command gen writes docs/api-reference.md, the human-readable reference of
// Listgate's HTTP API, from the OpenAPI document origin/openapi embeds.
// Run it from the repository root after changing the document:
//
//	go run ./origin/openapi/gen
//
// It checks the document with kin-openapi first and writes nothing when it
// is invalid. A test fails while docs/api-reference.md is stale.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/listgate/listgate/origin/openapi"
)

// DefaultOutput is where the reference goes, relative to the repository
// root.
const DefaultOutput = "docs/api-reference.md"

func main() {
	out := flag.String("o", DefaultOutput, "output file")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(out string) error {
	b, err := reference()
	if err != nil {
		return err
	}
	return os.WriteFile(out, b, 0o644)
}

// reference validates the embedded document and renders it.
func reference() ([]byte, error) {
	doc, err := openapi3.NewLoader().LoadFromData(openapi.Document())
	if err != nil {
		return nil, fmt.Errorf("load the OpenAPI document: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("the OpenAPI document is invalid: %w", err)
	}
	return render(openapi.Document())
}
