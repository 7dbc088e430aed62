package devwp

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// MariaDB is a running throwaway MariaDB server that listens only on a Unix
// socket. Its data is thrown away: Close kills it. Safe for concurrent use.
type MariaDB struct {
	// Socket is the path of the server's Unix socket. The user root has
	// no password there.
	Socket string
	// Dir holds the data directory, the socket and error.log.
	Dir string

	cmd     *exec.Cmd
	exited  chan struct{}
	waitErr error
	stopOne sync.Once
}

// StartMariaDB initialises a data directory in dir (which must exist and
// be empty of a previous server), starts mariadbd on a socket there with
// the databases created, and returns once the server accepts connections,
// it exits, or ctx ends. As root the server runs as root (--user=root):
// the data directory is the caller's.
func StartMariaDB(ctx context.Context, dir string, databases ...string) (*MariaDB, error) {
	install, err := lookPath("mariadb-install-db")
	if err != nil {
		return nil, fmt.Errorf("%w (apt-get install mariadb-server)", err)
	}
	server, err := lookPath("mariadbd")
	if err != nil {
		return nil, fmt.Errorf("%w (apt-get install mariadb-server)", err)
	}
	m := &MariaDB{Socket: filepath.Join(dir, "mysqld.sock"), Dir: dir, exited: make(chan struct{})}
	if len(m.Socket) > 100 { // sun_path holds 108 bytes
		return nil, fmt.Errorf("devwp: socket path %s is too long for a Unix socket", m.Socket)
	}
	data := filepath.Join(dir, "data")
	var asRoot []string
	if os.Geteuid() == 0 {
		asRoot = []string{"--user=root"}
	}
	args := append([]string{"--no-defaults", "--datadir=" + data, "--auth-root-authentication-method=normal",
		"--skip-test-db", "--skip-name-resolve"}, asRoot...)
	if out, err := exec.CommandContext(ctx, install, args...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("devwp: mariadb-install-db: %w: %s", err, lastLines(out, 5))
	}
	var initSQL strings.Builder
	for _, db := range databases {
		fmt.Fprintf(&initSQL, "CREATE DATABASE IF NOT EXISTS `%s` CHARACTER SET utf8mb4;\n", strings.ReplaceAll(db, "`", ""))
	}
	initFile := filepath.Join(dir, "init.sql")
	if err := os.WriteFile(initFile, []byte(initSQL.String()), 0o600); err != nil {
		return nil, fmt.Errorf("devwp: %w", err)
	}
	args = append([]string{"--no-defaults", "--datadir=" + data, "--socket=" + m.Socket,
		"--pid-file=" + filepath.Join(dir, "mysqld.pid"), "--log-error=" + filepath.Join(dir, "error.log"),
		"--init-file=" + initFile, "--skip-networking", "--skip-name-resolve",
		"--character-set-server=utf8mb4", "--innodb-buffer-pool-size=32M",
		"--innodb-flush-log-at-trx-commit=0", "--skip-log-bin"}, asRoot...)
	m.cmd = exec.Command(server, args...)
	m.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := m.cmd.Start(); err != nil {
		return nil, fmt.Errorf("devwp: start mariadbd: %w", err)
	}
	go func() { m.waitErr = m.cmd.Wait(); close(m.exited) }()
	if err := m.waitReady(ctx); err != nil {
		m.Close()
		log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
		return nil, fmt.Errorf("devwp: mariadbd did not start: %w: %s", err, lastLines(log, 5))
	}
	return m, nil
}

// waitReady connects to the socket until the server sends its handshake
// (protocol version 10), it exits, or ctx ends.
func (m *MariaDB) waitReady(ctx context.Context) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		err := m.handshake()
		if err == nil {
			return nil
		}
		select {
		case <-m.exited:
			return fmt.Errorf("server exited: %v", m.waitErr)
		case <-ctx.Done():
			return fmt.Errorf("%w (last: %v)", ctx.Err(), err)
		case <-tick.C:
		}
	}
}

// handshake reads the server's first packet on a new connection.
func (m *MariaDB) handshake() error {
	conn, err := net.DialTimeout("unix", m.Socket, time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(2 * time.Second))
	// A packet is a 3-byte length, a sequence number, then the payload;
	// the handshake's payload starts with the protocol version.
	var head [5]byte
	if _, err := io.ReadFull(conn, head[:]); err != nil {
		return err
	}
	if head[4] != 10 {
		return fmt.Errorf("unexpected first packet (0x%x): not a handshake", head[4])
	}
	return nil
}

// Close kills the server (its data is disposable) and waits for it to
// exit. It leaves Dir to its owner. Calling it again does nothing.
func (m *MariaDB) Close() {
	m.stopOne.Do(func() {
		_ = syscall.Kill(-m.cmd.Process.Pid, syscall.SIGKILL)
		<-m.exited
	})
}

// ErrorLog returns the server's error log.
func (m *MariaDB) ErrorLog() string {
	b, _ := os.ReadFile(filepath.Join(m.Dir, "error.log"))
	return string(b)
}

// lastLines returns the last n lines of b on one line.
func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
