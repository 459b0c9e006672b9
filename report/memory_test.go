package report

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/internal/testutil"
	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/tracefile"
)

// TestMemorySharedTraces: the two shared traces with torch.profiler
// memory events (TraceLens, H100 and MI300X) reported as JSON; the
// independent testdata/check_memory.py recomputes the per-step peaks, the
// temporaries and the per-operator bytes from the raw file by the written
// rule, and must agree exactly.
func TestMemorySharedTraces(t *testing.T) {
	dir := filepath.Join(testutil.SharedTraces(t), "kineto")
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed: the independent check needs it")
	}
	for _, name := range []string{"tracelens_h100_qwen15_sdpa_flash.json.gz", "tracelens_mi300_qwen15_aotriton.json.gz"} {
		t.Run(name, func(t *testing.T) {
			f := filepath.Join(dir, name)
			tr, err := tracefile.Open(f, tracefile.Options{})
			if err != nil {
				t.Fatal(err)
			}
			snap := attrib.CombineSources([]*tracer.Trace{tr}, nil)
			if snap.Memory == nil {
				t.Fatal("no memory model from a trace with [memory] events")
			}
			out := filepath.Join(t.TempDir(), "report.json")
			fh, err := os.Create(out)
			if err != nil {
				t.Fatal(err)
			}
			if err := Write(fh, snap, Options{Format: "json", By: ByMemory, Top: 0}); err != nil {
				t.Fatal(err)
			}
			fh.Close()
			res, err := exec.Command(py, filepath.Join("testdata", "check_memory.py"), f, out).CombinedOutput()
			if err != nil || !strings.HasPrefix(string(res), "OK ") {
				t.Errorf("independent check: %v\n%s", err, res)
			}
			t.Logf("%s", res)
		})
	}
}

// memSnap is a hand-made run on gpu 0: two steps of 10 ms, each with a
// 64 MiB temporary of aten::index in stage policy_head freed by aten::sum
// 0.3 ms later, and 1 MiB of aten::zeros held across steps; 100 MiB held
// before (the allocator's totals given).
func memSnap() *attrib.Snapshot {
	var recs []attrib.MemRecord
	var wins []attrib.MemStepWindow
	level := int64(100 << 20)
	for s := int64(1); s <= 2; s++ {
		t0 := s * 10e6
		wins = append(wins, attrib.MemStepWindow{PID: 1, Step: s, StartNs: t0, EndNs: t0 + 10e6})
		add := func(ts, bytes int64, addr uint64, op, stage string) {
			level += bytes
			recs = append(recs, attrib.MemRecord{MemEvent: tracer.MemEvent{TS: ts, Bytes: bytes, Addr: addr, Allocated: level, Reserved: 256 << 20, PID: 1, Device: 0},
				Op: op, Ops: []string{op}, Stage: stage, Step: s})
		}
		add(t0+1e6, 64<<20, 0x1000, "aten::index", "policy_head")
		add(t0+1.3e6, -(64 << 20), 0x1000, "aten::sum", "policy_head")
		add(t0+2e6, 1<<20, uint64(0x9000+s), "aten::zeros", "rollout")
	}
	s := snap()
	s.Memory = attrib.BuildMemory(recs, wins)
	return s
}

// TestMemoryGolden pins report --by memory in every format for memSnap
// (its numbers counted by hand: peaks 164 and 165 MiB, held 101 and 102
// MiB, the 64 MiB temporary twice, growth 1 MiB a step). Rewrite with
// go test ./report -run MemoryGolden -update.
func TestMemoryGolden(t *testing.T) {
	for _, f := range Formats() {
		name := "memhand.memory." + f
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if err := Write(&b, memSnap(), Options{By: ByMemory, Format: f, Top: -1}); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", name)
			if *update {
				if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create)", err)
			}
			if !bytes.Equal(b.Bytes(), want) {
				t.Errorf("%s differs from the golden file:\n--- got\n%s\n--- want\n%s", name, b.String(), want)
			}
		})
	}
}
