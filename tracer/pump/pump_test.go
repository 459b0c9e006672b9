package pump

import (
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/wire"
	"github.com/rlktop/rlktop/tracer/wire/msg"
)

// fakeSource plays a script of states; each Buffer delivers the events of
// the next batch. It stands in for a library's C layer and decoder.
type fakeSource struct {
	mu       sync.Mutex
	script   []State
	batches  [][]tracer.Event
	strs     []string // the decoder's table; id 0 is ""
	sent     int      // strings handed out by Take
	taken    int      // buffers taken
	counters int      // bumped by each buffer (what Counters reports)
	reported int
	tracing  bool
	switches []bool // SetTracing calls
	done     []State
	next     func(i int) State // overrides script when set
	calls    int
}

func (f *fakeSource) Next(time.Duration) (State, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	i := f.calls
	f.calls++
	var st State
	if f.next != nil {
		st = f.next(i)
	} else {
		st = f.script[i]
	}
	if st == Buffer {
		f.counters++
	}
	return st, nil
}

func (f *fakeSource) Take() ([]string, []tracer.Event) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var evs []tracer.Event
	if len(f.batches) > 0 {
		evs = f.batches[f.taken%len(f.batches)]
		evs = append([]tracer.Event(nil), evs...)
	}
	f.taken++
	f.sent = max(f.sent, 1) // id 0, "", is never sent
	s := f.strs[f.sent:]
	f.sent = len(f.strs)
	return s, evs
}

func (f *fakeSource) Name(id tracer.StrID) string { return f.strs[id] }

func (f *fakeSource) Counters(force bool) []msg.KV {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.counters == f.reported && !force {
		return nil
	}
	f.reported = f.counters
	return []msg.KV{{Key: "fake.buffers", Value: fmt.Sprint(f.counters)}}
}

func (f *fakeSource) Info() ([]msg.KV, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return []msg.KV{{Key: "fake.tracing", Value: fmt.Sprint(f.tracing)}}, f.tracing
}

func (f *fakeSource) SetTracing(on bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.switches = append(f.switches, on)
	if on {
		return errors.New("the fake cannot trace again")
	}
	f.tracing = false
	return nil
}

func (f *fakeSource) Done(st State) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.done = append(f.done, st)
}

var testCfg = Config{Name: "fake", Tracing: "fake tracing", Tracer: "the fake tracer", Inert: "fake unavailable"}

// recv is rlktop's end: it decodes the stream and logs what came.
type recv struct {
	tab   *tracer.Strings
	mu    sync.Mutex
	lines []string
}

func (r *recv) add(format string, a ...any) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, fmt.Sprintf(format, a...))
	return nil
}

func (r *recv) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.lines)
}
func (r *recv) Hello(h *msg.Hello, _ bool) error      { return r.add("hello %s", h.Source) }
func (r *recv) Intern(s []byte) (tracer.StrID, error) { return r.tab.InternBytes(s), nil }
func (r *recv) Events(evs []tracer.Event, _ int) error {
	for _, e := range evs {
		r.add("%v %q %d+%d value=%d", e.Kind, r.tab.Get(e.Name), e.Start, e.Dur, e.Value)
	}
	return nil
}
func (r *recv) Counters([]tracer.Counter, int) error { return nil }
func (r *recv) Drops(msg.Drops) error                { return nil }
func (r *recv) Control(c *msg.Control) error {
	return r.add("ack %d tracing=%v err=%q", c.Seq, c.Tracing, c.Err)
}
func (r *recv) Meta(kv []msg.KV) error         { return r.add("meta %v", kv) }
func (r *recv) TraceFile(wire.TraceFile) error { return nil }
func (r *recv) Bye(y msg.Bye) error            { return r.add("bye %s", y.Reason) }
func splitMeta(lines []string) (metas, others []string) {
	for _, l := range lines {
		if strings.HasPrefix(l, "meta ") {
			metas = append(metas, l)
		} else {
			others = append(others, l)
		}
	}
	return metas, others
}

func (r *recv) readAll(t *testing.T, c net.Conn) { // until EOF or error
	d := wire.NewDecoder(c)
	for {
		if err := d.Next(r); err != nil {
			if err != io.EOF {
				t.Logf("reader: %v", err)
			}
			return
		}
	}
}

