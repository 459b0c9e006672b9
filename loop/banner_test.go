package loop

import (
	"strings"
	"testing"
	"time"

	"github.com/rlktop/rlktop/tracer/cupti/launch"
)

// On a machine with neither an NVIDIA driver nor ROCm, a command runs
// untraced and the banner says why for both tracers (issue 7, done-when).
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
	for _, want := range []string{"running the command untraced", "CUPTI (NVIDIA): no NVIDIA driver", "rocprofiler-sdk (AMD): no ROCm"} {
		if !strings.Contains(live.Banner, want) {
			t.Fatalf("banner %q lacks %q", live.Banner, want)
		}
	}
	live.Sup.WaitFor(10 * time.Second)
}
