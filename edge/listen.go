package main

import (
	"context"
	"errors"
	"net"
	"strconv"
	"syscall"
)

// listen opens n listeners on addr: one plain listener, or n SO_REUSEPORT
// listeners on the same port (port 0: the port the first one got), each to
// be served by an accept loop of its own, the kernel spreading new
// connections between them. With one listener per core no single accept
// loop hands every connection out, and a busy port still fails at once
// unless the process holding it listens with SO_REUSEPORT too.
func listen(addr string, n int) ([]net.Listener, error) {
	if n <= 1 {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, err
		}
		return []net.Listener{ln}, nil
	}
	lc := net.ListenConfig{Control: reusePort}
	var lns []net.Listener
	closeAll := func() {
		for _, ln := range lns {
			ln.Close()
		}
	}
	for i := 0; i < n; i++ {
		ln, err := lc.Listen(context.Background(), "tcp", addr)
		if err != nil {
			closeAll()
			return nil, err
		}
		lns = append(lns, ln)
		if i == 0 {
			host, _, err := net.SplitHostPort(addr)
			if err != nil {
				closeAll()
				return nil, err
			}
			addr = net.JoinHostPort(host, strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
		}
	}
	return lns, nil
}

// reusePort sets SO_REUSEPORT on a socket before it is bound.
func reusePort(network, address string, c syscall.RawConn) error {
	var serr error
	if err := c.Control(func(fd uintptr) { serr = setReusePort(fd) }); err != nil {
		return err
	}
	if serr != nil {
		return errors.Join(errors.New("SO_REUSEPORT"), serr)
	}
	return nil
}
