package loop

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rlktop/rlktop/loop/demo"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/livestate"
)

// rlktopBin is the built-in loop's child binary TestMain builds:
// testdata/comparechild, which takes the argv loop.Live gives the rlktop
// binary ("" when the build failed; buildErr says why).
var (
	rlktopBin string
	buildErr  error
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "rlktop-loop-test-")
	if err == nil {
		rlktopBin = filepath.Join(dir, "rlktop")
		out, err := exec.Command("go", "build", "-o", rlktopBin, "./testdata/comparechild").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build ./testdata/comparechild: %v\n%s", err, out)
			rlktopBin = ""
		}
	} else {
		buildErr = err
	}
	code := m.Run()
	if dir != "" {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

func needBin(t *testing.T) string {
	t.Helper()
	if rlktopBin == "" {
		t.Fatalf("the rlktop binary for the built-in loop child: %v", buildErr)
	}
	return rlktopBin
}

// tinyArms: the built-in loop at a tiny size, one arm per attention value.
func tinyArms(t *testing.T, values string) []livestate.Arm {
	t.Helper()
	var specs []livestate.FlagSpec
	for _, s := range []string{"attention=" + values, "envs=8", "layers=1", "width=24"} {
		sp, err := ParseFlagSpec(s)
		if err != nil {
			t.Fatal(err)
		}
		specs = append(specs, sp)
	}
	arms, err := Arms(specs)
	if err != nil {
		t.Fatal(err)
	}
	return arms
}

// TestCompareBuiltinLive runs a live comparison of the built-in loop: arms
// fused, math and bogus (a value the loop refuses) plus A′, 3 counted steps
// per arm after 1 warm-up step, blocks of 1 step so that arms alternate at
// every counted step.
func TestCompareBuiltinLive(t *testing.T) {
	bin := needBin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	arms := tinyArms(t, "fused,math,bogus")
	res, err := Compare(ctx, CompareOptions{Arms: arms, Exe: bin, Steps: 3, Warmup: 1, Block: 1, Noise: true, StepTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if res.Mode != "live" {
		t.Fatalf("mode %q, want live", res.Mode)
	}
	byName := map[string]attrib.ArmStats{}
	for _, a := range res.Arms {
		byName[a.Name] = a
	}
	names := []string{"attention=fused", "attention=math", "attention=bogus", livestate.NoiseName("attention=fused")}
	if len(res.Arms) != 4 {
		t.Fatalf("%d arms, want 4: %+v", len(res.Arms), res.Arms)
	}
	for i, n := range names {
		if res.Arms[i].Name != n {
			t.Fatalf("arm %d is %q, want %q", i, res.Arms[i].Name, n)
		}
	}
	for _, n := range []string{names[0], names[1], names[3]} {
		a := byName[n]
		if !a.Valid || a.Steps != 3 {
			t.Errorf("arm %s: valid %v (%s), %d steps; want valid with 3 counted steps", n, a.Valid, a.Reason, a.Steps)
		}
		if a.MedianNs <= 0 || a.P10Ns > a.MedianNs || a.MedianNs > a.P90Ns {
			t.Errorf("arm %s: median %d p10 %d p90 %d", n, a.MedianNs, a.P10Ns, a.P90Ns)
		}
	}
	bad := byName["attention=bogus"]
	if bad.Valid || !strings.Contains(bad.Reason, "attention=bogus") || bad.Steps != 0 {
		t.Errorf("bogus arm: valid %v, %d steps, reason %q; want invalid naming attention=bogus", bad.Valid, bad.Steps, bad.Reason)
	}
	if res.Valid() {
		t.Error("Valid() is true with an invalid arm")
	}
	if len(res.Pairs) != 2 || res.Pairs[1].Verdict != attrib.VerdictInvalid {
		t.Errorf("pairs: %d, want 2 with the bogus one invalid", len(res.Pairs))
	}

	// Schedule: counted steps alternate between arms (blocks of 1), each
	// counted step follows a warm-up step of the same arm, and every arm
	// has exactly 3 counted steps.
	counted := map[string]int{}
	var seq []string
	prevArm, prevPhase := "", ""
	for _, s := range res.Schedule {
		if s.Phase == livestate.PhaseCounted {
			counted[s.Arm]++
			seq = append(seq, s.Arm)
			if prevArm != s.Arm || prevPhase != livestate.PhaseWarmup {
				t.Errorf("counted step %d of %s follows %s step of %q", s.Step, s.Arm, prevPhase, prevArm)
			}
		}
		prevArm, prevPhase = s.Arm, s.Phase
	}
	for _, n := range []string{names[0], names[1], names[3]} {
		if counted[n] != 3 {
			t.Errorf("schedule: %d counted steps of %s, want 3", counted[n], n)
		}
	}
	// Rounds alternate direction (A B A′, A′ B A, …; the bogus arm is not
	// scheduled), so with blocks of 1 the counted steps run, by hand:
	A, B, N := names[0], names[1], names[3]
	want := []string{A, B, N, N, B, A, A, B, N}
	warm := 0
	for _, s := range res.Schedule {
		if s.Phase == livestate.PhaseWarmup {
			warm++
		}
	}
	if warm > len(want) {
		// A switch landed a step early (the child was descheduled between
		// reporting a step and reading its controls) and a make-up segment
		// ran: the order differs, the counts above still hold.
		t.Logf("make-up segments ran (%d warm-up steps); order %v", warm, seq)
	} else if strings.Join(seq, "|") != strings.Join(want, "|") {
		t.Errorf("counted steps ran arms\n%v\nwant\n%v", seq, want)
	}

	// Rows: fused-attention kernels only in the fused arm, math ones only
	// in the math arm (B = math here, A = fused).
	var fusedInA, fusedInB, mathInA, mathInB bool
	for _, r := range res.Rows {
		if r.Group != attrib.GroupKernel {
			continue
		}
		if strings.HasPrefix(r.Key, "attn_fused_fwd") {
			fusedInA = fusedInA || r.ANs > 0
			fusedInB = fusedInB || r.BNs > 0
		}
		if strings.HasPrefix(r.Key, "attn_math_") {
			mathInA = mathInA || r.ANs > 0
			mathInB = mathInB || r.BNs > 0
		}
	}
	if !fusedInA || fusedInB || mathInA || !mathInB {
		t.Errorf("rows: attn_fused_fwd in A %v, B %v; attn_math_* in A %v, B %v; want fused only in A, math only in B", fusedInA, fusedInB, mathInA, mathInB)
	}

	// Consistency: A against itself is bitwise; math against fused is
	// close but computed differently.
	if len(res.Consistency) != 3 {
		t.Fatalf("consistency rows %d, want 3", len(res.Consistency))
	}
	c0, c1, c2 := res.Consistency[0], res.Consistency[1], res.Consistency[2]
	if !c0.Bitwise || c0.MaxAbs != 0 || c0.Len == 0 {
		t.Errorf("A vs A consistency %+v", c0)
	}
	if c1.Len != c0.Len || c1.NaN != 0 || c1.MaxAbs > 1e-3 || c1.Err != "" {
		t.Errorf("math vs fused consistency %+v", c1)
	}
	if c2.Err == "" {
		t.Errorf("bogus arm consistency has no error: %+v", c2)
	}
	if !strings.Contains(strings.Join(res.Notes, "\n"), "cannot change its seed") {
		t.Errorf("notes %q: want the A′ seed caveat", res.Notes)
	}
}

// TestCompareRestart runs the restart path: a "command" that is the
// built-in loop child itself, arms differing in an environment variable it
// ignores; each segment is a new process whose steps are cut from the
// session's step list.
func TestCompareRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: restart comparison starts four child processes")
	}
	bin := needBin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := []string{bin, DemoChildCommand, "--flag", "envs=8", "--flag", "layers=1", "--flag", "width=24"}
	arms := []livestate.Arm{{Name: "X=1", Flags: map[string]string{"RLKTOP_TEST_X": "1"}}, {Name: "X=2", Flags: map[string]string{"RLKTOP_TEST_X": "2"}}}
	res, err := Compare(ctx, CompareOptions{Arms: arms, Command: cmd, Untraced: true, Steps: 2, Warmup: 1, Block: 1, StepTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if res.Mode != "restart" {
		t.Fatalf("mode %q", res.Mode)
	}
	pids := map[string]map[int32]bool{}
	for _, s := range res.Schedule {
		if s.Phase == livestate.PhaseCounted {
			if pids[s.Arm] == nil {
				pids[s.Arm] = map[int32]bool{}
			}
			pids[s.Arm][s.PID] = true
		}
	}
	for _, a := range res.Arms {
		if !a.Valid || a.Steps != 2 {
			t.Errorf("arm %s: valid %v (%s), %d steps; want 2", a.Name, a.Valid, a.Reason, a.Steps)
		}
		if a.Flags[EnvSeed] != "1" {
			t.Errorf("arm %s: %s=%q, want 1", a.Name, EnvSeed, a.Flags[EnvSeed])
		}
		if len(pids[a.Name]) != 2 {
			t.Errorf("arm %s: counted steps from %d processes, want 2 (one per segment)", a.Name, len(pids[a.Name]))
		}
	}
	if res.Consistency != nil {
		t.Errorf("a command has no consistency: %+v", res.Consistency)
	}
}

// TestULPDistance checks ULPDistance against bit patterns worked out by
// hand from IEEE 754 binary32.
func TestULPDistance(t *testing.T) {
	one := math.Float32frombits(0x3f800000) // 1.0
	next := math.Float32frombits(0x3f800001)
	cases := []struct {
		x, y float32
		want int64
	}{
		{one, one, 0},
		{one, next, 1},
		{1.0, 2.0, 0x40000000 - 0x3f800000},   // 2^23: one binade
		{float32(math.Copysign(0, -1)), 0, 0}, // −0 and +0
		{math.Float32frombits(1), math.Float32frombits(0x80000001), 2}, // ±smallest subnormal
		{-1.0, 1.0, 2 * 0x3f800000},
		{math.MaxFloat32, float32(math.Inf(1)), 1},
		{math.Float32frombits(0x3f7fffff), one, 1}, // largest below 1
	}
	for _, c := range cases {
		if got := demo.ULPDistance(c.x, c.y); got != c.want {
			t.Errorf("ULPDistance(%g [%#x], %g [%#x]) = %d, want %d", c.x, math.Float32bits(c.x), c.y, math.Float32bits(c.y), got, c.want)
		}
		if got := demo.ULPDistance(c.y, c.x); got != c.want {
			t.Errorf("ULPDistance not symmetric for %g, %g", c.x, c.y)
		}
	}
	nan := float32(math.NaN())
	if demo.ULPDistance(nan, 1) != math.MaxInt64 {
		t.Error("NaN distance")
	}
	d := demo.CompareProbe([]float32{1, 2, nan, 4}, []float32{1, math.Float32frombits(0x40000003), 3, 4})
	if d.Len != 4 || d.NaN != 1 || d.MaxULP != 3 || d.Bitwise || d.MaxAbs != float64(math.Float32frombits(0x40000003))-2 {
		t.Errorf("demo.CompareProbe = %+v", d)
	}
	if !demo.CompareProbe([]float32{1, nan}, []float32{1, nan}).Bitwise {
		t.Error("identical NaN bits must be bitwise equal")
	}
	if CountNaN([]float32{nan, 1, nan}) != 2 {
		t.Error("CountNaN")
	}
}

func TestCompareOptionErrors(t *testing.T) {
	if _, err := Compare(context.Background(), CompareOptions{Arms: tinyArms(t, "fused")}); err == nil || !strings.Contains(err.Error(), "two or more values") {
		t.Errorf("one arm: err %v", err)
	}
}

// TestCompareFailingCommand: a command that exits 3 before any step makes
// both arms invalid with the exit status in the reason.
func TestCompareFailingCommand(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	arms := []livestate.Arm{{Name: "X=1", Flags: map[string]string{"RLKTOP_TEST_X": "1"}}, {Name: "X=2", Flags: map[string]string{"RLKTOP_TEST_X": "2"}}}
	res, err := Compare(ctx, CompareOptions{Arms: arms, Command: []string{"/bin/sh", "-c", "echo boom >&2; exit 3"}, Untraced: true, Steps: 2, Noise: true, StepTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Arms) != 3 {
		t.Fatalf("arms %+v", res.Arms)
	}
	for _, a := range res.Arms {
		t.Logf("%s: %s", a.Name, a.Reason)
		if a.Valid || !strings.Contains(a.Reason, "status 3") || a.Steps != 0 {
			t.Errorf("arm %s: valid %v, %d steps, reason %q; want invalid with status 3", a.Name, a.Valid, a.Steps, a.Reason)
		}
	}
	if res.Verdict != attrib.VerdictInvalid || res.Valid() {
		t.Errorf("verdict %q", res.Verdict)
	}
}

// TestCompareAA: two arms with the same flags (an A/A run) still switch:
// every switch is acknowledged with a step number, and the arms are told
// apart by name.
func TestCompareAA(t *testing.T) {
	bin := needBin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := Compare(ctx, CompareOptions{Arms: tinyArms(t, "fused,fused"), Exe: bin, Steps: 2, Warmup: 1, Block: 1, StepTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Arms) != 2 || res.Arms[0].Name != "attention=fused" || res.Arms[1].Name != "attention=fused #2" {
		t.Fatalf("arms %+v", res.Arms)
	}
	for _, a := range res.Arms {
		if !a.Valid || a.Steps != 2 {
			t.Errorf("arm %s: valid %v (%s), %d steps", a.Name, a.Valid, a.Reason, a.Steps)
		}
	}
	if res.Verdict == attrib.VerdictInvalid || res.Verdict == "" {
		t.Errorf("verdict %q", res.Verdict)
	}
}
