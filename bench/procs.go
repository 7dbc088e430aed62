package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"

	json "github.com/goccy/go-json"

	"github.com/listgate/listgate/pkg/devproc"
)

// The origin and edge binaries of this run: built once, on first use, into
// a directory of their own that removeBinaries deletes. Every system of the
// run starts the same binaries (a source file changing during the run
// changes none of them), and a system's setup is not a build: `go build`
// of both, even from a warm cache, takes 1.5 s on an idle two-core machine
// and 5–7 s on a loaded one, once per system — some twenty in a full run.
var bin struct {
	once              sync.Once
	dir, origin, edge string
	err               error
}

// binaries returns the run's origin and edge binaries, building them on
// the first call.
func binaries() (origin, edge string, err error) {
	bin.once.Do(func() {
		if bin.dir, bin.err = os.MkdirTemp("", "listgate-bench-bin-"); bin.err != nil {
			return
		}
		var bins []string
		if bins, bin.err = devproc.Build(bin.dir, devproc.Origin, devproc.Edge); bin.err != nil {
			return
		}
		bin.origin, bin.edge = bins[0], bins[1]
	})
	return bin.origin, bin.edge, bin.err
}

// removeBinaries deletes the run's binaries, if they were built.
func removeBinaries() {
	if bin.dir != "" {
		os.RemoveAll(bin.dir)
	}
}

// cli runs an origin admin command with --json and decodes its output.
func cli(ctx context.Context, bin, dbURL string, dst any, args ...string) error {
	return cliEnv(ctx, bin, []string{"LISTGATE_DATABASE_URL=" + dbURL}, dst, args...)
}

// cliEnv is cli with env (KEY=value, the database's among them) added to
// the bench's environment.
func cliEnv(ctx context.Context, bin string, env []string, dst any, args ...string) error {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return fmt.Errorf("origin %s: %v: %s", strings.Join(args, " "), err, ee.Stderr)
		}
		return err
	}
	if dst == nil {
		return nil
	}
	return json.Unmarshal(out, dst)
}
