package tracer

import "testing"

// KernelDType on kernel names of real traces: the A100 trace's CUTLASS
// tensor-op SGEMMs (16×8×8: the TF32 MMA) and cuBLAS's tf32 kernels run
// FP32 inputs at the TF32 peak; its SIMT SGEMMs (ampere_sgemm) stay FP32;
// BF16 work stays BF16 whatever the name.
func TestKernelDType(t *testing.T) {
	for _, c := range []struct {
		name string
		in   DType
		want DType
	}{
		{"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_32x6_tn_align1>(cutlass_80_tensorop_s1688gemm_64x64_32x6_tn_align1::Params)", DTypeFP32, DTypeTF32},
		{"sm80_xmma_gemm_tf32f32_tf32f32_f32_nn_n_tilesize128x128x16_stage4_warpsize2x2x1_tensor16x8x8_kernel", DTypeFP32, DTypeTF32},
		{"ampere_sgemm_128x64_nn", DTypeFP32, DTypeFP32},
		{"volta_sgemm_128x64_nn", DTypeFP32, DTypeFP32},
		{"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas", DTypeBF16, DTypeBF16},
		{"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_32x6_tn_align1>", DTypeBF16, DTypeBF16},
	} {
		if got := KernelDType(c.name, c.in); got != c.want {
			t.Errorf("KernelDType(%.40q…, %v) = %v, want %v", c.name, c.in, got, c.want)
		}
		w := Work{Flops: 1e9, Bytes: 1e6, DType: c.in, Modelled: true}
		if got, _ := UnpackWork(RetypeWork(PackWork(w), c.name)); got.DType != c.want || got.Flops != w.Flops || got.Bytes != w.Bytes {
			t.Errorf("RetypeWork(%.40q…) = %+v, want dtype %v, FLOPs and bytes kept", c.name, got, c.want)
		}
	}
}
