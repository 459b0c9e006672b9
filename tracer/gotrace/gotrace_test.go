package gotrace

import (
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rlktop/rlktop/tracer"
)

func drainAll(t *Tracer) []tracer.Event {
	var out []tracer.Event
	t.Drain(func(b []tracer.Event) { out = append(out, b...) })
	return out
}

func TestKernelRangeStep(t *testing.T) {
	tr := New(16)
	k := tr.Name("attn_fused_fwd")
	st := tr.Name("forward")
	if tr.Name("forward") != st || tr.NameOf(st) != "forward" || tr.NameOf(StepName) != "step" {
		t.Fatal("name registry not idempotent")
	}
	tr.StepBegin(7)
	tr.RangeBegin(st)
	s := tr.Now()
	time.Sleep(2 * time.Millisecond)
	tr.Kernel(k, s)
	tr.RangeEnd()
	tr.StepEnd()
	ev := drainAll(tr)
	if len(ev) != 3 {
		t.Fatalf("got %d events, want 3", len(ev))
	}
	kern, rng, step := ev[0], ev[1], ev[2]
	if kern.Kind != tracer.KindKernel || kern.Name != tracer.StrID(k) || kern.Device != 0 || kern.Stream != 0 || kern.TID != DefaultTID {
		t.Errorf("kernel event %+v", kern)
	}
	if kern.Dur < int64(2*time.Millisecond) {
		t.Errorf("kernel dur %d ns < slept 2ms", kern.Dur)
	}
	if rng.Kind != tracer.KindRange || rng.Name != tracer.StrID(st) || rng.Start > kern.Start || rng.End() < kern.End() {
		t.Errorf("range %+v does not contain kernel %+v", rng, kern)
	}
	if step.Kind != tracer.KindStep || step.Value != 7 || step.Name != tracer.StrID(StepName) || step.Start > rng.Start || step.End() < rng.End() {
		t.Errorf("step %+v", step)
	}
	// Names(from) hands out the table incrementally.
	if got := tr.Names(2); len(got) != 2 || got[0] != "attn_fused_fwd" || got[1] != "forward" {
		t.Errorf("Names(2) = %q", got)
	}
	// Realtime of the kernel start is within a second of now.
	rt := kern.Start + tr.ClockOffset()
	if d := time.Now().UnixNano() - rt; d < 0 || d > int64(time.Second) {
		t.Errorf("clock offset off by %d ns", d)
	}
}

func TestDropsWhenFullAndWrap(t *testing.T) {
	tr := New(4)
	k := tr.Name("k")
	for i := 0; i < 6; i++ {
		tr.Kernel(k, tr.Now())
	}
	if tr.Dropped() != 2 || tr.Recorded() != 4 {
		t.Fatalf("dropped %d recorded %d, want 2, 4", tr.Dropped(), tr.Recorded())
	}
	if n := len(drainAll(tr)); n != 4 {
		t.Fatalf("drained %d", n)
	}
	// Wrap: 3 more events land at ring slots 0..2 after head=4; then 3 more
	// wrap across the end.
	for i := 0; i < 3; i++ {
		tr.Kernel(k, tr.Now())
	}
	drainAll(tr)
	var batches []int
	for i := 0; i < 3; i++ {
		tr.Kernel(k, tr.Now())
	}
	tr.Drain(func(b []tracer.Event) { batches = append(batches, len(b)) })
	if len(batches) != 2 || batches[0]+batches[1] != 3 {
		t.Fatalf("wrapped drain batches %v, want two summing to 3", batches)
	}
}

func TestDisabled(t *testing.T) {
	tr := New(8)
	k := tr.Name("k")
	r := tr.Name("r")
	tr.Enable(false)
	if tr.Now() != 0 {
		t.Fatal("Now while disabled must be 0")
	}
	tr.StepBegin(1)
	tr.RangeBegin(r)
	tr.Kernel(k, tr.Now())
	tr.Enable(true)
	tr.Kernel(k, 0) // started while disabled
	tr.RangeEnd()   // opened while disabled
	tr.StepEnd()
	if ev := drainAll(tr); len(ev) != 0 {
		t.Fatalf("recorded %d events while disabled", len(ev))
	}
	if tr.Depth() != 0 {
		t.Fatal("range stack unbalanced")
	}
	tr.RangeBegin(r)
	tr.Enable(false)
	tr.RangeEnd() // closed while disabled: dropped silently
	tr.Enable(true)
	if ev := drainAll(tr); len(ev) != 0 {
		t.Fatalf("range closed while disabled was recorded")
	}
}

