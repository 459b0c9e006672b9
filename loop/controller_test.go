package loop

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rlktop/rlktop/gpu/reading"
	"github.com/rlktop/rlktop/tracer/livestate"
	"github.com/rlktop/rlktop/tracer/session"
)

// TestQuitWhileRecordingSaysWhere: a recording still running when the TUI
// quits is stopped and its path returned for the message.
func TestQuitWhileRecordingSaysWhere(t *testing.T) {
	t.Chdir(t.TempDir())
	sess := session.New(session.Options{})
	defer sess.Close()
	c := NewController(&Live{Session: sess}, LiveOptions{})
	if _, _, ok, _ := c.StopRecordingAtExit(); ok {
		t.Fatal("ok with no recording")
	}
	p, err := c.StartRecording()
	if err != nil {
		t.Fatal(err)
	}
	_, got, ok, err := c.StopRecordingAtExit()
	if !ok || err != nil || got != p || !filepath.IsAbs(got) {
		t.Errorf("StopRecordingAtExit = %q, %v, %v; want %q", got, ok, err, p)
	}
	if st, err := os.Stat(p); err != nil || st.Size() == 0 {
		t.Errorf("recording file %s: %v", p, err)
	}
}

// TestLiveControllerCompare runs the TUI's comparison over the real loop
// (small sizes, 4 steps per arm): three arms (A, B, A′), attention rows
// that exist in one arm only, a schedule naming the arms, and the live
// child running again afterwards under a new pid.
func TestLiveControllerCompare(t *testing.T) {
	bin := needBin(t)
	o := LiveOptions{Exe: bin,
		Flags:   map[string]string{"envs": "8", "layers": "1", "width": "24", "attention": "math"},
		Session: session.Options{Source: "live: test"}}
	live := mustStartLive(t, o)
	ctl := NewController(live, o)
	ctl.CompareSteps = 4
	defer ctl.Close()
	before := live.Sup.Status().PID
	var progress []string
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()
	var labels []livestate.StepLabel
	res, err := ctl.Compare(ctx, "attention", []string{"math", "fused"}, func(s string) { progress = append(progress, s) },
		func(l livestate.StepLabel) { labels = append(labels, l) })
	if err != nil {
		t.Fatal(err)
	}
	// The segments' steps reached the TUI's step chart as the final
	// schedule labels them (the schedule also lists the unlabelled steps
	// that ran between segments), with the arm names the TUI maps.
	sched := map[[2]int64]livestate.StepLabel{}
	counted := 0
	for _, l := range res.Schedule {
		sched[[2]int64{int64(l.PID), l.Step}] = l
	}
	for _, l := range labels {
		if got := sched[[2]int64{int64(l.PID), l.Step}]; got != l {
			t.Errorf("live label %+v, schedule says %+v", l, got)
		}
		if l.Phase == livestate.PhaseCounted {
			counted++
		}
	}
	if want := 3 * 4; counted != want { // 3 arms × compareSteps
		t.Errorf("%d counted labels delivered, want %d", counted, want)
	}
	if len(res.Arms) != 3 || res.Arms[0].Name != "attention=math" || res.Arms[1].Name != "attention=fused" ||
		res.Arms[2].Name != livestate.NoiseName("attention=math") {
		t.Fatalf("arms %+v", res.Arms)
	}
	for _, a := range res.Arms {
		if !a.Valid || a.Steps != 4 {
			t.Errorf("arm %s valid %v steps %d (%s), want valid with 4", a.Name, a.Valid, a.Steps, a.Reason)
		}
	}
	rows := map[string]bool{}
	for _, r := range res.Rows {
		if r.Group == "kernel" {
			rows[r.Key] = true
			switch r.Key {
			case "attn_fused_fwd":
				if r.ANs != 0 || r.BNs <= 0 {
					t.Errorf("attn_fused_fwd A %d B %d, want only in B", r.ANs, r.BNs)
				}
			case "attn_math_qk":
				if r.ANs <= 0 || r.BNs != 0 {
					t.Errorf("attn_math_qk A %d B %d, want only in A", r.ANs, r.BNs)
				}
			}
		}
	}
	if !rows["attn_fused_fwd"] || !rows["attn_math_qk"] {
		t.Errorf("kernel rows lack the attention kernels: %v", rows)
	}
	arms := map[string]int{}
	for _, s := range res.Schedule {
		if s.Phase == livestate.PhaseCounted {
			arms[s.Arm]++
		}
	}
	if arms["attention=math"] != 4 || arms["attention=fused"] != 4 {
		t.Errorf("counted steps per arm in the schedule: %v", arms)
	}
	if len(progress) == 0 {
		t.Error("no progress lines")
	}
	st := live.Sup.Status()
	if st.State != livestate.Running || st.PID == before {
		t.Errorf("live child after the comparison: %s (pid before %d)", st.Describe(), before)
	}
}

// pollRec is a PollSink that keeps everything it is given.
type pollRec struct {
	mu      sync.Mutex
	updates int
	flags   livestate.FlagState // the last update's
	lines   []string
	conns   []livestate.Child
	ended   []livestate.Status
	errs    []error
}

