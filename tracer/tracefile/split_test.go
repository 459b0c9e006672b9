package tracefile

import (
	"testing"

	"github.com/rlktop/rlktop/tracer"
)

// TestSplitProcesses: a recording whose hellos name two ranked processes
// splits into one trace per process in rank order, each with its own
// events (hand-made: pids 20 and 10 with ranks 0 and 1); a process
// without a rank, a repeated rank, or another format leaves it whole.
func TestSplitProcesses(t *testing.T) {
	mk := func(meta map[string]string, pids ...int32) *tracer.Trace {
		tr := tracer.NewTrace("rlktop", "/x/run.rlk")
		tr.Meta = meta
		tr.Counters = []tracer.Counter{{TS: 1}}
		tr.Warnings = []string{"w"}
		for i, p := range pids {
			tr.Events = append(tr.Events, tracer.Event{Kind: tracer.KindStep, PID: p, Start: int64(i), Value: int64(i)})
		}
		return tr
	}
	meta := func() map[string]string {
		return map[string]string{"pid": "5", "child2.pid": "20", "child2.rank": "0", "child3.pid": "10", "child3.rank": "1"}
	}
	out := SplitProcesses(mk(meta(), 10, 20, 10, 20, 20))
	if len(out) != 2 {
		t.Fatalf("%d traces, want 2", len(out))
	}
	for i, want := range []struct {
		rank    int
		pid     int32
		n       int
		firstAt int64
	}{{0, 20, 3, 1}, {1, 10, 2, 0}} {
		o := out[i]
		if o.Rank != want.rank || len(o.Events) != want.n || o.Events[0].Start != want.firstAt {
			t.Errorf("trace %d: rank %d, %d events from %d; want rank %d, %d events from %d", i, o.Rank, len(o.Events), o.Events[0].Start, want.rank, want.n, want.firstAt)
		}
		for _, e := range o.Events {
			if e.PID != want.pid {
				t.Errorf("trace %d holds pid %d's event", i, e.PID)
			}
		}
		if (i == 0) != (len(o.Counters) == 1 && len(o.Warnings) == 1) {
			t.Errorf("trace %d: %d counters, %d warnings (the first keeps them)", i, len(o.Counters), len(o.Warnings))
		}
	}
	m := meta()
	delete(m, "child3.rank")
	if n := len(SplitProcesses(mk(m, 10, 20))); n != 1 {
		t.Errorf("a process without a rank: %d traces, want 1", n)
	}
	m = meta()
	m["child3.rank"] = "0"
	if n := len(SplitProcesses(mk(m, 10, 20))); n != 1 {
		t.Errorf("a repeated rank: %d traces, want 1", n)
	}
	if n := len(SplitProcesses(mk(meta(), 10, 20, 5))); n != 1 {
		t.Errorf("an event of an unranked process: %d traces, want 1", n)
	}
	k := mk(meta(), 10, 20)
	k.Format = "kineto"
	if n := len(SplitProcesses(k)); n != 1 {
		t.Errorf("kineto: %d traces, want 1", n)
	}
}