// TestConcurrentDrain runs the producer and a consumer at once (use -race):
// every event arrives exactly once and in order, or is counted as dropped.
func TestConcurrentDrain(t *testing.T) {
	tr := New(64)
	k := tr.Name("k")
	const n = 20000
	var wg sync.WaitGroup
	done := make(chan struct{})
	var got []int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				tr.Drain(func(b []tracer.Event) {
					for i := range b {
						got = append(got, b[i].Value)
					}
				})
				return
			default:
				tr.Drain(func(b []tracer.Event) {
					for i := range b {
						got = append(got, b[i].Value)
					}
				})
			}
		}
	}()
	for i := 0; i < n; i++ {
		e := tracer.Event{Start: 1, Value: int64(i), Name: tracer.StrID(k), Kind: tracer.KindKernel}
		tr.push(&e)
	}
	close(done)
	wg.Wait()
	if uint64(len(got))+tr.Dropped() != n {
		t.Fatalf("got %d + dropped %d != %d", len(got), tr.Dropped(), n)
	}
	for i := 1; i < len(got); i++ {
		if got[i] <= got[i-1] {
			t.Fatalf("out of order at %d: %d after %d", i, got[i], got[i-1])
		}
	}
}

func TestZeroAllocs(t *testing.T) {
	tr := New(1 << 10)
	k := tr.Name("k")
	r := tr.Name("r")
	allocs := testing.AllocsPerRun(100, func() {
		tr.StepBegin(1)
		tr.RangeBegin(r)
		tr.Kernel(k, tr.Now())
		tr.RangeEnd()
		tr.StepEnd()
		tr.Drain(func([]tracer.Event) {})
	})
	if allocs != 0 {
		t.Fatalf("%v allocs per step", allocs)
	}
}

// BenchmarkKernel: one traced kernel event (Now + Kernel), consumer draining
// every 1024 events as the wire client would.
func BenchmarkKernel(b *testing.B) {
	tr := New(1 << 16)
	k := tr.Name("k")
	b.ReportAllocs()
	defer reportCPU(b)()
	for i := 0; b.Loop(); i++ {
		tr.Kernel(k, tr.Now())
		if i&1023 == 1023 {
			tr.Drain(func([]tracer.Event) {})
		}
	}
}

// BenchmarkKernelChained: back-to-back kernels chaining the returned end
// as the next start (one clock read per event).
func BenchmarkKernelChained(b *testing.B) {
	tr := New(1 << 16)
	k := tr.Name("k")
	b.ReportAllocs()
	s := tr.Now()
	defer reportCPU(b)()
	for i := 0; b.Loop(); i++ {
		s = tr.Kernel(k, s)
		if i&1023 == 1023 {
			tr.Drain(func([]tracer.Event) {})
		}
	}
}

// BenchmarkRange: one range (begin + end = one event).
func BenchmarkRange(b *testing.B) {
	tr := New(1 << 16)
	r := tr.Name("r")
	b.ReportAllocs()
	defer reportCPU(b)()
	for i := 0; b.Loop(); i++ {
		tr.RangeBegin(r)
		tr.RangeEnd()
		if i&1023 == 1023 {
			tr.Drain(func([]tracer.Event) {})
		}
	}
}

// BenchmarkDisabled: Now + Kernel on a disabled tracer.
func BenchmarkDisabled(b *testing.B) {
	tr := New(1 << 10)
	k := tr.Name("k")
	tr.Enable(false)
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		tr.Kernel(k, tr.Now())
	}
}

// BenchmarkClock: the clock read alone (time.Since on the monotonic clock).
func BenchmarkClock(b *testing.B) {
	tr := New(1)
	var s int64
	defer reportCPU(b)()
	for b.Loop() {
		s += tr.clock()
	}
	_ = s
}

// cpuNs returns this process's user+system CPU ns (getrusage). Benchmarks
// report cpu-ns/op besides wall time: the shared dev machine is often
// loaded by other jobs, which inflates wall time but not CPU time.
func cpuNs() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

func reportCPU(b *testing.B) func() {
	c0 := cpuNs()
	return func() { b.ReportMetric(float64(cpuNs()-c0)/float64(b.N), "cpu-ns/op") }
}

// The built-in loop's workspaces are Go heap: their memory events are
// host memory (device -1, torch.profiler's CPU mark), whatever device the
// kernels are shown on (0 here); the Memory view labelled them "gpu 0"
// on a machine without a GPU.
func TestMemoryIsHostMemory(t *testing.T) {
	tr := New(16)
	tr.Memory(4096, 0x1000)
	tr.Memory(-4096, 0x1000)
	ms := tr.TakeMemory()
	if len(ms) != 2 || ms[0].Device != -1 || ms[1].Device != -1 || ms[0].Bytes != 4096 || ms[1].Bytes != -4096 {
		t.Errorf("memory events %+v: want two on device -1, +4096 then -4096", ms)
	}
}