func (p *pollRec) Device(reading.Sample) bool { return true }

func (p *pollRec) Live(u livestate.Update) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.updates++
	p.flags = u.Flags
	for _, l := range u.Output {
		p.lines = append(p.lines, l.Text)
	}
	return true
}

func (p *pollRec) ConnClosed(c livestate.Child) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.conns = append(p.conns, c)
	return true
}

func (p *pollRec) ChildEnded(st livestate.Status, err error) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ended = append(p.ended, st)
	p.errs = append(p.errs, err)
	return true
}

// TestControllerPoll: the poller hands a command's output lines over
// once each (a line taken is not sent again), says once that a
// connection was closed on a bad stream, and once that the child failed
// (exit 3, with ChildError's error).
func TestControllerPoll(t *testing.T) {
	o := LiveOptions{Command: []string{"/bin/sh", "-c", "echo hello; sleep 0.5; exit 3"}, Untraced: true, NoAgent: true,
		Telemetry: -1, Session: session.Options{Source: "live: test"}}
	live := mustStartLive(t, o)
	ctl := NewController(live, o)
	defer ctl.Close()
	// A stream that is not wire frames: the session closes it with an error.
	a, b := net.Pipe()
	live.Session.AddConn(a)
	go func() { b.Write([]byte("this is not an rlktop frame stream\n")); b.Close() }()

	rec := &pollRec{}
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() { ctl.Poll(done, rec); close(stopped) }()
	waitFor(t, 20*time.Second, "the child's line and end and the closed connection", func() bool {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		return len(rec.ended) > 0 && len(rec.conns) > 0 && slices.Contains(rec.lines, "hello")
	})
	time.Sleep(300 * time.Millisecond) // a few more polls: nothing is said twice
	close(done)
	<-stopped
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.conns) != 1 || rec.conns[0].Err == "" {
		t.Errorf("ConnClosed %d times (%+v), want once with the error", len(rec.conns), rec.conns)
	}
	if len(rec.ended) != 1 || rec.ended[0].ExitCode != 3 || !errors.Is(rec.errs[0], ErrChildFailed) {
		t.Errorf("ChildEnded %+v, %v; want once, exit 3, ErrChildFailed", rec.ended, rec.errs)
	}
	n := 0
	for _, l := range rec.lines {
		if l == "hello" {
			n++
		}
	}
	if n != 1 || rec.updates < 3 {
		t.Errorf("output line hello sent %d times in %d updates (lines %q), want once", n, rec.updates, rec.lines)
	}
}

// TestPanelFlags: the flags panel offers the built-in loop's five backend
// flags in digit-key order, a command's Python agent flags (pyagent.Flags,
// names by hand), none for a command without the agent.
func TestPanelFlags(t *testing.T) {
	keys := func(fs []livestate.FlagSpec) string {
		var k []string
		for _, f := range fs {
			if len(f.Values) < 2 {
				t.Errorf("%s offers %v", f.Key, f.Values)
			}
			k = append(k, f.Key)
		}
		return strings.Join(k, " ")
	}
	if got := keys(PanelFlags(LiveOptions{})); got != "attention qkv scan sampler head" {
		t.Errorf("built-in loop: %s", got)
	}
	if got := keys(PanelFlags(LiveOptions{Command: []string{"python3", "train.py"}})); got != "sdpa compile tf32 matmul_precision cudnn_benchmark deterministic" {
		t.Errorf("command: %s", got)
	}
	if got := PanelFlags(LiveOptions{Command: []string{"python3", "train.py"}, NoAgent: true}); got != nil {
		t.Errorf("command without the agent: %v", got)
	}
}

// mustStartLive starts the live run o or fails the test (closing what
// started); the caller closes it.
func mustStartLive(t *testing.T, o LiveOptions) *Live {
	t.Helper()
	live, err := StartLive(o)
	if err != nil {
		if live != nil {
			live.Close()
		}
		t.Fatal(err)
	}
	return live
}

// TestStopChild: a child that does not stop when asked (a shell command,
// no agent) gets SIGTERM once ask is over; a child that is not running
// is left alone.
func TestStopChild(t *testing.T) {
	o := LiveOptions{Command: []string{"/bin/sh", "-c", "sleep 60"}, Untraced: true, NoAgent: true, Telemetry: -1,
		Session: session.Options{Source: "live: test"}}
	live := mustStartLive(t, o)
	defer live.Close()
	t0 := time.Now()
	live.StopChild(context.Background(), 200*time.Millisecond, 2*time.Second)
	st := live.Sup.Status()
	if st.State == livestate.Running || st.Signal == "" {
		t.Fatalf("after StopChild: %s", st.Describe())
	}
	if d := time.Since(t0); d < 200*time.Millisecond {
		t.Errorf("stopped after %s: the child was not given its 200 ms to end when asked", d)
	}
	live.StopChild(context.Background(), time.Minute, time.Minute) // not running: returns at once
	if d := time.Since(t0); d > 30*time.Second {
		t.Errorf("StopChild of a stopped child waited (%s)", d)
	}
}
