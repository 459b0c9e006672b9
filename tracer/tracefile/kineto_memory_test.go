package tracefile

import (
	"bytes"
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/internal/testutil"
	"github.com/rlktop/rlktop/tracer"
)

// TestKinetoMemoryEvents: the [memory] instants of the shared H100 and
// MI300X traces become Trace.Memory, counted and summed independently
// by python3's json module (events named "[memory]" with Bytes; net bytes
// per device; the CPU's Device Type 0 as device -1, HIP's 6 as its id),
// and none of them stays an instant event. The Chrome export writes them
// back: reading it again gives the same Memory.
func TestKinetoMemoryEvents(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed: the independent count needs it")
	}
	dir := filepath.Join(testutil.SharedTraces(t), "kineto")
	for _, name := range []string{"tracelens_h100_qwen15_sdpa_flash.json.gz", "tracelens_mi300_qwen15_aotriton.json.gz"} {
		f := filepath.Join(dir, name)
		out, err := exec.Command(py, "-c", `
import gzip, json, sys, collections
ev = json.load(gzip.open(sys.argv[1], "rt"))["traceEvents"]
m = [e["args"] for e in ev if e.get("name") == "[memory]" and e.get("ph") == "i"]
net = collections.Counter()
for a in m:
    net[-1 if a["Device Type"] == 0 else a["Device Id"]] += a["Bytes"]
print(len(m), " ".join("%d:%d" % kv for kv in sorted(net.items())))
`, f).Output()
		if err != nil {
			t.Fatal(err)
		}
		tr, err := Open(f, Options{})
		if err != nil {
			t.Fatal(err)
		}
		net := map[int32]int64{}
		for _, m := range tr.Memory {
			net[m.Device] += m.Bytes
		}
		var parts []string
		for _, d := range slices.Sorted(maps.Keys(net)) {
			parts = append(parts, strconv.Itoa(int(d))+":"+strconv.FormatInt(net[d], 10))
		}
		got := strconv.Itoa(len(tr.Memory)) + " " + strings.Join(parts, " ")
		if want := strings.TrimSpace(string(out)); got != want {
			t.Errorf("%s: memory events %q, python3 counts %q", name, got, want)
		}
		for i := range tr.Events {
			if e := &tr.Events[i]; e.Kind == tracer.KindInstant && tr.Name(e) == kMemoryName {
				t.Fatalf("%s: a [memory] event stayed an instant", name)
			}
		}
		var buf bytes.Buffer
		if err := WriteChrome(&buf, tr, ExportOptions{}); err != nil {
			t.Fatal(err)
		}
		back, err := Read(bytes.NewReader(buf.Bytes()), "export.json", int64(buf.Len()), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(back.Memory, tr.Memory) {
			t.Errorf("%s: the export's memory events differ (%d, want %d)", name, len(back.Memory), len(tr.Memory))
		}
	}
}