// TestRunSendsStepsCountersAndBye: one buffer holding a kernel inside a
// range named like a step, an idle wait, then exit. rlktop receives the
// kernel, the range turned into step 0 (steps.DefaultStepRange), the
// counters when they changed and at exit (not at the idle wait, where they
// did not), the library's state and a Bye "exit"; Done(Exit) is called.
func TestRunSendsStepsCountersAndBye(t *testing.T) {
	f := &fakeSource{
		script: []State{Buffer, Idle, Exit},
		strs:   []string{"", "train_step", "gemm"},
		batches: [][]tracer.Event{{
			{Kind: tracer.KindKernel, Name: 2, Start: 10, Dur: 5, PID: 1, TID: -1, Device: 0},
			{Kind: tracer.KindRange, Name: 1, Start: 0, Dur: 100, PID: 1, TID: 7, Device: -1},
		}},
		tracing: true,
	}
	a, b := net.Pipe()
	r := &recv{tab: tracer.NewStrings()}
	got := make(chan struct{})
	go func() { r.readAll(t, b); close(got) }()
	s := wire.NewAsyncSender(a, 1024)
	s.Hello(&msg.Hello{Source: "fake"})
	Run(testCfg, f, s)
	<-got
	// The sender writes queued Meta frames before queued events, so the
	// two are compared apart, each in its order.
	metas, others := splitMeta(r.lines)
	want := []string{
		"hello fake",
		`kernel "gemm" 10+5 value=0`,
		`step "train_step" 0+100 value=0`,
		"bye exit",
	}
	wantMeta := []string{
		"meta [{fake.buffers 1}]",
		"meta [{fake.buffers 1}]", // at exit, forced
		"meta [{fake.tracing true}]",
	}
	if g, w := strings.Join(others, "\n"), strings.Join(want, "\n"); g != w {
		t.Errorf("rlktop received\n%s\nwant\n%s", g, w)
	}
	if g, w := strings.Join(metas, "\n"), strings.Join(wantMeta, "\n"); g != w {
		t.Errorf("rlktop received the Meta frames\n%s\nwant\n%s", g, w)
	}
	if len(f.done) != 1 || f.done[0] != Exit || len(f.switches) != 0 {
		t.Errorf("Done calls %v, SetTracing calls %v; want [Exit], none", f.done, f.switches)
	}
}

// TestRunInert: the GPU tool delivers nothing; the Bye says so and Done
// gets Inert.
func TestRunInert(t *testing.T) {
	f := &fakeSource{script: []State{Inert}, strs: []string{""}}
	a, b := net.Pipe()
	r := &recv{tab: tracer.NewStrings()}
	got := make(chan struct{})
	go func() { r.readAll(t, b); close(got) }()
	Run(testCfg, f, wire.NewAsyncSender(a, 16))
	<-got
	if n := len(r.lines); n == 0 || r.lines[n-1] != "bye fake unavailable" {
		t.Errorf("received %q, want it to end with the Bye \"fake unavailable\"", r.lines)
	}
	if len(f.done) != 1 || f.done[0] != Inert {
		t.Errorf("Done calls %v, want [Inert]", f.done)
	}
}

// TestRunDropsDeadSender: rlktop hangs up while buffers flow. The pump
// switches tracing off once, stops sending, and goes on taking (giving
// back) every buffer until exit — both libraries, through this one loop.
func TestRunDropsDeadSender(t *testing.T) {
	const after = 20 // buffers delivered after tracing was switched off
	var offAt int
	f := &fakeSource{strs: []string{"", "k"}, tracing: true,
		batches: [][]tracer.Event{{{Kind: tracer.KindKernel, Name: 1, Start: 1, Dur: 1, PID: 1, TID: -1}}}}
	f.next = func(i int) State {
		// f.mu is held.
		if len(f.switches) == 0 {
			if i > 5000 {
				return Exit // never noticed: fail below
			}
			time.Sleep(time.Millisecond)
			return Buffer
		}
		if offAt == 0 {
			offAt = i
		}
		if i < offAt+after {
			return Buffer
		}
		return Exit
	}
	a, b := net.Pipe()
	go func() {
		buf := make([]byte, 64)
		io.ReadAtLeast(b, buf, 16) // the preamble and part of the hello
		b.Close()
	}()
	s := wire.NewAsyncSender(a, 1024)
	s.Hello(&msg.Hello{Source: "fake"})
	Run(testCfg, f, s)
	if len(f.switches) != 1 || f.switches[0] {
		t.Fatalf("SetTracing calls %v, want one, off", f.switches)
	}
	if f.taken != f.calls-1 || f.calls < offAt+after {
		t.Errorf("took %d buffers of %d Next calls (tracing off at call %d); want every buffer taken, %d after", f.taken, f.calls, offAt, after)
	}
	if len(f.done) != 1 || f.done[0] != Exit {
		t.Errorf("Done calls %v, want [Exit]", f.done)
	}
}

