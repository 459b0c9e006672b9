package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/internal/testutil"
)

// Operator models restricted to what torch.utils.flop_counter counts
// (replace = true drops the built-in entries), so that rlktop's totals
// and FlopCounterMode's count the same operators.
var fcmModels = map[string]string{
	"aten::mm":    `[[op]]` + "\nnames = [\"aten::mm\"]\nformula = \"mm\"\nsource = \"test\"\n",
	"aten::addmm": `[[op]]` + "\nnames = [\"aten::addmm\"]\nformula = \"addmm\"\nsource = \"test\"\n",
	"aten::bmm":   `[[op]]` + "\nnames = [\"aten::bmm\"]\nformula = \"bmm\"\nsource = \"test\"\n",
	"aten::convolution": `[[op]]
names = ["aten::convolution", "aten::_convolution"]
formula = "conv"
args = [3, 4, 5, 6, 8]
source = "test"
[[op]]
names = ["aten::mkldnn_convolution"]
formula = "conv"
args = [4, 3, 5, -1, 6]
source = "test"
`,
	"aten::convolution_backward": `[[op]]
names = ["aten::convolution_backward"]
formula = "conv_backward"
args = [4, 5, 6, 7, 9]
source = "test"
`,
}

type rooflineDoc struct {
	Kernels []struct {
		Name              string   `json:"name"`
		Flops             *float64 `json:"flops"`
		Bytes             *float64 `json:"bytes"`
		AchievedFlopsPerS *float64 `json:"achieved_flops_per_s"`
		AchievedBytesPerS *float64 `json:"achieved_bytes_per_s"`
		Bound             string   `json:"bound"`
		OfPeak            *float64 `json:"of_peak"`
	} `json:"kernels"`
	Categories []struct {
		Category string   `json:"category"`
		Flops    *float64 `json:"flops"`
		Bound    string   `json:"bound"`
	} `json:"categories"`
	Steps []struct {
		Step  int64    `json:"step"`
		Flops *float64 `json:"flops"`
		MFU   *float64 `json:"mfu"`
	} `json:"steps"`
	Work *struct {
		Convention   string   `json:"convention"`
		Device       string   `json:"device"`
		PeakMeasured bool     `json:"peak_measured"`
		Flops        float64  `json:"flops"`
		FlopsMedian  *float64 `json:"flops_median"`
		MFU          *float64 `json:"mfu"`
	} `json:"work"`
}

