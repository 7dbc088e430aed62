// Package depcheck holds no code: its test checks what Listgate's programs
// and libraries depend on, so that a stray import is caught when it is made
// rather than found in a binary later. It runs `go list`, so it needs the go
// command on PATH and the module's source tree.
//
// The rules (see depcheck_test.go):
//   - the origin and edge binaries link neither the testing package nor any
//     test-helper package (a module package whose name ends in "test", such
//     as pkg/devdb/devdbtest), nor the browser and WordPress test drivers
//     (pkg/devbrowser, pkg/devwp);
//   - the edge links neither pgx nor any package under origin/;
//   - the pairing libraries (./pairing/..., not their tests) do not link pgx;
//   - the origin's HTTP core (origin/api) links neither pgx nor origin/store.
package depcheck
