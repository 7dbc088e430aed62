// Package devdb starts throwaway PostgreSQL clusters and Redis servers from
// the machine's own binaries, on a free loopback port in a temporary
// directory, and removes them afterwards.
//
// `origin dev` (`make run`) uses it when LISTGATE_DATABASE_URL is unset, and
// every test that needs a database or Redis uses it through
// [github.com/listgate/listgate/pkg/devdb/devdbtest], which holds the parts
// that need the testing package (devdb must not import it: the origin binary
// links devdb). It works as root (the server runs as the `postgres` user,
// since initdb refuses root) and as a normal user. When the binaries are
// missing, the error names the Debian package to install.
package devdb

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// ErrMissingBinary is wrapped by the errors Start functions return when the
// server binaries are not installed.
var ErrMissingBinary = errors.New("server binary not found")

// Postgres is a running throwaway PostgreSQL cluster. Close stops it and
// removes its data directory; Stop and Restart take it down and bring it
// back on the same data directory and port, for fault tests. Safe for
// concurrent use.
type Postgres struct {
	// URL is a connection string for the superuser `postgres` and the
	// database `postgres`, on 127.0.0.1 with trust authentication.
	URL  string
	Port int

	dir, dataDir, binDir string
	cred                 *syscall.Credential
	log                  *os.File
	settings             []string // PostgresOptions.Settings

	mu       sync.Mutex // serialises Stop, Restart and Close
	closed   bool
	cmd      *exec.Cmd
	exited   chan struct{}
	waitErr  error
	closeOne sync.Once
	closeErr error
}

// PostgresOptions tune StartPostgres. The zero value is ready to use.
type PostgresOptions struct {
	// BinDir holds initdb and postgres. Empty: PATH, then the newest
	// /usr/lib/postgresql/*/bin.
	BinDir string
	// Log receives the server's output. Nil: discarded.
	Log *os.File
	// StartTimeout bounds initdb plus start-up. Zero: 60 s.
	StartTimeout time.Duration
	// Settings are server settings (name=value, as postgres -c takes them)
	// given after the defaults, which they override: shared_buffers=2GB.
	Settings []string
}

// StartPostgres initialises a cluster in a new temporary directory and starts
// it on a free loopback port with durability switched off (fsync=off): it is
// for development and tests, never for data that must survive.
func StartPostgres(ctx context.Context, opts PostgresOptions) (*Postgres, error) {
	binDir, err := postgresBinDir(opts.BinDir)
	if err != nil {
		return nil, err
	}
	timeout := opts.StartTimeout
	if timeout == 0 {
		timeout = 60 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	cred, err := serverCredential()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "listgate-pg-")
	if err != nil {
		return nil, fmt.Errorf("devdb: temp dir: %w", err)
	}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("devdb: chown %s: %w", dir, err)
		}
	}
	dataDir := filepath.Join(dir, "data")

	initdb := exec.CommandContext(ctx, filepath.Join(binDir, "initdb"),
		"-D", dataDir, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("devdb: initdb: %w: %s", err, lastLines(out, 5))
	}

	// A port can be taken between choosing it and the server binding it;
	// try a few times before giving up.
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		port, err := freePort()
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		p := &Postgres{Port: port, dir: dir, dataDir: dataDir, binDir: binDir, cred: cred, log: opts.Log, settings: opts.Settings}
		p.URL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
		if err := p.launch(); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		if lastErr = p.waitReady(ctx); lastErr == nil {
			return p, nil
		}
		p.stop()
		if ctx.Err() != nil {
			break
		}
	}
	os.RemoveAll(dir)
	return nil, fmt.Errorf("devdb: postgres did not start: %w", lastErr)
}

