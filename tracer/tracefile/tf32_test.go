package tracefile

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/internal/testutil"
	"github.com/rlktop/rlktop/tracer"
)

// The A100 trace's GEMMs with recorded float32 shapes run on two kinds of
// kernel: CUTLASS tensor-op SGEMMs (cutlass_80_tensorop_s1688gemm, the
// TF32 MMA: 1,638 launches, counted over the JSON by name) and cuBLAS's
// SIMT SGEMMs (ampere_sgemm). Modelled, the first run at the TF32 peak
// and the second at FP32: judged against FP32 the GEMM category read 128%
// of the A100's 19.5 TFLOP/s.
func TestTF32KernelsTakeTheTF32Peak(t *testing.T) {
	tr, err := Open(filepath.Join(testutil.SharedTraces(t), "kineto", "hta_diff_control_a100.json.gz"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var tf32, sgemm, s1688 int
	for i := range tr.Events {
		e := &tr.Events[i]
		if e.Kind != tracer.KindKernel {
			continue
		}
		name := tr.Strings.Get(e.Name)
		if strings.Contains(name, "tensorop_s1688gemm") {
			s1688++
		}
		w, ok := tracer.UnpackWork(e.Value)
		if !ok || !w.Modelled || w.Flops == 0 {
			continue
		}
		switch {
		case strings.Contains(name, "tensorop_s1688gemm"):
			if w.DType != tracer.DTypeTF32 {
				t.Fatalf("%s: dtype %v, want tf32", name, w.DType)
			}
			tf32++
		case strings.HasPrefix(name, "ampere_sgemm"):
			if w.DType != tracer.DTypeFP32 {
				t.Fatalf("%s: dtype %v, want fp32", name, w.DType)
			}
			sgemm++
		}
	}
	if s1688 != 1638 || tf32 == 0 || sgemm == 0 {
		t.Errorf("%d tensor-op SGEMM launches (want 1638 by name), %d modelled at tf32, %d ampere_sgemm at fp32: want both kinds", s1688, tf32, sgemm)
	}
	t.Logf("%d tf32, %d fp32 modelled GEMM kernels", tf32, sgemm)
}
