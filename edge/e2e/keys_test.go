package e2e

import (
	"testing"

	"github.com/listgate/listgate/pkg/apikey"
)

func mustGenerate(tb testing.TB) string {
	tb.Helper()
	k, err := apikey.Generate()
	if err != nil {
		tb.Fatal(err)
	}
	return k
}
