package demo

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestLogLinesShowLosses runs the loop untraced for 4 steps with an
// update every 2 and a line per step: steps 0 says "no update yet",
// steps 1–3 the losses of the updates at steps 1 and 3, which are not
// zero (a policy loss of an untrained policy on random advantages and a
// value loss of squared returns are non-zero almost surely).
func TestLogLinesShowLosses(t *testing.T) {
	t.Setenv("RLKTOP_SOCKET", "")
	os.Unsetenv("RLKTOP_SOCKET")
	cfg := DefaultConfig()
	cfg.Envs, cfg.Group, cfg.UpdateEvery, cfg.UpdateBatch = 4, 2, 2, 4
	var log bytes.Buffer
	if err := RunChild(context.Background(), cfg, ChildOptions{Steps: 4, Log: &log, LogEvery: 1}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d log lines, want 4:\n%s", len(lines), log.String())
	}
	if !strings.HasSuffix(lines[0], "no update yet") {
		t.Errorf("line 0 %q", lines[0])
	}
	for i, want := range []string{"(update at step 1)", "(update at step 1)", "(update at step 3)"} {
		l := lines[i+1]
		if !strings.HasSuffix(l, want) {
			t.Errorf("line %d %q, want …%s", i+1, l, want)
		}
		f := strings.Fields(l[strings.Index(l, "value loss ")+len("value loss "):])
		v, err := strconv.ParseFloat(strings.TrimSuffix(f[0], ","), 64)
		if err != nil || v == 0 {
			t.Errorf("line %d value loss %q (%v), want a non-zero number", i+1, f[0], err)
		}
	}
}
