// Package injecttest is what the end-to-end tests of rlktop's two injection
// libraries (tracer/cupti, tracer/rocprof) share: rlktop's end of a
// library's wire stream (ReadConn), and the files their stand-in hosts
// write (ReadManifest: every record handed to the library, ReadSummary:
// the host's key=value summary). Test code only.
package injecttest

import (
	"bufio"
	"errors"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/wire"
	"github.com/rlktop/rlktop/tracer/wire/msg"
)

// Row is one event in comparable form: the kind as tracer.Kind.String
// names it, the name as a string, times in ns.
type Row struct {
	Kind, Name       string
	Start, Dur       int64
	Corr             uint64
	TID, Dev, Stream int32
	Value            int64
}

// Received is what the test, acting as rlktop, read from one connection.
// Meta keeps the last value of each key.
type Received struct {
	Hello  msg.Hello
	Events []Row
	Meta   map[string]string
	Drops  msg.Drops
	Bye    *msg.Bye
	Acks   []msg.Control
	Memory []tracer.MemEvent // Memory frames' allocations and frees
	Err    error             // a read or decoding error; nil at a clean end (EOF)
}

// ReadConn reads conn's frames until the stream ends. onFrame, when not
// nil, runs after each frame (on the reading goroutine) with what was read
// so far and the connection, so that a test can send Control frames or
// set a deadline.
func ReadConn(conn net.Conn, onFrame func(*Received, net.Conn)) Received {
	r := Received{Meta: map[string]string{}}
	names := map[uint32]string{0: ""}
	rd := wire.NewReader(conn)
	var evs []tracer.Event
	for {
		f, err := rd.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				r.Err = err
			}
			return r
		}
		switch f.Type {
		case wire.TypeHello:
			r.Hello, err = f.Hello()
		case wire.TypeStrings:
			err = f.Strings(func(id uint32, s []byte) error { names[id] = string(s); return nil })
		case wire.TypeEvents:
			evs, err = f.Events(evs[:0])
			for _, e := range evs {
				r.Events = append(r.Events, Row{e.Kind.String(), names[uint32(e.Name)], e.Start, e.Dur, e.Corr, e.TID, e.Device, e.Stream, e.Value})
			}
		case wire.TypeMeta:
			var kv []msg.KV
			kv, err = f.Meta()
			for _, p := range kv {
				r.Meta[p.Key] = p.Value
			}
		case wire.TypeDrops:
			r.Drops, err = f.Drops()
		case wire.TypeBye:
			var b msg.Bye
			b, err = f.Bye()
			r.Bye = &b
		case wire.TypeControl:
			var c msg.Control
			c, err = f.Control()
			r.Acks = append(r.Acks, c)
		case wire.TypeMemory:
			r.Memory, err = f.Memory(r.Memory)
		}
		if err != nil {
			r.Err = err
			return r
		}
		if onFrame != nil {
			onFrame(&r, conn)
		}
	}
}

// ReadManifest reads a stand-in's manifest: one record a line,
// "kind|name|start|dur|corr|tid|dev|stream|value" (times in ns, as the
// library should send them). It fails t on a missing file or a bad line.
func ReadManifest(t testing.TB, path string) []Row {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []Row
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		p := strings.Split(sc.Text(), "|")
		if len(p) != 9 {
			t.Fatalf("%s: bad line %q", path, sc.Text())
		}
		n := func(i int) int64 {
			v, err := strconv.ParseInt(p[i], 10, 64)
			if err != nil {
				t.Fatalf("%s: %q: %v", path, sc.Text(), err)
			}
			return v
		}
		rows = append(rows, Row{p[0], p[1], n(2), n(3), uint64(n(4)), int32(n(5)), int32(n(6)), int32(n(7)), n(8)})
	}
	return rows
}

// ReadSummary reads a host's summary file: "key=value" lines (others
// ignored). It fails t when the file cannot be read.
func ReadSummary(t testing.TB, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			m[k] = v
		}
	}
	return m
}

// Serve listens as rlktop does (wire.Listen) for one connection from the
// library under test and reads it with read (ReadConn, or a test's own
// way around it) on its own goroutine. It returns the address for RLKTOP_SOCKET and
// wait, which returns what was read once the stream has ended (call it
// after the host exited): it fails t when nothing ended within 10 s or the
// stream could not be read. The listener closes when the test ends.
func Serve(t testing.TB, read func(net.Conn) Received) (addr string, wait func() Received) {
	t.Helper()
	srv, addr, err := wire.Listen()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	done := make(chan Received, 1)
	go func() {
		conn, err := srv.Accept()
		if err != nil {
			done <- Received{Err: err}
			return
		}
		defer conn.Close()
		done <- read(conn)
	}()
	return addr, func() Received {
		t.Helper()
		var r Received
		select {
		case r = <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("no end of stream 10 s after the host exited")
		}
		if r.Err != nil {
			t.Fatalf("reading the wire stream: %v", r.Err)
		}
		return r
	}
}
