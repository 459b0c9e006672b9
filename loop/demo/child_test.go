package demo

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/wire"
	"github.com/rlktop/rlktop/tracer/wire/msg"
)

// TestRunChildOverWire runs the child body against a real Unix socket from
// wire.Listen, reads its stream as rlktop would, flips attention to math
// with a control frame, sees the ack and attn_math_qk events appear, and
// stops the child.
func TestRunChildOverWire(t *testing.T) {
	srv, addr, err := wire.Listen()
	if err != nil {
		t.Skipf("no unix socket here: %v", err)
	}
	defer srv.Close()
	cfg := smallCfg()
	cfg.Envs, cfg.Group, cfg.UpdateBatch = 4, 2, 4
	errc := make(chan error, 1)
	go func() {
		c, err := wire.Dial(addr, 5*time.Second)
		if err != nil {
			errc <- err
			return
		}
		errc <- RunChild(context.Background(), cfg, ChildOptions{Conn: c})
	}()
	conn, err := srv.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(90 * time.Second))
	r := wire.NewReader(conn)
	w := wire.NewWriter(conn)
	names := map[uint32]string{}
	var hello msg.Hello
	sentSet, acked, sawMath, sentStop := false, false, false, false
	kinds := map[tracer.Kind]int{}
	for {
		f, err := r.Next()
		if err != nil {
			t.Fatalf("read: %v (acked %v, math %v)", err, acked, sawMath)
		}
		switch f.Type {
		case wire.TypeHello:
			if hello, err = f.Hello(); err != nil {
				t.Fatal(err)
			}
		case wire.TypeStrings:
			f.Strings(func(id uint32, s []byte) error { names[id] = string(s); return nil })
		case wire.TypeEvents:
			evs, err := f.Events(nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range evs {
				kinds[e.Kind]++
				n, ok := names[uint32(e.Name)]
				if !ok {
					t.Fatalf("event names undefined id %d", e.Name)
				}
				if n == "attn_math_qk" {
					sawMath = true
				}
			}
			if !sentSet {
				if err := w.Control(&msg.Control{Op: msg.ControlSet, Seq: 7, Key: "attention", Value: "math"}); err != nil {
					t.Fatal(err)
				}
				sentSet = true
			}
			if sawMath && acked && !sentStop {
				if err := w.Control(&msg.Control{Op: msg.ControlStop, Seq: 8}); err != nil {
					t.Fatal(err)
				}
				sentStop = true
			}
		case wire.TypeControl:
			c, err := f.Control()
			if err != nil {
				t.Fatal(err)
			}
			if c.Seq == 7 {
				if c.Err != "" || !c.Tracing || c.Step < 1 {
					t.Fatalf("ack %+v", c)
				}
				for _, kv := range c.Flags {
					if kv.Key == "attention" && kv.Value == "math" {
						acked = true
					}
				}
			}
		case wire.TypeBye:
			y, _ := f.Bye()
			if !sentStop || y.Reason != "stop" {
				t.Fatalf("bye %+v before stop", y)
			}
			if err := <-errc; err != nil {
				t.Fatal(err)
			}
			if hello.Source != "gotrace" || hello.ClockOffsetNs <= 0 || len(hello.Devices) != 1 || !strings.Contains(hello.Device, "cpu") {
				t.Fatalf("hello %+v", hello)
			}
			if !acked || !sawMath || kinds[tracer.KindKernel] == 0 || kinds[tracer.KindRange] == 0 || kinds[tracer.KindStep] == 0 {
				t.Fatalf("acked %v math %v kinds %v", acked, sawMath, kinds)
			}
			return
		}
	}
}
