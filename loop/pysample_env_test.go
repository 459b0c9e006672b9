package loop

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The Python sampler's rate reaches the command as RLKTOP_PY_SAMPLE_HZ:
// unset by default (the agent's 100 Hz), the rate given, and "0" (off)
// in an untraced run, whatever the rate asked; the command prints what it
// got.
func TestPySampleHzEnv(t *testing.T) {
	for _, c := range []struct {
		hz       float64
		untraced bool
		want     string
	}{{0, false, "unset"}, {250, false, "250"}, {-1, false, "0"}, {250, true, "0"}, {0, true, "0"}} {
		out := filepath.Join(t.TempDir(), "hz")
		live, err := StartLive(LiveOptions{Command: []string{"sh", "-c", `echo "${RLKTOP_PY_SAMPLE_HZ-unset}" > "$0"`, out},
			PySampleHz: c.hz, Untraced: c.untraced, Telemetry: -1})
		if live == nil {
			t.Fatal(err)
		}
		live.Sup.WaitFor(10 * time.Second)
		live.Close()
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSpace(string(b)); got != c.want {
			t.Errorf("hz %v untraced %v: RLKTOP_PY_SAMPLE_HZ %q, want %q", c.hz, c.untraced, got, c.want)
		}
	}
}
