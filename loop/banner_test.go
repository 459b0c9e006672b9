package loop

import (
	"strings"
	"testing"
	"time"

	"github.com/rlktop/rlktop/tracer/cupti/launch"
)

// On a machine with neither an NVIDIA driver nor ROCm, the banner says
// first what is still collected (a Python command's agent data, not
// "running the command untraced" above 34,814 operators), then why for
// both tracers.
func TestBannerExplainsBothTracers(t *testing.T) {
	if d := launch.DetectDriver(); d.Present {
		t.Skip("an NVIDIA driver is present: the CUPTI tracer would be used")
	}
	live, err := StartLive(LiveOptions{Command: []string{"true"}, Telemetry: -1})
	if live == nil {
		t.Fatal(err)
	}
	defer live.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"no GPU tracer on this machine: a Python command reports steps, stages, flags and torch.profiler operators (2 of every 10 steps), any other runs untraced; ", "CUPTI (NVIDIA): no NVIDIA driver", "rocprofiler-sdk (AMD): no ROCm"} {
		if !strings.Contains(live.Banner, want) || strings.Count(live.Banner, "torch.profiler") != 1 {
			t.Fatalf("banner %q lacks %q", live.Banner, want)
		}
	}
	live.Sup.WaitFor(10 * time.Second)
}

// With --tracer none the agent runs no torch.profiler windows
// (RLKTOP_KINETO=0), and the banner does not promise operators.
func TestBannerTracerNone(t *testing.T) {
	if d := launch.DetectDriver(); d.Present {
		t.Skip("an NVIDIA driver is present: the CUPTI tracer would be used")
	}
	live, err := StartLive(LiveOptions{Command: []string{"true"}, Tracer: TracerNone, Telemetry: -1})
	if live == nil {
		t.Fatal(err)
	}
	defer live.Close()
	if err != nil {
		t.Fatal(err)
	}
	want := "no GPU tracer on this machine: a Python command reports steps, stages and flags (no operators: --tracer none), any other runs untraced; CUPTI (NVIDIA): "
	if !strings.HasPrefix(live.Banner, want) || strings.Contains(live.Banner, "torch.profiler") {
		t.Errorf("banner %q: want it to start %q and promise no torch.profiler operators", live.Banner, want)
	}
	live.Sup.WaitFor(10 * time.Second)
}
