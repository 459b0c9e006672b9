package demo

import (
	"errors"
	"math"
	"testing"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/gotrace"
)

func TestLoopRunsAndTraces(t *testing.T) {
	tr := gotrace.New(1 << 16)
	cfg := DefaultConfig()
	cfg.Envs, cfg.Group, cfg.UpdateBatch = 8, 4, 8
	l, err := New(cfg, tr)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for i := 0; i < 8; i++ {
		if i == 5 { // the default is math (DefaultConfig): flip to fused
			if err := l.Set("attention", "fused"); err != nil {
				t.Fatal(err)
			}
		}
		st, err := l.Step()
		if err != nil {
			t.Fatal(err)
		}
		if st.Updated && (math.IsNaN(float64(st.PolicyLoss)) || math.IsNaN(float64(st.ValueLoss)) || math.IsNaN(float64(st.GradNorm))) {
			t.Fatalf("step %d: NaN loss %+v", i, st)
		}
		t.Logf("step %d: %.1f ms updated=%v pl=%.4f vl=%.4f gn=%.3f legal=%.0f", st.Step, float64(st.Dur)/1e6, st.Updated, st.PolicyLoss, st.ValueLoss, st.GradNorm, st.MeanLegal)
	}
	tr.Drain(func(b []tracer.Event) {
		for _, e := range b {
			kinds[tr.NameOf(gotrace.NameID(e.Name))]++
		}
	})
	for _, want := range []string{"step", "env.step", "forward", "sample", "update", "attn_fused_fwd", "attn_math_qk", "qkv_fused",
		"topp_sort", "topp_scan_serial", "sample_multinomial", "head_gatherdot", "backward_attn", "adamw", "flag attention=fused"} {
		if kinds[want] == 0 {
			t.Errorf("no %q event (have %v)", want, kinds)
		}
	}
	if kinds["step"] != 8 {
		t.Errorf("%d step events, want 8", kinds["step"])
	}
	if got := l.Flags()["attention"]; got != "fused" {
		t.Errorf("attention flag %q after set", got)
	}
	if err := l.Set("width", "64"); !errors.Is(err, ErrNeedsRestart) {
		t.Errorf("set width: %v", err)
	}
	if err := l.Set("attention", "flash"); !errors.Is(err, ErrBadValue) {
		t.Errorf("set attention=flash: %v", err)
	}
	if err := l.Set("nope", "1"); !errors.Is(err, ErrUnknownFlag) {
		t.Errorf("set nope: %v", err)
	}
}

// TestLoopDeterministic: the same seed gives the same actions, losses and
// weights bit for bit (gonum's GEMM gives each output block to one worker
// with a fixed summation order, so its parallelism does not change sums).
func TestLoopDeterministic(t *testing.T) {
	run := func() ([]int32, []float32) {
		c := smallCfg()
		c.UpdateEvery = 2
		l, err := New(c, nil)
		if err != nil {
			t.Fatal(err)
		}
		var acts []int32
		var losses []float32
		for i := 0; i < 6; i++ {
			st, err := l.Step()
			if err != nil {
				t.Fatal(err)
			}
			acts = append(acts, l.actions...)
			losses = append(losses, st.PolicyLoss, st.ValueLoss, st.GradNorm)
		}
		return acts, append(losses, l.model.blocks[0].wqkv.W[:64]...)
	}
	a1, l1 := run()
	a2, l2 := run()
	for i := range a1 {
		if a1[i] != a2[i] {
			t.Fatalf("action %d differs: %d vs %d", i, a1[i], a2[i])
		}
	}
	for i := range l1 {
		if math.Float32bits(l1[i]) != math.Float32bits(l2[i]) {
			t.Fatalf("value %d differs: %g vs %g", i, l1[i], l2[i])
		}
	}
}