// TestControls: pause switches tracing off and is acked with tracing off;
// a resume the source cannot honour is acked with its reason; set is
// refused in the library's words.
func TestControls(t *testing.T) {
	f := &fakeSource{strs: []string{""}, tracing: true}
	a, b := net.Pipe()
	s := wire.NewAsyncSender(a, 16)
	s.Hello(&msg.Hello{Source: "fake"})
	done := make(chan struct{})
	go func() { Controls(testCfg, f, s); close(done) }()
	r := &recv{tab: tracer.NewStrings()}
	got := make(chan struct{})
	go func() { r.readAll(t, b); close(got) }()
	w := wire.NewWriter(b)
	w.Controls([]msg.Control{
		{Op: msg.ControlPause, Seq: 1},
		{Op: msg.ControlResume, Seq: 2},
		{Op: msg.ControlSet, Seq: 3, Key: "tf32", Value: "1"},
	})
	// Hello, then an ack and a Meta frame per command.
	for deadline := time.Now().Add(10 * time.Second); r.count() < 7 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	s.Close(msg.Bye{Reason: "exit"}, time.Second)
	<-got
	b.Close()
	<-done
	want := []string{
		"hello fake",
		`ack 1 tracing=false err=""`,
		"meta [{fake.tracing false}]",
		`ack 2 tracing=false err="the fake cannot trace again"`,
		"meta [{fake.tracing false}]",
		`ack 3 tracing=false err="the fake tracer cannot set inside the traced process; rlktop restarts the command instead"`,
		"meta [{fake.tracing false}]",
		"bye exit",
	}
	if g := strings.Join(r.lines, "\n"); g != strings.Join(want, "\n") {
		t.Errorf("rlktop received\n%s\nwant\n%s", g, strings.Join(want, "\n"))
	}
}

// TestConnect: with nobody listening (no variable, or a socket nobody
// serves) Connect returns nil and switches tracing off once; with rlktop
// listening it returns a sender whose hello arrives, and switches nothing.
func TestConnect(t *testing.T) {
	for _, addr := range []string{"", "unix:" + filepath.Join(t.TempDir(), "nobody.sock")} {
		t.Setenv(wire.EnvSocket, addr)
		f := &fakeSource{tracing: true}
		if s := Connect(testCfg, f, time.Second, 16); s != nil {
			t.Errorf("RLKTOP_SOCKET=%q: got a sender, want nil", addr)
		}
		if len(f.switches) != 1 || f.switches[0] {
			t.Errorf("RLKTOP_SOCKET=%q: SetTracing calls %v, want [false]", addr, f.switches)
		}
	}

	srv, addr, err := wire.Listen()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	t.Setenv(wire.EnvSocket, addr)
	r := &recv{tab: tracer.NewStrings()}
	got := make(chan struct{})
	go func() {
		defer close(got)
		c, err := srv.Accept()
		if err != nil {
			t.Error(err)
			return
		}
		r.readAll(t, c)
	}()
	f := &fakeSource{tracing: true}
	s := Connect(testCfg, f, 5*time.Second, 16)
	if s == nil {
		t.Fatalf("RLKTOP_SOCKET=%q (listening): got no sender", addr)
	}
	s.Hello(&msg.Hello{Source: "fake"})
	_ = s.Close(msg.Bye{Reason: "exit"}, time.Second)
	<-got
	if want := []string{"hello fake", "bye exit"}; strings.Join(r.lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("rlktop received %q, want %q", r.lines, want)
	}
	if len(f.switches) != 0 {
		t.Errorf("SetTracing calls %v with rlktop listening, want none", f.switches)
	}
}
