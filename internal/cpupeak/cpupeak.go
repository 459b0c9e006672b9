// Package cpupeak measures this machine's CPU limits for the roofline of
// CPU runs (the built-in loop, torch.profiler windows without GPU work):
// the compute peak is the faster of a loop of independent float32 fused
// multiply-adds on the widest vector registers the CPU has (AVX-512 or
// AVX2 on amd64: the most a BLAS such as PyTorch's oneDNN or OpenBLAS can
// reach) and a float32 GEMM through gonum (the built-in loop's BLAS, far
// below that: 12 GFLOP/s against 104 GFLOP/s for PyTorch's aten::mm on
// a 2-core AVX-512 machine), on every core; the memory peak a copy on
// every core. About 700 ms together, cached per machine in the user's
// cache directory (rlktop/cpu-peak.json, keyed by CPU model and core
// count); the figures are labelled "measured" wherever they are shown. A machine busy with other
// work when it is measured gets low figures; rlktop measures before it
// starts the built-in loop, and drops the cache when a kernel runs above
// it (Forget), so the next start measures again.
package cpupeak

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// Result is one measurement.
type Result struct {
	Machine   string  `json:"machine"`     // CPU model name and core count
	FlopsPerS float64 `json:"flops_per_s"` // float32 GEMM, all cores
	BytesPerS float64 `json:"bytes_per_s"` // copy: bytes read + written per s, all cores
	At        string  `json:"measured_at"` // RFC 3339
	TookMs    int64   `json:"took_ms"`
	Method    string  `json:"method"`
}

// machine names this machine for the cache: the CPU model from
// /proc/cpuinfo (else GOARCH) and GOMAXPROCS.
func machine() string {
	model := runtime.GOARCH
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	return fmt.Sprintf("%s × %d", model, runtime.GOMAXPROCS(0))
}

// cachePath is the cache file ("" when the user has no cache directory).
func cachePath() string {
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "rlktop", "cpu-peak.json")
}

// cached returns this machine's cached measurement of the current method.
func cached(m string) (Result, bool) {
	p := cachePath()
	if p == "" {
		return Result{}, false
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return Result{}, false
	}
	var r Result
	ok := json.Unmarshal(b, &r) == nil && r.Machine == m && r.Method == method && r.FlopsPerS > 0 && r.BytesPerS > 0
	return r, ok
}

// Cached reports whether Get would return a cached measurement (false:
// it would measure, about 600 ms on every core).
func Cached() bool {
	_, ok := cached(machine())
	return ok
}

// Forget removes the cached measurement, so that the next Get measures
// again: a kernel that ran above the measured peak shows the measurement
// was taken while other work held the cores. A missing cache or one that
// cannot be removed is not an error (the next Get reads it or measures).
func Forget() {
	if p := cachePath(); p != "" {
		_ = os.Remove(p)
	}
}

// Get returns this machine's cached measurement, measuring (and caching)
// it when there is none for this machine. A cache that cannot be written
// only means the next call measures again.
func Get() Result {
	m := machine()
	p := cachePath()
	if r, ok := cached(m); ok {
		return r
	}
	r := Measure()
	r.Machine = m
	if p != "" {
		if b, err := json.MarshalIndent(r, "", "  "); err == nil {
			_ = os.MkdirAll(filepath.Dir(p), 0o755)
			tmp := p + ".tmp"
			if os.WriteFile(tmp, b, 0o644) == nil {
				_ = os.Rename(tmp, p)
			}
		}
	}
	return r
}

// Measure runs the microbenchmarks now: float32 products of 512×512
// matrices through gonum's Sgemm (2·512³ FLOPs each; the BLAS the
// built-in loop's tensors run on, which spreads one product over every
// core), the fused multiply-add loop on every core (fma_amd64.s; none on
// other architectures) and a 32 MiB copy on every core, 30-100 ms each;
// the best of three rounds is kept.
func Measure() Result {
	t0 := time.Now()
	n := runtime.GOMAXPROCS(0)
	var fl, by float64
	loop, perRound, _ := fmaLoop()
	for range 3 {
		fl = max(fl, gemmRate())
		if loop != nil {
			fl = max(fl, parallel(n, func() float64 { return fmaRate(loop, perRound) }))
		}
		by = max(by, parallel(n, copyRate))
	}
	return Result{FlopsPerS: fl, BytesPerS: by, At: time.Now().UTC().Format(time.RFC3339), TookMs: time.Since(t0).Milliseconds(),
		Method: method}
}

// method names the microbenchmarks; a cached result of others is measured again.
var method = func() string {
	gemm := "gonum Sgemm (512×512 float32, all cores)"
	if _, _, name := fmaLoop(); name != "" {
		gemm = "the faster of an " + name + " loop (float32, all cores) and " + gemm
	}
	return gemm + "; copy (32 MiB per core)"
}()

// fmaRate returns FLOP/s of the fused multiply-add loop on this core for
// about 30 ms.
func fmaRate(loop func(int64), perRound float64) float64 {
	const rounds = 1 << 16
	reps := 0
	t0 := time.Now()
	for reps == 0 || time.Since(t0) < 30*time.Millisecond {
		loop(rounds)
		reps++
	}
	return float64(reps) * rounds * perRound / time.Since(t0).Seconds()
}

func parallel(n int, f func() float64) float64 {
	var mu sync.Mutex
	var sum float64
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := f()
			mu.Lock()
			sum += r
			mu.Unlock()
		}()
	}
	wg.Wait()
	return sum
}

const gemmN = 512

var sink float32

// gemmRate returns FLOP/s of repeated 512×512 products for about 100 ms.
func gemmRate() float64 {
	a, b, c := make([]float32, gemmN*gemmN), make([]float32, gemmN*gemmN), make([]float32, gemmN*gemmN)
	for i := range a {
		a[i], b[i] = float32(i%7)*0.5, float32(i%5)*0.25
	}
	var impl gonum.Implementation
	reps := 0
	t0 := time.Now()
	for reps == 0 || time.Since(t0) < 100*time.Millisecond {
		impl.Sgemm(blas.NoTrans, blas.NoTrans, gemmN, gemmN, gemmN, 1, a, gemmN, b, gemmN, 0, c, gemmN)
		reps++
	}
	sink += c[gemmN+1]
	return float64(reps) * 2 * gemmN * gemmN * gemmN / time.Since(t0).Seconds()
}

// copyRate returns bytes read + written per second copying 32 MiB for
// about 50 ms.
func copyRate() float64 {
	const size = 32 << 20
	src, dst := make([]byte, size), make([]byte, size)
	for i := range src {
		src[i] = byte(i)
	}
	reps := 0
	t0 := time.Now()
	for time.Since(t0) < 50*time.Millisecond {
		copy(dst, src)
		reps++
	}
	sink += float32(dst[size-1])
	return float64(reps) * 2 * size / time.Since(t0).Seconds()
}
