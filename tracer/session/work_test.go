package session

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/wire"
	"github.com/rlktop/rlktop/tracer/wire/msg"
)

// A process traced by the CUPTI library (kernels and launch calls on its
// connection, CUPTI's pthread thread id) whose agent sends torch.profiler
// windows (CPU operators with shapes, the OS thread id, µs from
// baseTimeNanoseconds) on another: a kernel launched inside a window's
// aten::addmm [64,128]x[128,32] takes 2·64·128·32 = 524,288 FLOPs, one
// launched inside the next window's aten::mm [16,8]x[8,4] (waiting for it)
// 2·16·8·4 = 1,024, and one launched between the windows none (its 40 µs
// unmodelled).
func TestCUPTIKernelsTakeWindowShapes(t *testing.T) {
	dir, err := os.MkdirTemp("", "rlktop-kineto-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	const base = int64(1_700_000_000_000_000_000) // host CLOCK_REALTIME ns
	const osTID, cuptiTID = 4242, 987654
	// Window A: ops 100–200 µs; window B: 1000–1100 µs after base.
	window := func(name, op, dims string, ts int64) string {
		path := filepath.Join(dir, name)
		js := fmt.Sprintf(`{"baseTimeNanoseconds": %d, "deviceProperties": [], "traceEvents":[`+
			`{"ph":"X","cat":"cpu_op","name":"aten::linear","pid":7,"tid":%d,"ts":%d,"dur":100},`+
			`{"ph":"X","cat":"cpu_op","name":"%s","pid":7,"tid":%d,"ts":%d,"dur":80,"args":{"Input Dims":%s,"Input type":["float","float","float"]}}]}`,
			base, osTID, ts, op, osTID, ts+10, dims)
		if err := os.WriteFile(path, []byte(js), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	winA := window("window-2.json", "aten::addmm", "[[32],[64,128],[128,32]]", 100)
	winB := window("window-12.json", "aten::mm", "[[16,8],[8,4]]", 1000)

	sess := New(Options{})
	defer sess.Close()
	cu, cuPeer := net.Pipe()
	sess.AddConn(cu)
	cw := wire.NewWriter(cuPeer)
	send := make(chan []tracer.Event)
	cuDone := make(chan struct{})
	go func() {
		// The CUPTI library's stream: hello, then what the test hands it.
		defer close(cuDone)
		cw.Hello(&msg.Hello{Source: "cupti", PID: 7})
		cw.Flush()
		evs := <-send
		for i := range evs {
			if evs[i].Kind == tracer.KindRuntime {
				evs[i].Name = cw.Name("cudaLaunchKernel")
			} else {
				evs[i].Name = cw.Name([]string{"gemm_a", "gemm_b", "between"}[evs[i].Corr-1])
			}
		}
		cw.Events(evs)
		cw.Flush()
	}()
	defer cuPeer.Close()
	ag, agPeer := net.Pipe()
	defer agPeer.Close()
	sess.AddConn(ag)
	aw := wire.NewWriter(agPeer)
	agent := make(chan func())
	defer close(agent)
	// The CUPTI library's hello before window A: a window is kept for the
	// GPU tracer's kernels only when one is connected.
	waitFor(t, "CUPTI library connected", func() bool {
		sess.mu.Lock()
		defer sess.mu.Unlock()
		return sess.vendorTracedLocked(7)
	})
	go func() {
		// The agent's stream: hello, window A, then what the test asks.
		aw.Hello(&msg.Hello{Source: "pyagent", PID: 7})
		aw.WriteFrame(wire.TypeTraceFile, 0, traceFileFrame("kineto", winA, 2, 3))
		aw.Flush()
		for f := range agent {
			f()
			aw.Flush()
		}
	}()
	waitFor(t, "window A imported", func() bool { return sess.windowsImported() == 1 })

	// Launch points (µs after base): 150 in A's addmm, 1050 in B's mm,
	// 500 between the windows.
	us := func(v int64) int64 { return base + v*1000 }
	var evs []tracer.Event
	for i, l := range []int64{150, 1050, 500} {
		corr := uint64(i + 1)
		evs = append(evs,
			tracer.Event{Kind: tracer.KindRuntime, Start: us(l), Dur: 3000, Corr: corr, PID: 7, TID: cuptiTID, Device: -1},
			tracer.Event{Kind: tracer.KindKernel, Start: us(l + 20), Dur: 40_000, Corr: corr, PID: 7, TID: -1, Stream: 7})
	}
	send <- evs
	<-cuDone
	// The agent's step covering every launch links them.
	agent <- func() {
		aw.Events([]tracer.Event{{Kind: tracer.KindStep, Name: aw.Name("step"), Start: us(0), Dur: 2_000_000, Value: 2, PID: 7, TID: osTID, Device: -1}})
	}
	// gemm_a goes on at once (window A is here); the others wait.
	kernel := func(name string) *attrib.KernelRow {
		for _, k := range sess.Snapshot().Cumulative.Kernels {
			if k.Name == name {
				return &k
			}
		}
		return nil
	}
	waitFor(t, "gemm_a aggregated", func() bool { return kernel("gemm_a") != nil })
	if k := kernel("gemm_b"); k != nil {
		t.Errorf("gemm_b aggregated before its window came: %+v", k.Work)
	}
	agent <- func() { aw.WriteFrame(wire.TypeTraceFile, 0, traceFileFrame("kineto", winB, 12, 13)) }
	waitFor(t, "window B imported", func() bool { return sess.windowsImported() == 2 && kernel("gemm_b") != nil && kernel("between") != nil })
	for _, c := range []struct {
		name  string
		flops float64
		ns    int64
	}{{"gemm_a", 2 * 64 * 128 * 32, 40_000}, {"gemm_b", 2 * 16 * 8 * 4, 40_000}, {"between", 0, 0}} {
		k := kernel(c.name)
		if k.Work.Flops != c.flops || k.Work.Ns != c.ns {
			t.Errorf("%s: %v FLOPs over %d ns, want %v over %d", c.name, k.Work.Flops, k.Work.Ns, c.flops, c.ns)
		}
		if c.flops == 0 && k.Work.UnmodelledNs != 40_000 {
			t.Errorf("%s: %d ns unmodelled, want 40000", c.name, k.Work.UnmodelledNs)
		}
	}
	sess.mu.Lock()
	held := -1
	if p := sess.work.procs[7]; p != nil {
		held = len(p.held)
	}
	sess.mu.Unlock()
	if held != 0 {
		t.Errorf("%d kernels still held (-1: the process never held any)", held)
	}
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if ok() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}
