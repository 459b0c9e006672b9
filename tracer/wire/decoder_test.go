package wire

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/wire/msg"
)

// logSink writes one line per call, names resolved through its own table.
type logSink struct {
	tab   *tracer.Strings
	lines []string
	stop  string // Intern of this name fails
}

func (l *logSink) add(format string, a ...any) error {
	l.lines = append(l.lines, fmt.Sprintf(format, a...))
	return nil
}
func (l *logSink) Hello(h *msg.Hello, relayed bool) error {
	return l.add("hello pid=%d relayed=%v", h.PID, relayed)
}
func (l *logSink) Intern(s []byte) (tracer.StrID, error) {
	if string(s) == l.stop {
		return 0, errors.New("too many names")
	}
	return l.tab.InternBytes(s), nil
}
func (l *logSink) Events(evs []tracer.Event, undefined int) error {
	for _, e := range evs {
		l.add("event %q start=%d", l.tab.Get(e.Name), e.Start)
	}
	return l.add("undefined=%d", undefined)
}
func (l *logSink) Counters(cs []tracer.Counter, undefined int) error {
	for _, c := range cs {
		l.add("counter %q ts=%d", l.tab.Get(c.Name), c.TS)
	}
	return l.add("undefined=%d", undefined)
}
func (l *logSink) Drops(d msg.Drops) error      { return l.add("drops %d", d.Events) }
func (l *logSink) Control(c *msg.Control) error { return l.add("control %v %s", c.Op, c.Key) }
func (l *logSink) Meta(kv []msg.KV) error       { return l.add("meta %v", kv) }
func (l *logSink) TraceFile(tf TraceFile) error { return l.add("tracefile %s", tf.Path) }
func (l *logSink) Bye(y msg.Bye) error          { return l.add("bye %s", y.Reason) }

// TestDecoderSink: a stream of two senders, the first with a clock offset
// of 1000 ns, the second relayed (no shift): the sink sees the receiver's
// names and host times; an id nobody defined is counted and empty.
func TestDecoderSink(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.Hello(&msg.Hello{Source: "t", PID: 7, ClockOffsetNs: 1000})
	k := w.Name("gemm")
	w.Events([]tracer.Event{{Name: k, Start: 5}, {Name: 99, Start: 6}})
	w.Counters([]tracer.Counter{{Name: w.Name("power"), TS: 10}})
	w.Drops(msg.Drops{Events: 3})
	w.Control(&msg.Control{Op: msg.ControlSet, Key: "tf32"})
	w.Meta([]msg.KV{{Key: "a", Value: "b"}})
	w.Flags = FlagRelayed
	w.Hello(&msg.Hello{Source: "t", PID: 8, ClockOffsetNs: 1000})
	w.Events([]tracer.Event{{Name: k, Start: 5}})
	w.Bye(msg.Bye{Reason: "done"})

	size := int64(buf.Len())
	tab := tracer.NewStrings()
	tab.Intern("first") // the receiver's ids differ from the sender's
	l := &logSink{tab: tab}
	d := NewDecoder(&buf)
	for {
		err := d.Next(l)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	want := []string{
		"hello pid=7 relayed=false",
		`event "gemm" start=1005`,
		`event "" start=1006`,
		"undefined=1",
		`counter "power" ts=1010`,
		"undefined=0",
		"drops 3",
		"control set tf32",
		"meta [{a b}]",
		"hello pid=8 relayed=true",
		`event "gemm" start=5`,
		"undefined=0",
		"bye done",
	}
	if got := strings.Join(l.lines, "\n"); got != strings.Join(want, "\n") {
		t.Errorf("sink saw\n%s\nwant\n%s", got, strings.Join(want, "\n"))
	}
	// 2 hellos, 2 Strings frames (before the events and the counters),
	// 2 events, counters, drops, control, meta, bye.
	if d.Frames() != 11 {
		t.Errorf("Frames() = %d, want 11", d.Frames())
	}
	if d.Offset() != size {
		t.Errorf("Offset() = %d, want the stream's %d bytes", d.Offset(), size)
	}
}

// TestDecoderSinkError: an error from the sink stops the decoding and is
// returned as it is.
func TestDecoderSinkError(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.Hello(&msg.Hello{PID: 1})
	w.Events([]tracer.Event{{Name: w.Name("a")}, {Name: w.Name("b")}})
	l := &logSink{tab: tracer.NewStrings(), stop: "b"}
	d := NewDecoder(&buf)
	if err := d.Next(l); err != nil {
		t.Fatal(err)
	}
	if err := d.Next(l); err == nil || err.Error() != "too many names" {
		t.Fatalf("Strings frame: err = %v, want the sink's", err)
	}
}
