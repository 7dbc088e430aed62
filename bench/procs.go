package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"

	json "github.com/goccy/go-json"

	"github.com/listgate/listgate/pkg/devproc"
)

// binaries builds the origin and edge into dir.
func binaries(dir string) (origin, edge string, err error) {
	bins, err := devproc.Build(dir, devproc.Origin, devproc.Edge)
	if err != nil {
		return "", "", err
	}
	return bins[0], bins[1], nil
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
