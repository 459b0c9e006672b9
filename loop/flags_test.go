package loop

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/rlktop/rlktop/tracer/livestate"
	"github.com/rlktop/rlktop/tracer/pyagent"
	"github.com/rlktop/rlktop/tracer/session"
	"github.com/rlktop/rlktop/tracer/wire"
	"github.com/rlktop/rlktop/tracer/wire/msg"
	"github.com/rlktop/rlktop/views"
)

// TestPanelAndPlanAgree: every flag the flags panel offers switches live in
// a comparison's plan of the same run (the built-in loop: live mode; a
// command: over the Python agent), and the built-in loop's flags the panel
// does not offer that need a restart (sizes, seed, update schedule; listed
// here by hand from demo.Config) plan a restart. The panel (PanelFlags) and
// the plan (runner.plan) must read one table: a flag added to the panel
// that the plan does not know as live, or the reverse, fails here.
func TestPanelAndPlanAgree(t *testing.T) {
	plan := func(command []string, key string, values ...string) *runner {
		t.Helper()
		r := &runner{o: CompareOptions{Command: command, Steps: 10,
			Arms: []livestate.Arm{{Flags: map[string]string{key: values[0]}}, {Flags: map[string]string{key: values[1]}}}},
			builtin: len(command) == 0}
		r.defaults()
		if err := r.plan(); err != nil {
			t.Fatalf("plan %s=%v: %v", key, values, err)
		}
		return r
	}
	cmd := []string{"python3", "train.py"}
	for _, run := range []struct {
		name    string
		command []string
		panel   string // by hand: TestPanelFlags' lists
	}{
		{"built-in loop", nil, "attention qkv scan sampler head"},
		{"command", cmd, "sdpa compile tf32 matmul_precision cudnn_benchmark deterministic"},
	} {
		var keys []string
		for _, f := range PanelFlags(LiveOptions{Command: run.command}) {
			keys = append(keys, f.Key)
			r := plan(run.command, f.Key, f.Values[0], f.Values[1])
			if !r.live || r.agent != (run.command != nil) {
				t.Errorf("%s: the panel offers %s but the plan of %s=%s,%s is live %v, agent %v", run.name, f.Key, f.Key, f.Values[0], f.Values[1], r.live, r.agent)
			}
		}
		if got := strings.Join(keys, " "); got != run.panel {
			t.Errorf("%s: panel %q, want %q", run.name, got, run.panel)
		}
	}
	for _, k := range []string{"envs", "group", "layers", "width", "heads", "mlp", "head_dim", "max_plies", "update_every", "update_batch"} {
		if r := plan(nil, k, "8", "16"); r.live {
			t.Errorf("built-in loop: %s=8,16 plans a live switch; it needs a restart", k)
		}
	}
	if r := plan(nil, "seed", "1", "2"); r.live {
		t.Error("built-in loop: seed=1,2 plans a live switch; it needs a restart")
	}
	// Live switching the panel does not offer: the built-in loop's float
	// flags (demo.Loop.Set takes them) and a flag a script may declare.
	if r := plan(nil, "lr", "0.001", "0.002"); !r.live {
		t.Error("built-in loop: lr=0.001,0.002 plans a restart; Loop.Set switches it live")
	}
	if r := plan(cmd, "TORCH_CUDNN_V8_API_ENABLED", "0", "1"); r.live {
		t.Error("command: an environment variable plans a live switch")
	}
}

