//go:build linux || darwin || freebsd

package upstream

import (
	"net"
	"syscall"
)

// closedByPeer reports whether the peer has closed c or sent something
// unasked (an idle HTTP/1.1 connection has nothing to read): a
// non-blocking peek at the socket, without consuming anything.
func closedByPeer(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	stale := false
	var buf [1]byte
	rc.Read(func(fd uintptr) bool {
		// No error: end of file (0 bytes) or bytes nobody asked for.
		// EAGAIN: open and quiet, as an idle connection should be.
		_, _, err := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		stale = err == nil || (err != syscall.EAGAIN && err != syscall.EWOULDBLOCK && err != syscall.EINTR)
		return true
	})
	return stale
}