// launch starts the server on p's data directory and port without waiting
// for it to answer.
func (p *Postgres) launch() error {
	p.exited = make(chan struct{})
	args := []string{"-D", p.dataDir, "-p", strconv.Itoa(p.Port), "-k", p.dir,
		"-c", "listen_addresses=127.0.0.1",
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "max_connections=200", "-c", "shared_buffers=128MB",
		"-c", "log_min_messages=warning"}
	// The last -c of a name is the one the server keeps.
	for _, s := range p.settings {
		args = append(args, "-c", s)
	}
	p.cmd = exec.Command(filepath.Join(p.binDir, "postgres"), args...)
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: p.cred, Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if p.log != nil {
		p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	}
	if err := p.cmd.Start(); err != nil {
		return fmt.Errorf("devdb: start postgres: %w", err)
	}
	cmd, exited := p.cmd, p.exited
	go func() { p.waitErr = cmd.Wait(); close(exited) }()
	return nil
}

// waitReady connects until the server answers, it exits, or ctx ends.
func (p *Postgres) waitReady(ctx context.Context) error {
	exited := p.exited
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		conn, err := pgconn.Connect(cctx, p.URL)
		cancel()
		if err == nil {
			return conn.Close(ctx)
		}
		select {
		case <-exited:
			return fmt.Errorf("server exited: %v", p.waitErr)
		case <-ctx.Done():
			return fmt.Errorf("%w (last: %v)", ctx.Err(), err)
		case <-tick.C:
		}
	}
}

// stop asks for a fast shutdown and waits for it, killing the server if it
// takes more than 10 seconds. It does nothing to a server that has exited.
func (p *Postgres) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.exited
	}
}

// Stop shuts the server down as an operator's restart would (a fast
// shutdown: open sessions are ended, clients see their connections close)
// and keeps its data directory, so that Restart can start it again.
// Stopping a stopped server does nothing.
func (p *Postgres) Stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stop()
}

// Restart starts the server again on the same data directory and port,
// stopping it first if it runs, and waits until it answers or ctx ends (at
// most 60 s). What was committed before the stop is there afterwards, and
// URL and DatabaseURL stay valid. It fails after Close, and when the port
// was taken meanwhile.
func (p *Postgres) Restart(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return errors.New("devdb: restart of a closed postgres")
	}
	p.stop()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := p.launch(); err != nil {
		return err
	}
	if err := p.waitReady(ctx); err != nil {
		p.stop()
		return fmt.Errorf("devdb: postgres did not restart on port %d: %w", p.Port, err)
	}
	return nil
}

// Close stops the server and removes its directory. Calling it again returns
// the first result.
func (p *Postgres) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closeOne.Do(func() {
		p.closed = true
		p.stop()
		p.closeErr = os.RemoveAll(p.dir)
	})
	return p.closeErr
}

// DatabaseURL returns the connection string for database name on this
// cluster.
func (p *Postgres) DatabaseURL(name string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", p.Port, name)
}

// postgresBinDir finds the directory that holds initdb and postgres.
func postgresBinDir(dir string) (string, error) {
	has := func(d string) bool {
		for _, b := range []string{"initdb", "postgres"} {
			if fi, err := os.Stat(filepath.Join(d, b)); err != nil || fi.IsDir() {
				return false
			}
		}
		return true
	}
	if dir != "" {
		if has(dir) {
			return dir, nil
		}
		return "", fmt.Errorf("devdb: %w: initdb and postgres not in %s", ErrMissingBinary, dir)
	}
	if p, err := exec.LookPath("initdb"); err == nil && has(filepath.Dir(p)) {
		return filepath.Dir(p), nil
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(matches, func(i, j int) bool { return versionOf(matches[i]) > versionOf(matches[j]) })
	for _, d := range matches {
		if has(d) {
			return d, nil
		}
	}
	return "", fmt.Errorf("devdb: %w: PostgreSQL server binaries (initdb, postgres) are not installed; "+
		"install them with `apt-get install postgresql` or set LISTGATE_DATABASE_URL", ErrMissingBinary)
}

func versionOf(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

// serverCredential returns the credential to run database servers with: nil
// for a normal user, the `postgres` user when running as root.
func serverCredential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("devdb: running as root needs the `postgres` user to run the server " +
			"(it comes with `apt-get install postgresql`)")
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// FreePort asks the kernel for a free loopback port. Another process may
// take it before the caller binds it.
func FreePort() (int, error) { return freePort() }

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("devdb: free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
