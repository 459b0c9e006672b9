package session

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/wire"
	"github.com/rlktop/rlktop/tracer/wire/msg"
)

// A connection that defines more names than Options.MaxNamesPerConn is
// closed with an error that names the limit (one connection
// defining 3 M names held 2.3 GB); the names before the limit and the
// other connections are unaffected.
func TestNameLimitClosesConnection(t *testing.T) {
	sess := New(Options{MaxNamesPerConn: 5})
	defer sess.Close()
	a, b := net.Pipe()
	sess.AddConn(a)
	w := wire.NewWriter(b)
	w.Hello(&msg.Hello{Source: "cupti", PID: 7})
	var evs []tracer.Event
	for i := range 6 {
		evs = append(evs, tracer.Event{Kind: tracer.KindKernel, Name: w.Name(fmt.Sprintf("k%d", i)), Start: int64(10 * i), Dur: 5, TID: -1, PID: 7})
	}
	go func() { w.Events(evs); b.Close() }()
	if !sess.Wait(5 * time.Second) {
		t.Fatal("connection not closed")
	}
	st := sess.Snapshot()
	if len(st.Children) != 1 || !strings.Contains(st.Children[0].Err, "more than 5 names") {
		t.Fatalf("children %+v", st.Children)
	}
}

// Past Options.MaxConns connections at once, more are refused with one
// warning; a slot frees when a connection ends.
func TestConnectionLimit(t *testing.T) {
	sess := New(Options{MaxConns: 2})
	defer sess.Close()
	var peers []net.Conn
	for range 3 {
		a, b := net.Pipe()
		sess.AddConn(a)
		peers = append(peers, b)
	}
	st := sess.Snapshot()
	if len(st.Children) != 2 || len(st.Warnings) != 1 || !strings.Contains(st.Warnings[0], "more than 2 traced processes") {
		t.Fatalf("%d children, warnings %q", len(st.Children), st.Warnings)
	}
	// The third peer's end was closed: a write fails.
	peers[2].SetWriteDeadline(time.Now().Add(time.Second))
	if _, err := peers[2].Write([]byte("x")); err == nil {
		t.Error("the refused connection is still open")
	}
	peers[0].Close()
	deadline := time.Now().Add(5 * time.Second)
	for sess.Snapshot().Children[0].Connected {
		if time.Now().After(deadline) {
			t.Fatal("first connection never ended")
		}
		time.Sleep(10 * time.Millisecond)
	}
	a, b := net.Pipe()
	defer b.Close()
	sess.AddConn(a)
	if n := len(sess.Snapshot().Children); n != 3 {
		t.Errorf("%d children after a slot freed, want 3", n)
	}
	peers[1].Close()
}
