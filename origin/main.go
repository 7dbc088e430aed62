// Command origin is Listgate's service of record: it owns Postgres, lead
// intake, key management, pairing, the REAXML upload API, the dashboard and
// the admin CLI (DESIGN.md §6). Run `origin help` for the commands.
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], &env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.LookupEnv})
	stop()
	os.Exit(code)
}

// env is the process environment a command runs in; tests pass their own.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) (string, bool)
	// quietRequests leaves successful requests out of the log below
	// debug (origin dev).
	quietRequests bool
}
