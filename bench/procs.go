package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	json "github.com/goccy/go-json"
)

// binaries builds the origin and edge into dir.
func binaries(dir string) (origin, edge string, err error) {
	origin, edge = filepath.Join(dir, "origin"), filepath.Join(dir, "edge")
	for _, b := range []struct{ out, pkg string }{{origin, "./origin"}, {edge, "./edge"}} {
		if out, err := exec.Command("go", "build", "-o", b.out, b.pkg).CombinedOutput(); err != nil {
			return "", "", fmt.Errorf("build %s: %v\n%s", b.pkg, err, out)
		}
	}
	return origin, edge, nil
}

// cli runs an origin admin command with --json and decodes its output.
func cli(ctx context.Context, bin, dbURL string, dst any, args ...string) error {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "LISTGATE_DATABASE_URL="+dbURL)
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
