package wire

import (
	"net"
	"testing"
	"time"

	"github.com/rlktop/rlktop/tracer/wire/msg"
)

// A TCP client that connects and sends nothing delays no other rank: the
// token is checked off the accept path (every accept waited 5 s
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
	NewWriter(good).Hello(&msg.Hello{Source: "rank1"})
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

// Unauthenticated clients cannot keep a rank out: 64 silent connections,
// then a client reconnecting in a loop (silent, or with a wrong token) for
// the whole test, and 20 ranks each authenticated within 1.5 s (with 64
// slots held for 5 s and refilled as they freed, 36 of 36 ranks were
// kept out). The refusals are counted by kind.
func TestAuthFloodKeepsRanksIn(t *testing.T) {
	srv, addr, err := ListenTCP("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	got := make(chan net.Conn, 64)
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
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for range MaxPendingAuth {
		c, err := net.Dial("tcp", hostport)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	stop := make(chan struct{})
	flooded := make(chan struct{})
	go func() {
		defer close(flooded)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			c, err := net.Dial("tcp", hostport)
			if err != nil {
				continue
			}
			if i%2 == 1 {
				c.Write(append(append(authMagic[:], 32, 0), make([]byte, 32)...))
			}
			time.Sleep(time.Millisecond)
			defer c.Close()
		}
	}()
	for i := range 20 {
		start := time.Now()
		c, err := Dial(addr, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		select {
		case a := <-got:
			a.Close()
		case <-time.After(1500 * time.Millisecond):
			t.Fatalf("rank %d not accepted within 1.5 s (stats %+v)", i, srv.AuthStats())
		}
		if d := time.Since(start); d > 1500*time.Millisecond {
			t.Errorf("rank %d accepted after %v", i, d)
		}
		c.Close()
	}
	// The 20 ranks may all get in before the flood's first wrong token is
	// read: let the flood go on until one is counted (or 3 s pass).
	for deadline := time.Now().Add(3 * time.Second); srv.AuthStats().BadToken == 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	close(stop)
	<-flooded
	a := srv.AuthStats()
	if a.Accepted != 20 || a.Evicted == 0 || a.BadToken == 0 {
		t.Errorf("stats %+v; want 20 accepted and some evicted and wrong tokens", a)
	}
}
