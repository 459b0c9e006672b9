package main

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/internal/testutil"
)

// TestTorchCompareRecompiles (issue 18: an arm that recompiles is
// invalid, never faster): testdata/torch_recompile.py calls a
// torch.compile'd function (backend eager, dynamic=False) on a fixed 8x8
// input with shapes=fixed, and on 4+step rows with shapes=vary, so that
// every vary step fails dynamo's shape guard and compiles the frame again
// (1 frame per step: checked by hand in the root, counters["frames"]
// ["total"] = 6 after 6 vary steps). Live comparison fixed vs vary: A
// compiles only in its first, warm-up step and stays valid; B is invalid
// (exit status 3), its reason names counted steps each with 1 frame, and
// its verdict is neither faster nor slower.
func TestTorchCompareRecompiles(t *testing.T) {
	r := testutil.NeedTorchRoot(t)
	script := testutil.CopyIntoRoot(t, r, "testdata/torch_recompile.py")
	res, code := runCompareJSON(t, r, "0", []string{"--flag", "shapes=fixed,vary", "--no-noise", "--steps", "3", "--block", "3"},
		[]string{"python3", script})
	if code != 3 {
		t.Errorf("exit status %d, want 3 (an invalid arm)", code)
	}
	if len(res.Arms) != 2 || !res.Arms[0].Valid || res.Arms[1].Valid {
		t.Fatalf("arms %+v: want A (fixed) valid, B (vary) invalid", res.Arms)
	}
	why := res.Arms[1].Reason
	t.Logf("arm B: %s; verdict %q", why, res.Verdict)
	if !strings.Contains(why, "torch.compile compiled") || !strings.Contains(why, "recompiles after warm-up") {
		t.Fatalf("reason %q: want the recompiles named", why)
	}
	m := regexp.MustCompile(`(\d+) \((\d+)\)`).FindAllStringSubmatch(why, -1)
	if len(m) < 3 {
		t.Errorf("reason %q names %d steps, want the 3 counted steps", why, len(m))
	}
	for _, x := range m {
		if n, _ := strconv.Atoi(x[2]); n != 1 {
			t.Errorf("step %s: %d frames compiled, want 1 (one new shape per step)", x[1], n)
		}
	}
	if res.Verdict == "faster" || res.Verdict == "slower" {
		t.Errorf("verdict %q for an invalid arm", res.Verdict)
	}
}
