package main

import (
	"net"
	"testing"
)

// Several listeners share one port (the first one's, when the address
// asks for port 0), and every connection to it is accepted by one of them.
func TestListenReusePort(t *testing.T) {
	lns, err := listen("127.0.0.1:0", 3)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	if len(lns) != 3 {
		t.Fatalf("%d listeners, want 3", len(lns))
	}
	addr := lns[0].Addr().String()
	accepted := make(chan int, 64)
	for i, ln := range lns {
		if ln.Addr().String() != addr {
			t.Fatalf("listener %d on %s, the first on %s", i, ln.Addr(), addr)
		}
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				c.Close()
				accepted <- i
			}
		}()
	}
	const conns = 30
	for range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
	for range conns {
		<-accepted
	}
}

// One listener is a plain one: a port another process holds fails at once.
func TestListenBusyPort(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	for _, n := range []int{1, 2} {
		if lns, err := listen(held.Addr().String(), n); err == nil {
			for _, ln := range lns {
				ln.Close()
			}
			t.Errorf("%d listener(s) on a port held without SO_REUSEPORT: no error", n)
		}
	}
}
