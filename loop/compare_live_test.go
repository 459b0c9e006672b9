package loop

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/livestate"
	"github.com/rlktop/rlktop/tracer/pyagent"
	"github.com/rlktop/rlktop/tracer/session"
	"github.com/rlktop/rlktop/tracer/wire"
	"github.com/rlktop/rlktop/tracer/wire/msg"
)

// TestSwitchLiveRefused: a live switch the child acknowledges gives the
// step it took effect at; one it refuses makes the arm invalid with the
// child's reason, read from the session's typed refusals — also when the
// session's warnings are full (100), where a reason parsed back from the
// warnings was never seen and the arm waited out the step timeout.
func TestSwitchLiveRefused(t *testing.T) {
	o := LiveOptions{Command: []string{"/bin/sh", "-c", "sleep 60"}, Untraced: true, NoAgent: true, Telemetry: -1,
		Session: session.Options{Source: "live: test"}}
	lv := mustStartLive(t, o)
	defer lv.Close()
	for i := range 100 {
		lv.Session.Warn(fmt.Sprintf("filler warning %d", i))
	}
	// A stand-in agent: acks slow=0 (and the arm label) at step 5,
	// refuses slow=20.
	a, b := net.Pipe()
	lv.Session.AddConn(a)
	s := wire.NewAsyncSender(b, 1<<14)
	defer s.Close(msg.Bye{}, time.Second)
	s.Hello(&msg.Hello{Source: pyagent.Source, PID: 4242})
	go func() {
		for c := range s.Controls() {
			ack := msg.Control{Op: msg.ControlAck, Seq: c.Seq, Step: 5}
			if c.Key == "slow" && c.Value == "20" {
				ack.Err, ack.Step = "slow must be below 10", -1
			}
			s.Ack(&ack)
		}
	}()
	r := liveExec{&runner{o: CompareOptions{StepTimeout: 3 * time.Second}, live: true, agent: true, vary: []string{"slow"}, lv: lv}}
	ctx := context.Background()

	ok := &armRun{name: "slow=0", flags: map[string]string{"slow": "0"}}
	pid, step, err := r.switchLive(ctx, ok)
	if err != nil || ok.invalid != "" || pid != 4242 || step != 5 {
		t.Fatalf("switch to slow=0: pid %d step %d err %v invalid %q; want pid 4242 step 5", pid, step, err, ok.invalid)
	}
	bad := &armRun{name: "slow=20", flags: map[string]string{"slow": "20"}}
	if _, _, err := r.switchLive(ctx, bad); err != nil {
		t.Fatal(err)
	}
	if want := "child pid 4242 refused set slow=20: slow must be below 10"; bad.invalid != want {
		t.Errorf("refused arm's reason %q, want %q", bad.invalid, want)
	}
	if fl := lv.Flags(); fl["slow"] != "20" {
		t.Errorf("rlktop's flags in force after the switches: %v (the switch is noted before it is acknowledged)", fl)
	}
}

// TestWaitStepsGap: a child whose step numbers skip one inside a segment
// (steps 10, 11, 13, 14 of a segment 10–12) ends the wait once it is past
// the segment for gapWait, with the two steps that came and no reason,
// instead of waiting out the step timeout while the child runs on; a
// segment whose steps all came returns at once.
func TestWaitStepsGap(t *testing.T) {
	o := LiveOptions{Command: []string{"/bin/sh", "-c", "sleep 60"}, Untraced: true, NoAgent: true, Telemetry: -1,
		Session: session.Options{Source: "live: test"}}
	lv := mustStartLive(t, o)
	defer lv.Close()
	a, b := net.Pipe()
	lv.Session.AddConn(a)
	w := wire.NewWriter(b)
	defer b.Close()
	go func() {
		w.Hello(&msg.Hello{Source: pyagent.Source, PID: 4242})
		name := w.Name("step")
		var evs []tracer.Event
		for _, n := range []int64{10, 11, 13, 14} {
			evs = append(evs, tracer.Event{Kind: tracer.KindStep, Name: name, Start: n * 1000, Dur: 900, Value: n, PID: 4242, TID: 1, Device: -1})
		}
		w.Events(evs)
		w.Flush()
	}()
	r := liveExec{&runner{o: CompareOptions{StepTimeout: time.Minute}, live: true, agent: true, lv: lv}}
	arm := &armRun{name: "a"}
	var pid int32 = 4242
	wait := func(from, to int64) ([]livestate.StepTime, string, time.Duration) {
		t0 := time.Now()
		steps, why, err := r.waitSteps(context.Background(), arm, func(st *livestate.State) []livestate.StepTime {
			return r.stepsOf(st, &pid, false, from, to)
		}, int(to-from), func(st *livestate.State) bool { return r.pastStep(st, pid, to) })
		if err != nil {
			t.Fatal(err)
		}
		return steps, why, time.Since(t0)
	}
	steps, why, took := wait(10, 13)
	if len(steps) != 2 || steps[0].Step != 10 || steps[1].Step != 11 || why != "" || took < gapWait || took > gapWait+10*time.Second {
		t.Errorf("segment 10-12 with 12 missing: %d steps %v, why %q, after %s; want 10 and 11, no reason, after about %s", len(steps), steps, why, took, gapWait)
	}
	if steps, why, took := wait(13, 15); len(steps) != 2 || why != "" || took > 2*time.Second {
		t.Errorf("segment 13-14, all there: %d steps, why %q, after %s; want 2 at once", len(steps), why, took)
	}
}
