package attrib

import (
	"os/exec"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ianlancetaylor/demangle"
)

// Mangled names from ../shared/traces/kineto/tracelens_sglang_qwen3_decode_mi300.json.gz.
const (
	aiterMangled = "_ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16bLi256ELi16ELb0ELb0ELb1ELi1EEEvPT0_PT_PfS4_S4_S4_diiiiiiib"
	// Demangled by GNU c++filt (binutils 2.40).
	aiterCxxfilt = "void aiter::add_rmsnorm_quant_kernel<std::bfloat16_t, std::bfloat16_t, 256, 16, false, false, true, 1>(std::bfloat16_t*, std::bfloat16_t*, float*, std::bfloat16_t*, std::bfloat16_t*, std::bfloat16_t*, double, int, int, int, int, int, int, int, bool)"
	sglMangled   = "_ZN7sgl_hip10activation18act_and_mul_kernelI14__hip_bfloat16TnPFT_RKS3_EXadL_Z4siluIS2_ES3_S5_EEEEvPS3_PS4_i"
)

func TestDemangleMatchesCxxfilt(t *testing.T) {
	if got := demangle.Filter(aiterMangled); got != aiterCxxfilt {
		t.Errorf("demangle.Filter:\n got %s\nwant %s", got, aiterCxxfilt)
	}
	// Cross-check against the c++filt on this machine when there is one.
	path, err := exec.LookPath("c++filt")
	if err != nil {
		t.Log("c++filt not installed; compared with the recorded c++filt output only")
		return
	}
	out, err := exec.Command(path, aiterMangled).Output()
	if err != nil {
		t.Fatalf("c++filt: %v", err)
	}
	if got := strings.TrimSpace(string(out)); got != aiterCxxfilt {
		t.Errorf("c++filt here says %s", got)
	}
}

func TestDisplayName(t *testing.T) {
	cases := []struct{ in, want string }{
		{aiterMangled, "aiter::add_rmsnorm_quant_kernel"},
		// GNU c++filt 2.40 cannot demangle this one (the template argument
		// is a function pointer expression); the Go demangler reads it as
		// void sgl_hip::activation::act_and_mul_kernel<__hip_bfloat16, &(silu<__hip_bfloat16>)>(…).
		{sglMangled, "sgl_hip::activation::act_and_mul_kernel"},
		{"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)", "at::native::vectorized_elementwise_kernel"},
		{"void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, float, float const*, float const*, float const*, float*, float*, float*)", "at::native::(anonymous namespace)::vectorized_layer_norm_kernel"},
		{"void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, true, false>(float*, float const*, int, int, int, bool const*, int, bool)", "(anonymous namespace)::softmax_warp_forward"},
		{"std::enable_if<!(false), void>::type internal::gemvx::kernel<int, int, float, float, float, float, false, true, false, false, 7, cublasGemvParams<cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, float> >(cublasGemvParams<cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, float>)", "internal::gemvx::kernel<int>"},
		{"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_16x6_nt_align4>(cutlass_80_tensorop_s1688gemm_64x64_16x6_nt_align4::Params)", "cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_16x6_nt_align4>"},
		{"ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", "ncclKernel_AllReduce_RING_LL_Sum_float"},
		{"cask_cudnn_infer::computeBOffsetsKernel(cask_cudnn_infer::ComputeBOffsetsParams)", "cask_cudnn_infer::computeBOffsetsKernel"},
		{"ampere_sgemm_128x64_nn", "ampere_sgemm_128x64_nn"},
		{"attn_fwd", "attn_fwd"},
		{"Memcpy HtoD (Pinned -> Device)", "Memcpy HtoD (Pinned -> Device)"},
		{"Kernel", "Kernel"},
		{"", ""},
		{"_Znot_really_mangled(", "_Znot_really_mangled"},
	}
	for _, c := range cases {
		if got := DisplayName(c.in); got != c.want {
			t.Errorf("DisplayName(%.60s…)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

func TestDisplayNameLong(t *testing.T) {
	// A Tensile kernel name from tracelens_mi300_qwen15_aotriton (221 chars).
	in := "Cijk_Alik_Bljk_B_BS_BH_Bias_HA_S_SAV_UserArgs_MT256x128x64_MI16x16x1_SN_LDSB1_AFC1_AFEM1_AFEM1_ASEM1_CLR1_CADS0_DTVA0_DTVB0_EPS0_FDSI0_GRPM1_GRVWA8_GRVWB8_GSUAMB_GLS0_ISA942_IU1_K1_LBSPPA1024_LBSPPB512_LBSPPM0_LPA16"
	got := DisplayName(in)
	if n := utf8.RuneCountInString(got); n != MaxDisplayName {
		t.Errorf("length %d runes, want %d: %s", n, MaxDisplayName, got)
	}
	head, tail, ok := strings.Cut(got, "…")
	if !ok || !strings.HasPrefix(in, head) || !strings.HasSuffix(in, tail) || len(head) != 39 || len(tail) != 40 {
		t.Errorf("bad cut %q", got)
	}
	if Ellipsize("abcdef", 5) != "ab…ef" || Ellipsize("abc", 5) != "abc" || Ellipsize("abcdef", 2) != "ab" {
		t.Errorf("Ellipsize: %q %q %q", Ellipsize("abcdef", 5), Ellipsize("abc", 5), Ellipsize("abcdef", 2))
	}
}
