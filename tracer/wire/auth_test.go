package wire

import (
	"net"
	"testing"
	"time"
)

// A TCP client that connects and sends nothing delays no other rank: the
// token is checked off the accept path (issue 16: every accept waited 5 s
// behind it).
func TestSilentTCPClientDelaysNoOne(t *testing.T) {
	srv, addr, err := ListenTCP("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	got := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := srv.Accept()
			if err != nil {
				return
			}
			got <- c
		}
	}()
	hostport := addr[len("tcp:") : len(addr)-33]
	for range 3 { // silent clients, holding their auth slots
		s, err := net.Dial("tcp", hostport)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
	}
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	good, err := Dial(addr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer good.Close()
	NewWriter(good).Hello(&Hello{Source: "rank1"})
	select {
	case c := <-got:
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("accepted after %v, behind the silent clients", d)
		}
		c.Close()
	case <-time.After(4 * time.Second):
		t.Fatal("the authenticated client waited behind silent ones for 4 s")
	}
	// After Close, Accept returns the listener's error.
	srv.Close()
	if c, err := srv.Accept(); err == nil {
		c.Close()
		t.Error("Accept after Close returned no error")
	}
}
