package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"
	"github.com/rlktop/rlktop/internal/testutil"
	"github.com/rlktop/rlktop/loop"
	"github.com/rlktop/rlktop/tracer/livestate"
	"github.com/rlktop/rlktop/tracer/session"
)

// envInRoot is set (to the folder holding the example, inside the root)
// when this test binary runs inside the PyTorch root.
const envInRoot = "RLKTOP_TEST_IN_TORCH_ROOT"

// TestTorchLiveTUIFlip drives the real live TUI over the real PyTorch
// example: it waits for the CPU flash-attention operator (SDPA's default
// on CPU), presses 1 (sdpa: default → math) and waits for the math path's
// aten::bmm and the acknowledged sdpa=math mark. The TUI needs the Python
// agent and torch in one process tree, so the test binary (CGO_ENABLED=0)
// re-runs itself inside the root.
func TestTorchLiveTUIFlip(t *testing.T) {
	dir := os.Getenv(envInRoot)
	if dir == "" {
		r := testutil.NeedTorchRoot(t)
		bin := filepath.Join(r.Dir, strings.TrimPrefix(r.Dst, "/"), "rlktop.test")
		build := exec.Command("go", "test", "-c", "-o", bin, ".")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go test -c: %v\n%s", err, out)
		}
		cmd := r.Command(r.Dst+"/rlktop.test", "-test.run", "^TestTorchLiveTUIFlip$", "-test.short", "-test.v")
		cmd.Env = append(cmd.Env, envInRoot+"="+r.Dst)
		out, err := cmd.CombinedOutput()
		if err != nil || !bytes.Contains(out, []byte("--- PASS: TestTorchLiveTUIFlip")) {
			var msgs []string // the inner test's own lines, not the screens it dumps
			for _, l := range strings.Split(string(out), "\n") {
				if strings.Contains(l, "torch_tui_test.go:") {
					msgs = append(msgs, strings.TrimSpace(l))
				}
			}
			t.Fatalf("inside the root: %v\n%s", err, strings.Join(msgs, "\n"))
		}
		return
	}
	os.Setenv("RLKTOP_KINETO", "2:1")
	o := loop.LiveOptions{Command: append([]string{"python3", dir + "/selfplay_connect4.py"}, exampleArgs...),
		Telemetry: -1, Session: session.Options{Source: "live: torch test"}}
	live, tm, sc := startLiveTUI(t, o, loop.PanelFlags(o))
	wait := 3 * time.Minute // torch start-up and a loaded machine
	sc.waitScreen(t, "aten::_scaled_dot_product_flash_attention_for_cpu", wait)
	tm.Send(tea.KeyPressMsg{Code: '1', Text: "1"})
	// The key reached the agent through the TUI's controller: the session
	// holds its acknowledgement, with the step it took effect at; then the
	// next profiled window brings the math path's aten::bmm, as attention.
	// (The screen is checked through the final model: a terminal renderer
	// redraws only changed cells, so a line's text need not appear whole
	// in the output stream.)
	deadline := time.Now().Add(wait)
	var mark *livestate.Mark
	bmm := false
	for (mark == nil || !bmm) && time.Now().Before(deadline) {
		ss := live.Session.Snapshot()
		for i := range ss.Marks {
			if ss.Marks[i].Key == "sdpa" && ss.Marks[i].Value == "math" {
				mark = &ss.Marks[i]
			}
		}
		for _, k := range ss.Cumulative.Kernels {
			bmm = bmm || k.Name == "aten::bmm" && k.Category == "attention"
		}
		time.Sleep(300 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond) // one more poll reaches the TUI
	tm.Send(tea.KeyPressMsg{Code: 'q', Text: "q"})
	final := tm.FinalModel(t, teatest.WithFinalTimeout(20*time.Second)).(*screenModel).Model
	if mark == nil || mark.Step < 0 {
		t.Fatalf("no acknowledged sdpa=math mark: %+v", live.Session.Snapshot().Marks)
	}
	if !bmm {
		t.Errorf("no aten::bmm under attention after the flip to sdpa=math")
	}
	shown := false
	if s := final.Snapshot(); s != nil {
		for _, k := range s.Kernels {
			shown = shown || k.Name == "aten::bmm"
		}
	}
	if !shown {
		t.Errorf("the TUI's snapshot lacks aten::bmm")
	}
}