// TestTorchFlopsMatchFlopCounter: a CPU torch.profiler trace
// (record_shapes) of conv2d, linear and math SDPA, forward and backward
// (testdata/flopcounter.py), against PyTorch's own
// torch.utils.flop_counter.FlopCounterMode run on the same model: per
// operator (rlktop with a model of that operator only: its total over the
// steps / steps) and per step (a model of the operators FlopCounterMode
// counts) within 1%; and the default model's report carries the work
// fields, a measured CPU peak and MFU.
func TestTorchFlopsMatchFlopCounter(t *testing.T) {
	r := testutil.NeedTorchRoot(t)
	host := func(p string) string { return filepath.Join(r.Dir, strings.TrimPrefix(p, "/")) }
	script, err := os.ReadFile(filepath.Join("testdata", "flopcounter.py"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(host(r.Dst+"/flopcounter.py"), script, 0o644); err != nil {
		t.Fatal(err)
	}
	trace, counts := r.Dst+"/fc.json", r.Dst+"/fc-counts.json"
	if out, err := r.Command("python3", r.Dst+"/flopcounter.py", trace, counts, "--steps", "3").CombinedOutput(); err != nil {
		t.Fatalf("flopcounter.py: %v\n%s", err, out)
	}
	var ref struct {
		PerIteration map[string]float64 `json:"per_iteration"`
		Total        float64            `json:"total"`
		Steps        int                `json:"steps"`
	}
	b, err := os.ReadFile(host(counts))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	report := func(model string) rooflineDoc {
		t.Helper()
		args := []string{r.Bin, "report", "--format", "json"}
		if model != "" {
			p := r.Dst + "/model.toml"
			if err := os.WriteFile(host(p), []byte("replace = true\n"+model), 0o644); err != nil {
				t.Fatal(err)
			}
			args = append(args, "--op-model", p)
		}
		out, err := r.Command(append(args, trace)...).Output()
		if err != nil {
			t.Fatalf("report: %v", err)
		}
		var d rooflineDoc
		if err := json.Unmarshal(out, &d); err != nil {
			t.Fatalf("report JSON: %v", err)
		}
		return d
	}
	within := func(got, want float64) bool { return math.Abs(got-want) <= 0.01*want }
	var all strings.Builder
	for op, model := range fcmModels {
		all.WriteString(model)
		want := ref.PerIteration[op]
		if want == 0 {
			t.Fatalf("FlopCounterMode counted no %s: %v", op, ref.PerIteration)
		}
		d := report(model)
		if d.Work == nil {
			t.Fatalf("%s: no work in the report", op)
		}
		if got := d.Work.Flops / float64(ref.Steps); !within(got, want) {
			t.Errorf("%s: %.0f FLOPs per step, FlopCounterMode %.0f", op, got, want)
		}
	}
	d := report(all.String())
	if len(d.Steps) != ref.Steps {
		t.Fatalf("%d steps, want %d", len(d.Steps), ref.Steps)
	}
	for _, st := range d.Steps {
		if st.Flops == nil || !within(*st.Flops, ref.Total) {
			t.Errorf("step %d: FLOPs %v, FlopCounterMode %.0f per iteration", st.Step, st.Flops, ref.Total)
		}
	}
	// The default model counts more (softmax, elementwise, norms by
	// convention) and gives every field the report promises.
	d = report("")
	if d.Work == nil || d.Work.Flops < ref.Total*float64(ref.Steps) || !strings.Contains(d.Work.Convention, "multiply-add = 2 FLOPs") {
		t.Fatalf("default model work %+v: want at least FlopCounterMode's %.0f FLOPs and the convention", d.Work, ref.Total*float64(ref.Steps))
	}
	if !d.Work.PeakMeasured || !strings.HasPrefix(d.Work.Device, "CPU ") || d.Work.MFU == nil || *d.Work.MFU <= 0 || d.Work.FlopsMedian == nil {
		t.Errorf("CPU peak and MFU: %+v", d.Work)
	}
	for _, st := range d.Steps {
		if st.Flops == nil || st.MFU == nil {
			t.Errorf("step %d lacks flops or mfu", st.Step)
		}
	}
	found := false
	for _, k := range d.Kernels {
		if k.Name == "aten::mm" {
			found = true
			if k.Flops == nil || k.Bytes == nil || k.AchievedFlopsPerS == nil || k.AchievedBytesPerS == nil || (k.Bound != "compute" && k.Bound != "memory") || k.OfPeak == nil {
				t.Errorf("aten::mm row lacks work fields: %+v", k)
			}
		}
	}
	if !found {
		t.Error("no aten::mm row")
	}
	for _, c := range d.Categories {
		if c.Category == "attention" && (c.Flops == nil || *c.Flops == 0 || c.Bound == "") {
			t.Errorf("attention category work: %+v", c)
		}
	}
}

// TestTorchRunShapes: a live run of the example under `run --headless`:
// the agent's torch.profiler windows record shapes by default, so the
// profiled steps carry FLOPs (against FlopCounterMode-checked formulas),
// steps has flops_median and mfu (a measured CPU peak); --no-shapes
// turns them off.
func TestTorchRunShapes(t *testing.T) {
	r := testutil.NeedTorchRoot(t)
	run := func(extra ...string) map[string]json.RawMessage {
		t.Helper()
		args := append(append([]string{r.Bin, "run", "--headless", "--steps", "4", "--format", "json"}, extra...), exampleCmd(r)...)
		cmd := r.Command(args...)
		cmd.Env = append(cmd.Env, "RLKTOP_KINETO=3:1")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("run --headless %v: %v\n%s", extra, err, tail(stderr.String(), 3000))
		}
		var doc map[string]json.RawMessage
		if err := json.Unmarshal(out, &doc); err != nil {
			t.Fatalf("run JSON: %v", err)
		}
		return doc
	}
	doc := run()
	var steps struct {
		FlopsMedian *float64 `json:"flops_median"`
		MFU         *float64 `json:"mfu"`
		Convention  string   `json:"convention"`
	}
	if err := json.Unmarshal(doc["steps"], &steps); err != nil {
		t.Fatal(err)
	}
	if steps.FlopsMedian == nil || *steps.FlopsMedian <= 0 || steps.MFU == nil || *steps.MFU <= 0 || steps.Convention == "" {
		t.Errorf("steps: %s", doc["steps"])
	}
	var rows []struct {
		Step  int64    `json:"step"`
		Flops *float64 `json:"flops"`
	}
	if err := json.Unmarshal(doc["step_rows"], &rows); err != nil {
		t.Fatal(err)
	}
	profiled := 0
	for _, s := range rows {
		if s.Flops != nil && *s.Flops > 0 {
			profiled++
		}
	}
	if profiled == 0 {
		t.Errorf("no step carries FLOPs: %s", doc["step_rows"])
	}
	var cats []struct {
		Category string   `json:"category"`
		Flops    *float64 `json:"flops"`
		Bound    string   `json:"bound"`
	}
	if err := json.Unmarshal(doc["categories"], &cats); err != nil {
		t.Fatal(err)
	}
	gemm := false
	for _, c := range cats {
		gemm = gemm || (c.Category == "gemm" && c.Flops != nil && *c.Flops > 0 && c.Bound != "")
	}
	if !gemm {
		t.Errorf("no gemm category with FLOPs and a bound: %s", doc["categories"])
	}
	if doc := run("--no-shapes"); doc["work"] != nil {
		t.Errorf("--no-shapes: the report carries work %s", doc["work"])
	}
}
