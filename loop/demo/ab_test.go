package demo

import (
	"fmt"
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// minAB runs a and b (single-threaded code) alternately n times each and
// returns the minimum thread CPU time of each in ns: on a machine shared
// with other jobs, CPU time ignores the waits for a core, the minimum of
// interleaved runs is the closest to the unloaded time, and interleaving
// exposes both arms to the same conditions.
func minAB(n int, a, b func()) (ma, mb int64) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	// Repeat each arm enough times per sample (≥ ~30 ms) for the kernel's
	// CPU accounting resolution.
	w0 := time.Now()
	a()
	inner := max(1, int(30*time.Millisecond/max(time.Since(w0), time.Microsecond)))
	ma, mb = 1<<62, 1<<62
	for i := 0; i < n; i++ {
		t0 := threadCPU()
		for k := 0; k < inner; k++ {
			a()
		}
		t1 := threadCPU()
		for k := 0; k < inner; k++ {
			b()
		}
		t2 := threadCPU()
		ma = min(ma, (t1-t0)/int64(inner))
		mb = min(mb, (t2-t1)/int64(inner))
	}
	return
}

// threadCPU returns the calling thread's CPU ns (getrusage RUSAGE_THREAD).
func threadCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// TestAttentionABMin (RLK_AB=1) compares attention=math and fused over a
// grid of sizes by interleaved minimum times; fused must not lose anywhere
// (a 5% allowance for timer noise).
func TestAttentionABMin(t *testing.T) {
	if os.Getenv("RLK_AB") == "" {
		t.Skip("set RLK_AB=1 to run the interleaved attention comparison")
	}
	for _, c := range abSizes() {
		nb, T, dh := c[0], c[1], c[2]
		ca := newAttnCase(1, nb, T, 6, dh, true, 1)
		sh := ca.sh
		o := make([]float32, nb*T*ca.D)
		lse := make([]float32, nb*6*T)
		s := make([]float32, nb*6*T*T)
		qp, kp, vp := make([]float32, T*dh), make([]float32, T*dh), make([]float32, T*dh)
		reps := 10
		if nb*T >= 10000 {
			reps = 3
		}
		mm, mf := minAB(reps, func() {
			attnMathQK(s, ca.q, ca.k, sh)
			attnMathSoftmax(s, lse, sh)
			attnMathPV(o, s, ca.v, ca.D, sh)
		}, func() {
			attnFused(o, lse, ca.q, ca.k, ca.v, qp, kp, vp, ca.D, sh)
		})
		r := float64(mm) / float64(mf)
		t.Logf("%s: math %.3f ms, fused %.3f ms, math/fused %.2fx", fmt.Sprintf("B%d T%d dh%d", nb, T, dh), float64(mm)/1e6, float64(mf)/1e6, r)
		if r < 0.95 {
			t.Errorf("fused loses at B%d T%d dh%d", nb, T, dh)
		}
	}
}

func abSizes() [][3]int {
	if s := os.Getenv("RLK_AB_SIZES"); s == "small" {
		return [][3]int{{32, 90, 16}, {2, 90, 64}, {32, 90, 8}}
	}
	return [][3]int{{1, 8, 8}, {1, 33, 8}, {4, 33, 8}, {1, 90, 8}, {32, 90, 8}, {32, 90, 16}, {2, 90, 64}, {8, 100, 8}, {1024, 90, 8}}
}
