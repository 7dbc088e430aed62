package devdb

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Redis is a running throwaway Redis server without persistence. Close stops
// it and removes its directory. Safe for concurrent use.
type Redis struct {
	// Addr is host:port on 127.0.0.1.
	Addr string
	// URL is redis://Addr/0.
	URL string

	dir, bin string
	port     int

	mu       sync.Mutex // guards cmd and exited across Restart
	cmd      *exec.Cmd
	exited   chan struct{}
	closeOne sync.Once
}

// StartRedis starts redis-server on a free loopback port in a new temporary
// directory. It waits until the server answers PING or ctx ends (at most
// 30 s).
func StartRedis(ctx context.Context) (*Redis, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("devdb: %w: redis-server is not installed; install it with `apt-get install redis-server`", ErrMissingBinary)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	dir, err := os.MkdirTemp("", "listgate-redis-")
	if err != nil {
		return nil, fmt.Errorf("devdb: temp dir: %w", err)
	}
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		port, err := freePort()
		if err != nil {
			break
		}
		r := &Redis{Addr: "127.0.0.1:" + strconv.Itoa(port), dir: dir, bin: bin, port: port}
		r.URL = "redis://" + r.Addr + "/0"
		if err := r.launch(); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		if lastErr = r.waitReady(ctx); lastErr == nil {
			return r, nil
		}
		r.stop()
		if ctx.Err() != nil {
			break
		}
	}
	os.RemoveAll(dir)
	return nil, fmt.Errorf("devdb: redis-server did not start: %v", lastErr)
}

// launch starts redis-server on r's port, empty, without waiting for it.
func (r *Redis) launch() error {
	cmd := exec.Command(r.bin, "--port", strconv.Itoa(r.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", r.dir, "--daemonize", "no",
		"--protected-mode", "yes", "--loglevel", "warning")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("devdb: start redis-server: %w", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	r.mu.Lock()
	r.cmd, r.exited = cmd, exited
	r.mu.Unlock()
	return nil
}

// proc returns the current server process and its exit channel.
func (r *Redis) proc() (*exec.Cmd, chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cmd, r.exited
}

// Restart starts the server again on the same address after Kill, empty
// (there is no persistence), as a crashed Redis comes back, and waits until
// it answers PING or ctx ends.
func (r *Redis) Restart(ctx context.Context) error {
	if _, exited := r.proc(); exited != nil {
		select {
		case <-exited:
		default:
			return fmt.Errorf("devdb: redis-server is still running")
		}
	}
	if err := r.launch(); err != nil {
		return err
	}
	return r.waitReady(ctx)
}

func (r *Redis) waitReady(ctx context.Context) error {
	_, exited := r.proc()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		err := r.ping(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("server exited")
		case <-ctx.Done():
			return fmt.Errorf("%w (last: %v)", ctx.Err(), err)
		case <-tick.C:
		}
	}
}

// ping sends PING in the inline protocol and expects +PONG.
func (r *Redis) ping(ctx context.Context) error {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", r.Addr)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if line != "+PONG\r\n" {
		return fmt.Errorf("unexpected reply %q", line)
	}
	return nil
}

func (r *Redis) stop() {
	cmd, exited := r.proc()
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	}
}

// Kill stops the server abruptly (SIGKILL), as a crash would, without
// removing its directory; Close still cleans up. For fault tests.
func (r *Redis) Kill() {
	cmd, exited := r.proc()
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	<-exited
}

// Close stops the server and removes its directory.
func (r *Redis) Close() error {
	var err error
	r.closeOne.Do(func() {
		_, exited := r.proc()
		select {
		case <-exited:
		default:
			r.stop()
		}
		err = os.RemoveAll(r.dir)
	})
	return err
}
