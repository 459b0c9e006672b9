package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/rlktop/rlktop/internal/testutil"
)

// reportViews runs `rlktop report FILE --format json` and returns what the
// report says in every view (kernels, transfers, categories, stages, steps,
// totals), without the fields that name the file or its format.
func reportViews(t *testing.T, bin, file string) map[string]any {
	t.Helper()
	out, err := exec.Command(bin, "report", file, "--format", "json", "--top", "0").Output()
	if err != nil {
		t.Fatalf("rlktop report %s: %v", file, err)
	}
	var doc map[string]any
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("report of %s is not JSON: %v", file, err)
	}
	views := map[string]any{}
	for _, k := range []string{"kernels", "transfers", "categories", "stages", "steps", "totals"} {
		views[k] = doc[k]
	}
	return views
}

// checkExportIdentity exports src with `rlktop export` and checks that
// `rlktop report` of the export equals `report` of src in every view: the
// export keeps the launch calls (with correlation ids), the annotation
// ranges on their threads and the launch→kernel "ac2g" flows, so kernels,
// categories, stages and steps come out the same.
func checkExportIdentity(t *testing.T, bin, src string) map[string]any {
	t.Helper()
	exp := filepath.Join(t.TempDir(), "export.json.gz")
	if out, err := exec.Command(bin, "export", src, "-o", exp).CombinedOutput(); err != nil {
		t.Fatalf("rlktop export %s: %v\n%s", src, err, out)
	}
	a, b := reportViews(t, bin, src), reportViews(t, bin, exp)
	for k := range a {
		if !reflect.DeepEqual(a[k], b[k]) {
			ja, _ := json.Marshal(a[k])
			jb, _ := json.Marshal(b[k])
			t.Errorf("%s: report of the export differs in %s\nrecording %.600s\nexport    %.600s", filepath.Base(src), k, ja, jb)
		}
	}
	return a
}

// TestExportRoundTripBuiltinLoop: a recording of the built-in loop, whose
// ops are launched on their own thread with no launch call, keeps its
// steps and stages through export (it used to give 0 ns per step and 100%
// "(none)").
func TestExportRoundTripBuiltinLoop(t *testing.T) {
	bin := needRecordBin(t)
	rec := filepath.Join(t.TempDir(), "loop.rlk")
	if out, err := exec.Command(bin, append([]string{"record", "-o", rec, "--steps", "3"}, tinyLoop...)...).CombinedOutput(); err != nil {
		t.Fatalf("rlktop record: %v\n%s", err, out)
	}
	v := checkExportIdentity(t, bin, rec)
	// The recording itself has attribution to lose: steps with GPU time
	// and stages other than "(none)".
	steps, _ := v["steps"].([]any)
	stages, _ := v["stages"].([]any)
	if len(steps) != 3 || len(stages) < 2 {
		t.Fatalf("recording: %d steps, %d stages; want 3 steps and several stages", len(steps), len(stages))
	}
	for _, s := range steps {
		if s.(map[string]any)["gpu_ns"].(float64) <= 0 {
			t.Errorf("recorded step without GPU time: %v", s)
		}
	}
}

// TestExportRoundTripKineto: shared Kineto traces re-exported — the
// autograd-thread ResNet (hta_ns_resolution_v100) and the with_modules LLM
// trace (tracelens_h100_qwen15_sdpa_flash, module stages).
func TestExportRoundTripKineto(t *testing.T) {
	bin := needRecordBin(t)
	dir := filepath.Join(testutil.SharedTraces(t), "kineto")
	for _, f := range []string{"hta_ns_resolution_v100.json.gz", "tracelens_h100_qwen15_sdpa_flash.json.gz"} {
		t.Run(f, func(t *testing.T) { checkExportIdentity(t, bin, filepath.Join(dir, f)) })
	}
}
