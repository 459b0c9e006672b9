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
	"github.com/rlktop/rlktop/views/viewstest"
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

// memSnap is the hand snapshot with viewstest.Memory's model.
func memSnap() *attrib.Snapshot {
	s := snap()
	s.Memory = viewstest.Memory()
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
			checkGolden(t, name, b.Bytes())
		})
	}
}

// TestMemoryFreedByNoOperator: a temporary freed where no operator was
// open (most frees of the real H100 trace: 1,080 of its 1,225 fall
// outside every cpu_op on their thread, counted over the JSON by hand)
// reads "(no operator)", the name the work tables give kernels launched
// outside operators, and the table says what that means; the CSV keeps
// the empty field.
func TestMemoryFreedByNoOperator(t *testing.T) {
	s := memSnap()
	s.Memory.Temporaries[0].FreedBy = ""
	var b bytes.Buffer
	if err := Write(&b, s, Options{By: ByMemory, Format: "table", Top: -1}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, NoOperatorFreeNote) || !strings.Contains(out, "(no operator)") {
		t.Errorf("table lacks '(no operator)' or the note:\n%s", out)
	}
	var rows int
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "(no operator)") && !strings.HasPrefix(l, "freed by") {
			rows++
		}
	}
	if rows != 1 {
		t.Errorf("%d rows read '(no operator)', want 1 (the temporary made so):\n%s", rows, out)
	}
	b.Reset()
	if err := Write(&b, memSnap(), Options{By: ByMemory, Format: "table", Top: -1}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), NoOperatorFreeNote) {
		t.Errorf("the note shows with every free inside an operator:\n%s", b.String())
	}
}

// The step rows' "held at end" (the device's level) and the operator
// rows' "held at step end" (what each allocated inside the step) differ
// by what was allocated before the step; the report says so, with the
// largest such amount (hand values: held 100 MiB, 30 MiB allocated in the
// step of which 20 MiB freed inside it: 90 MiB carried in), and says
// nothing when the step's own allocations hold it all.
func TestMemoryHeldBeforeStepSaid(t *testing.T) {
	s := memSnap()
	const mib = 1 << 20
	s.Memory.Steps = []attrib.MemStep{
		{Step: 1, Device: 0, HeldBytes: 100 * mib, AllocBytes: 30 * mib, TempBytes: 20 * mib, PeakAllocatedBytes: 120 * mib},
		{Step: 2, Device: 0, HeldBytes: 50 * mib, AllocBytes: 30 * mib, TempBytes: 20 * mib, PeakAllocatedBytes: 120 * mib},
	}
	var b bytes.Buffer
	if err := Write(&b, s, Options{By: ByMemory, Format: "table", Top: -1}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "includes blocks allocated before the step (weights, optimizer state, earlier steps' blocks: up to 90.0 MiB here)") {
		t.Errorf("no note on what the step held from before it:\n%s", b.String())
	}
	s.Memory.Steps = []attrib.MemStep{{Step: 1, Device: 0, HeldBytes: 10 * mib, AllocBytes: 30 * mib, TempBytes: 20 * mib}}
	b.Reset()
	if err := Write(&b, s, Options{By: ByMemory, Format: "table", Top: -1}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "allocated before the step") {
		t.Errorf("the note with nothing carried in:\n%s", b.String())
	}
}
