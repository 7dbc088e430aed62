package main

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/listgate/listgate/pkg/devproc"
	"github.com/listgate/listgate/pkg/logfmt"
)

// startEdge runs the edge binary (bin, or edge beside this binary, or edge
// on PATH) with env, passes its log to logs, and waits for it to listen on
// addr (at any log level).
func startEdge(bin, addr string, env []string, logs io.Writer) (*devproc.Process, error) {
	if bin == "" {
		if self, err := os.Executable(); err == nil {
			if p := filepath.Join(filepath.Dir(self), "edge"); isFile(p) {
				bin = p
			}
		}
	}
	if bin == "" {
		p, err := exec.LookPath("edge")
		if err != nil {
			return nil, errors.New("no edge binary (build it with `make build`)")
		}
		bin = p
	}
	// JSON, which devproc reads (dev's log writer shows it as text).
	env = append(env, logfmt.Env+"="+logfmt.JSON)
	return devproc.Start(bin, devproc.Options{Env: env, Log: logs, Addr: addr, DeathSignal: syscall.SIGTERM})
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir()
}
