package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

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

// process is a running origin or edge.
type process struct {
	cmd  *exec.Cmd
	addr string
	done chan struct{}
	mu   sync.Mutex
	log  bytes.Buffer
}

// startProcess runs bin with env and waits for its "listening" log line.
func startProcess(bin string, env []string, args ...string) (*process, error) {
	p := &process{cmd: exec.Command(bin, args...), done: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
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
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			p.mu.Lock()
			p.log.Write(sc.Bytes())
			p.log.WriteByte('\n')
			p.mu.Unlock()
			var m struct{ Msg, Addr string }
			if json.Unmarshal(sc.Bytes(), &m) == nil && strings.HasSuffix(m.Msg, "listening") {
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
		return nil, fmt.Errorf("%s exited: %s", bin, p.logs())
	case <-time.After(30 * time.Second):
		p.stop()
		return nil, fmt.Errorf("%s did not start", bin)
	}
}

func (p *process) logs() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

func (p *process) stop() {
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
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
