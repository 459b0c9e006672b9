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
		if i == 5 {
			if err := l.Set("attention", "math"); err != nil {
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
		"topp_sort", "topp_scan_serial", "sample_multinomial", "head_gatherdot", "backward_attn", "adamw", "flag attention=math"} {
		if kinds[want] == 0 {
			t.Errorf("no %q event (have %v)", want, kinds)
		}
	}
	if kinds["step"] != 8 {
		t.Errorf("%d step events, want 8", kinds["step"])
	}
	if got := l.Flags()["attention"]; got != "math" {
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