// TestLiveFlagState: a flip sent to a running command's Python agent (a
// stand-in over a pipe) through the TUI's Controller is pending in the
// flag state the poller hands the TUI (livestate.Update.Flags, Live.FlagState)
// — in force stays the child's acknowledged value — until the child
// acknowledges it; then it is in force and no longer pending. A flip the
// child refuses stops pending (found by its sequence number in
// State.Refusals) and the value in force stays the acknowledged one. The
// flags panel drawn from each update's value says the same.
func TestLiveFlagState(t *testing.T) {
	o := LiveOptions{Command: []string{"/bin/sh", "-c", "sleep 60"}, Untraced: true, NoAgent: true, Telemetry: -1,
		Session: session.Options{Source: "live: test"}}
	lv := mustStartLive(t, o)
	ctl := NewController(lv, o)
	defer ctl.Close()
	a, b := net.Pipe()
	lv.Session.AddConn(a)
	s := wire.NewAsyncSender(b, 1<<14)
	defer s.Close(msg.Bye{}, time.Second)
	s.Hello(&msg.Hello{Source: pyagent.Source, PID: 4242})
	s.Ack(&msg.Control{Op: msg.ControlAck, Flags: []msg.KV{{Key: "sdpa", Value: "default"}}, Tracing: true})
	release := make(chan struct{})
	go func() {
		cur := "default"
		for c := range s.Controls() {
			<-release
			ack := msg.Control{Op: msg.ControlAck, Seq: c.Seq, Step: 5, Tracing: true}
			if c.Value == "cudnn" {
				ack.Err, ack.Step = "no cuDNN attention in this torch", -1
			} else {
				cur = c.Value
			}
			ack.Flags = []msg.KV{{Key: "sdpa", Value: cur}}
			s.Ack(&ack)
		}
	}()
	rec := &pollRec{}
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() { ctl.Poll(done, rec); close(stopped) }()
	defer func() { close(done); <-stopped }()
	// polled waits for an update whose flag state satisfies cond.
	polled := func(what string, cond func(livestate.FlagState) bool) livestate.FlagState {
		t.Helper()
		var fs livestate.FlagState
		waitFor(t, 5*time.Second, what, func() bool {
			rec.mu.Lock()
			defer rec.mu.Unlock()
			fs = rec.flags
			return cond(fs)
		})
		return fs
	}
	// panel draws the agent's flags panel from fs; line is sdpa's.
	panel := func(fs livestate.FlagState) string {
		st := views.DefaultStyles()
		f := views.NewFlags(&st, PanelFlags(LiveOptions{Command: o.Command}))
		f.SetSize(120, 10)
		f.SetState(views.FlagsState{FlagState: fs, Tracing: true, Live: true})
		for _, l := range strings.Split(ansi.Strip(f.View()), "\n") {
			if strings.Contains(l, "sdpa") {
				return l
			}
		}
		return ""
	}
	polled("the agent's first acknowledgement", func(fs livestate.FlagState) bool { return fs.InForce["sdpa"] == "default" })

	if err := ctl.SetFlag("sdpa", "flash"); err != nil {
		t.Fatalf("SetFlag(sdpa=flash): %v", err)
	}
	fs := polled("sdpa=flash pending", func(fs livestate.FlagState) bool { return fs.Pending["sdpa"] == "flash" })
	if fs.InForce["sdpa"] != "default" || len(fs.Pending) != 1 {
		t.Errorf("before the acknowledgement: in force %v, pending %v; want sdpa=default in force, only sdpa=flash pending", fs.InForce, fs.Pending)
	}
	if l := panel(fs); !strings.Contains(l, "[default]") || !strings.Contains(l, "→ flash pending") {
		t.Errorf("panel before the acknowledgement: %q", l)
	}
	release <- struct{}{}
	fs = polled("sdpa=flash in force", func(fs livestate.FlagState) bool { return fs.InForce["sdpa"] == "flash" })
	if len(fs.Pending) != 0 {
		t.Errorf("acknowledged flip still pending: %v", fs.Pending)
	}
	if l := panel(fs); !strings.Contains(l, "[flash]") || strings.Contains(l, "pending") {
		t.Errorf("panel after the acknowledgement: %q", l)
	}

	if err := ctl.SetFlag("sdpa", "cudnn"); err != nil {
		t.Fatal(err)
	}
	polled("sdpa=cudnn pending", func(fs livestate.FlagState) bool { return fs.Pending["sdpa"] == "cudnn" })
	release <- struct{}{}
	waitFor(t, 3*time.Second, "the refusal", func() bool { return len(lv.Session.Snapshot().Refusals) == 1 })
	fs = polled("the refused flip no longer pending", func(fs livestate.FlagState) bool { return len(fs.Pending) == 0 })
	if fs.InForce["sdpa"] != "flash" {
		t.Errorf("after the refusal: in force %v, want sdpa=flash", fs.InForce)
	}
	if l := panel(fs); !strings.Contains(l, "[flash]") || strings.Contains(l, "pending") {
		t.Errorf("panel after the refusal: %q", l)
	}
}
