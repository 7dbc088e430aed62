// Package devproc runs Listgate's own binaries (origin, edge) as child
// processes, for `make run`, the end-to-end tests and the benchmarks: it
// starts one, waits until its JSON log says it is listening and on which
// address, keeps its log, and stops it. Tests use it through
// [github.com/listgate/listgate/pkg/devproc/devproctest], which holds the
// parts that need the testing package (devproc must not import it: the
// origin binary links devproc to start the edge in `origin dev`).
package devproc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	json "github.com/goccy/go-json"
)

// Options tune Start. The zero value is ready to use.
type Options struct {
	// Env is added to this process's environment.
	Env []string
	// Args are the command-line arguments.
	Args []string
	// Log, when not nil, receives each log line as it comes.
	Log io.Writer
	// Addr, when it names a port (not :0), is where the process will
	// listen: Start then waits until it answers HTTP there, whatever the
	// process logs (a quieter log level leaves out the
	// listening line). Otherwise Start waits for the listening line.
	Addr string
	// StartTimeout bounds the wait for the process to listen. Default 30 s.
	StartTimeout time.Duration
	// DeathSignal reaches the child if this process dies. Default SIGKILL.
	DeathSignal syscall.Signal
}

// Process is a running child. Safe for concurrent use.
type Process struct {
	// Addr is the host:port its log said it listens on.
	Addr string

	cmd  *exec.Cmd
	done chan struct{}
	mu   sync.Mutex
	log  bytes.Buffer
	// adminAddr is the admin_addr its log named (the edge's admin
	// listener), under mu.
	adminAddr string
}

// Start runs bin and waits until it listens: until it answers HTTP at
// Options.Addr, or, without an Addr, for the first JSON log line whose msg
// ends in "listening" and that carries an addr.
func Start(bin string, opts Options) (*Process, error) {
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = 30 * time.Second
	}
	if opts.DeathSignal == 0 {
		opts.DeathSignal = syscall.SIGKILL
	}
	if _, port, err := net.SplitHostPort(opts.Addr); err == nil && port != "0" {
		// Something else answering there would pass for the process.
		if c, err := net.DialTimeout("tcp", opts.Addr, time.Second); err == nil {
			c.Close()
			return nil, fmt.Errorf("%s: something already listens on %s", bin, opts.Addr)
		}
	}
	p := &Process{cmd: exec.Command(bin, opts.Args...), done: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), opts.Env...)
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: opts.DeathSignal}
	p.cmd.Stdout = io.Discard
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	addrc := make(chan string, 1)
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Bytes()
			p.mu.Lock()
			p.log.Write(line)
			p.log.WriteByte('\n')
			p.mu.Unlock()
			if opts.Log != nil {
				fmt.Fprintf(opts.Log, "%s\n", line)
			}
			var m struct {
				Msg, Addr string
				AdminAddr string `json:"admin_addr"`
			}
			err := json.Unmarshal(line, &m)
			if err == nil && m.AdminAddr != "" {
				p.mu.Lock()
				p.adminAddr = m.AdminAddr
				p.mu.Unlock()
			}
			if err == nil && strings.HasSuffix(m.Msg, "listening") && m.Addr != "" {
				select {
				case addrc <- m.Addr:
				default:
				}
			}
		}
	}()
	// Wait closes the pipe: only once every line has been read, or the
	// last ones (the shutdown's) could be lost.
	go func() { <-scanned; p.cmd.Wait(); close(p.done) }()
	if _, port, err := net.SplitHostPort(opts.Addr); err == nil && port != "0" {
		go awaitPort(opts.Addr, addrc, p.done)
	}
	select {
	case p.Addr = <-addrc:
		return p, nil
	case <-p.done:
		return nil, fmt.Errorf("%s exited at start:\n%s", bin, p.Logs())
	case <-time.After(opts.StartTimeout):
		p.Stop()
		return nil, errors.New(bin + " did not start in time")
	}
}

// awaitPort sends addr once the process answers HTTP there (GET /healthz,
// any status: a bound port alone may not be served yet), trying every
// 20 ms until done is closed.
func awaitPort(addr string, addrc chan<- string, done <-chan struct{}) {
	c := &http.Client{Timeout: time.Second}
	for {
		if resp, err := c.Get("http://" + addr + "/healthz"); err == nil {
			resp.Body.Close()
			select {
			case addrc <- addr:
			default:
			}
			return
		}
		select {
		case <-done:
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// URL is http://Addr.
func (p *Process) URL() string { return "http://" + p.Addr }

// AdminURL is http:// and the admin address the process logged
// (admin_addr: the edge's /metrics and /debug/pprof/, which it logs before
// its listening line), or "" when it logged none.
func (p *Process) AdminURL() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.adminAddr == "" {
		return ""
	}
	return "http://" + p.adminAddr
}

// Logs returns every log line so far.
func (p *Process) Logs() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Stop sends SIGTERM and waits for the exit, killing the process after 15 s.
func (p *Process) Stop() {
	select {
	case <-p.done:
		return
	default:
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
}

// Kill stops the process abruptly, as a crash would.
func (p *Process) Kill() {
	p.cmd.Process.Kill()
	<-p.done
}
