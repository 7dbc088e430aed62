package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	json "github.com/goccy/go-json"
)

// edgeProcess is the edge `origin dev` runs in front of the origin.
type edgeProcess struct {
	cmd  *exec.Cmd
	addr string
	done chan struct{}
}

// startEdge runs the edge binary (bin, or edge beside this binary, or edge
// on PATH) with env, passes its log to logs, and waits for it to listen.
func startEdge(bin string, env []string, logs io.Writer) (*edgeProcess, error) {
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
	p := &edgeProcess{cmd: exec.Command(bin), done: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	addrc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(logs, line)
			var m struct{ Msg, Addr string }
			if json.Unmarshal([]byte(line), &m) == nil && m.Msg == "edge listening" {
				select {
				case addrc <- m.Addr:
				default:
				}
			}
		}
	}()
	go func() { p.cmd.Wait(); close(p.done) }()
	select {
	case p.addr = <-addrc:
		return p, nil
	case <-p.done:
		return nil, fmt.Errorf("edge exited at start")
	case <-time.After(20 * time.Second):
		p.stop()
		return nil, fmt.Errorf("edge did not start within 20 s")
	}
}

// stop asks the edge to drain and waits (killing it after 20 s).
func (p *edgeProcess) stop() {
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && !strings.HasSuffix(p, "/")
}
