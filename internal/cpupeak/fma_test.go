package cpupeak

import (
	"runtime"
	"testing"
	"time"
)

// TestFMALoopRate: the fused multiply-add loop's rate on one core lies
// between a hand bound below (one 8-lane FMA every 4 cycles at 0.5 GHz:
// 2 GFLOP/s, far under any AVX2 core) and above (two FMA ports × 16 lanes
// × 2 FLOPs at 6 GHz: 384 GFLOP/s, over any core sold), and a round takes
// the time its FLOPs say: 2^16 rounds are not optimised away.
func TestFMALoopRate(t *testing.T) {
	loop, perRound, name := fmaLoop()
	if loop == nil {
		t.Skipf("no fused multiply-add loop on %s (or this CPU lacks AVX2 FMA)", runtime.GOARCH)
	}
	r := fmaRate(loop, perRound)
	t.Logf("%s: %.1f GFLOP/s on one core", name, r/1e9)
	if r < 2e9 || r > 384e9 {
		t.Errorf("%s: %.3g FLOP/s on one core: outside [2e9, 384e9]", name, r)
	}
	t0 := time.Now()
	loop(1 << 20)
	if d := time.Since(t0); d < time.Duration(float64(1<<20)*perRound/384e9*1e9) {
		t.Errorf("2^20 rounds (%.3g FLOPs) took %v: faster than any core", float64(1<<20)*perRound, d)
	}
}
