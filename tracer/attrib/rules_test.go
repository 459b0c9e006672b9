package attrib

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/tracer"
)

// Kernel names below are copied verbatim from the shared third-party traces
// (../shared/traces/kineto/, file named per case) or from the built-in Go
// loop's op names; the expected category is what DESIGN.md requires for that family of kernels.
func TestDefaultRulesByKernelName(t *testing.T) {
	cases := []struct {
		name, want, from string
	}{
		{"void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<64, 128, 128, 4, cutlass::bfloat16_t> >, false, true, false, false, true, true, false, false>(pytorch_flash::Flash_fwd_params)", "attention", "tracelens_h100_qwen15_sdpa_flash"},
		{"attn_fwd", "attention", "tracelens_mi300_qwen15_aotriton"},
		{"void paged_attention_ll4mi_QKV_mfma16_kernel<0, __hip_bfloat16, __hip_bfloat16, (vllm::Fp8KVCacheDataType)0, 1, 128, 256, false, 4, 1, ck_tile::ComposedAttention<0u, false> >(__hip_bfloat16 const*)", "attention", "tracelens_sglang_qwen3_decode_mi300"},
		{"cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_3_64x64x64_4x1x1_kernel0_0", "attention", "DESIGN.md cuDNN SDPA"},
		{"fmha_cutlassF_f16_aligned_64x64_rf_sm80", "attention", "DESIGN.md mem-efficient SDPA"},
		{"kernel_unified_attention_2d", "attention", "vLLM unified attention"},
		{"void cub::DeviceScanKernel<cub::AgentScanPolicy<128, 15, int, (cub::BlockLoadAlgorithm)3, (cub::CacheLoadModifier)0, (cub::BlockStoreAlgorithm)3, (cub::BlockScanAlgorithm)2, cub::MemBoundScaling<128, 15, int> >, int const*, int*, cub::ScanTileState<int, true>, cub::Sum, cub::NullType, int>(int const*, int*, cub::ScanTileState<int, true>, int, cub::Sum, cub::NullType, int)", "scan", "hta_sampled_rank0"},
		{"void rocprim::ROCPRIM_400200_NS::detail::trampoline_kernel<rocprim::ROCPRIM_400200_NS::detail::wrapped_scan_config<rocprim::ROCPRIM_400200_NS::default_config, long>, (rocprim::ROCPRIM_400200_NS::detail::target_arch)942>()", "scan", "tracelens_sglang_qwen3_decode_mi300"},
		{"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_16x6_nt_align4>(cutlass_80_tensorop_s1688gemm_64x64_16x6_nt_align4::Params)", "gemm", "hta_diff_control_a100"},
		{"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas", "gemm", "tracelens_h100_qwen15_sdpa_flash"},
		{"ampere_sgemm_128x64_nn", "gemm", "hta_diff_control_a100"},
		{"vecCopy", "copy", "MI300X_timestamps_rocprofv2style"},
		{"volta_sgemm_128x64_nn", "gemm", "hta_diff_test_v100"},
		{"Cijk_Alik_Bljk_B_BS_BH_Bias_HA_S_SAV_UserArgs_MT256x128x64_MI16x16x1_SN_LDSB1_AFC1", "gemm", "tracelens_mi300_qwen15_aotriton"},
		{"nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NNT", "gemm", "cuBLAS 12 on H100"},
		{"void splitKreduce_kernel<float, float, float, float, true, false, false>(cublasSplitKParams<float>, float const*)", "gemm", "hta_diff_control_a100"},
		{"void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 2, 2, false, false, cublasGemvParams<cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, float> >(cublasGemvParams<cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, float>, float, float)", "gemm", "hta_diff_control_a100"},
		{"triton_tem_fused_mm_0", "gemm", "Triton matmul template"},
		{"void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, float, float const*, float const*, float const*, float*, float*, float*)", "norm", "hta_diff_control_a100"},
		{"_ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16bLi256ELi16ELb0ELb0ELb1ELi1EEEvPT0_PT_PfS4_S4_S4_diiiiiiib", "norm", "tracelens_sglang_qwen3_decode_mi300"},
		{"void cudnn::bn_fw_tr_1C11_singleread<float, 512, true, 1, 2, 0>(cudnn::bn_fw_tr_1C11_args<float>)", "norm", "hta_ns_resolution_v100"},
		{"void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, true, false>(float*, float const*, int, int, int, bool const*, int, bool)", "softmax", "hta_sampled_rank0"},
		{"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)", "elementwise", "hta_diff_control_a100"},
		{"void at::native::unrolled_elementwise_kernel<at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>, TrivialOffsetCalculator<2, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<2>, at::native::memory::StoreWithCast<1> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>, TrivialOffsetCalculator<2, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<2>, at::native::memory::StoreWithCast<1>)", "elementwise", "hta_diff_control_a100"},
		{"triton_poi_fused_add_cos_sin_0", "elementwise", "tracelens_torch_compile_rocm"},
		{"_ZN7sgl_hip10activation18act_and_mul_kernelI14__hip_bfloat16TnPFT_RKS3_EXadL_Z4siluIS2_ES3_S5_EEEEvPS3_PS4_i", "elementwise", "tracelens_sglang_qwen3_decode_mi300"},
		{"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::ArgMaxOps<float>, unsigned int, long, 4, 4> >(at::native::ReduceOp<float, at::native::ArgMaxOps<float>, unsigned int, long, 4, 4>)", "reduce", "tracelens_sglang_qwen3_decode_mi300"},
		{"triton_red_fused_add_mean_mul_pow_rsqrt_0", "reduce", "tracelens_torch_compile_rocm"},
		{"void multi_tensor_apply_kernel<TensorListMetadata<4>, AdamFunctor<float>, float, float, float, float, float, float, adamMode_t, float, int, int>(int, int volatile*, TensorListMetadata<4>, AdamFunctor<float>, float, float, float, float, float, float, adamMode_t, float, int, int)", "optimizer", "hta_diff_control_a100"},
		{"ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", "collective", "hta_sampled_rank0"},
		{"ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)", "collective", "hta_diff_control_a100"},
		{"cudnn_infer_volta_scudnn_128x64_relu_medium_nn_v1", "conv", "hta_ns_resolution_v100"},
		{"void split_embedding_codegen_forward_unweighted_kernel<float, float, float, long, 2ul>(at::GenericPackedTensorAccessor<float, 1ul, at::RestrictPtrTraits, long>)", "embedding", "hta_diff_control_a100"},
		{"void at::native::(anonymous namespace)::max_pool_forward_nchw<float, float>(int, float const*, long, long, long, int, int, int, int, int, int, int, int, int, int, float*, long*)", "pool", "hta_ns_resolution_v100"},
		{"void cub::DeviceRadixSortOnesweepKernel<cub::DeviceRadixSortPolicy<long, int, int>::Policy800, false, long, int, int, int>(int*, int*, int*, int const*, long*, long const*, int*, int const*, int, int, int)", "sort", "hta_sampled_rank0"},
		{"void store_kvcache<2048l, 4, false, long>((anonymous namespace)::StoreKVCacheParams)", "kv-cache", "tracelens_sglang_qwen3_decode_mi300"}, // written beside attention; no attention flag changes it
		{"Kernel", "other", "hta_triton_example"},
		// Built-in Go loop (tracer/gotrace) op names.
		{"attn_math_qk", "attention", "gotrace"},
		{"attn_math_softmax", "attention", "gotrace"},
		{"attn_math_pv", "attention", "gotrace"},
		{"attn_fused_fwd", "attention", "gotrace"},
		{"qkv_separate_q", "qkv", "gotrace"},
		{"qkv_separate_v", "qkv", "gotrace"},
		{"qkv_fused", "qkv", "gotrace"},
		{"topp_scan_serial", "scan", "gotrace"},
		{"topp_scan_sklansky", "scan", "gotrace"},
		{"topp_sort", "scan", "gotrace"},
		{"matmul_lm_head", "gemm", "gotrace"},
		{"gemm_mlp_up", "gemm", "gotrace"},
		{"rmsnorm", "norm", "gotrace"},
		{"softmax", "softmax", "gotrace"},
		{"swiglu", "elementwise", "gotrace"},
		{"elementwise_add", "elementwise", "gotrace"},
		{"adamw", "optimizer", "gotrace"},
		{"env_step", "env", "gotrace"},
		{"env_legal_mask", "env", "gotrace"},
		{"backward_attn", "attention", "gotrace"},
		{"backward_qkv", "qkv", "gotrace"},
		{"backward_rmsnorm", "norm", "gotrace"},
		{"backward_swiglu", "elementwise", "gotrace"},
		{"backward_mlp_up", "gemm", "gotrace"},
		{"backward_out_proj", "gemm", "gotrace"},
		{"matmul_head_proj", "gemm", "gotrace"},
		{"value_head", "gemm", "gotrace"},
		{"head_gatherdot", "gemm", "gotrace"},
		{"embed", "embedding", "gotrace"},
		{"backward_embed", "embedding", "gotrace"},
		{"topp_softmax", "scan", "gotrace"},
		{"sample_gumbel", "sample", "gotrace"},
		{"policy_value_loss", "loss", "gotrace"},
		{"void cunn_ClassNLLCriterion_updateOutput_kernel<float, long>(float*, float*, float*, long*, float*, int, int, int, int, long)", "loss", "aten::nll_loss (CUDA)"},
	}
	r := DefaultRules()
	for _, c := range cases {
		if got := r.Classify(tracer.KindKernel, c.name, Launch{}); got != c.want {
			t.Errorf("%s (%s): got %q, want %q", Ellipsize(c.name, 60), c.from, got, c.want)
		}
	}
}

func TestDefaultRulesByKindAndContext(t *testing.T) {
	r := DefaultRules()
	gemm := "ampere_sgemm_128x64_nn"
	softmax := "void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, true, false>(float*, float const*, int, int, int, bool const*, int, bool)"
	add := "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)"
	// ctx are operator names, ranges annotation ranges (Launch).
	cases := []struct {
		kind   tracer.Kind
		name   string
		ctx    []string
		want   string
		ranges []string
		after  bool
	}{
		// The math SDPA fallback: generic kernels under the SDPA operator.
		{tracer.KindKernel, gemm, []string{"aten::_scaled_dot_product_attention_math", "aten::bmm"}, "attention", nil, false},
		{tracer.KindKernel, softmax, []string{"aten::_scaled_dot_product_attention_math", "aten::_softmax"}, "attention", nil, false},
		{tracer.KindKernel, add, []string{"aten::scaled_dot_product_attention", "aten::add"}, "attention", nil, false},
		// Inside an attention module (nn.Module ranges, or a range that
		// says attention): the q/k/v linears before its attention
		// operator are qkv, the output linear after it a gemm, an
		// attention written out (bmm, softmax) attention, the rest by
		// kernel name.
		{tracer.KindKernel, gemm, []string{"aten::linear", "aten::addmm"}, "qkv", []string{"nn.Module: Qwen2Attention", "nn.Module: Linear"}, false},
		{tracer.KindKernel, gemm, []string{"aten::linear", "aten::matmul", "aten::mm"}, "gemm", []string{"nn.Module: Qwen2Attention", "nn.Module: Linear"}, true},
		{tracer.KindKernel, gemm, []string{"aten::linear", "aten::addmm"}, "qkv", []string{"model.layers.0.self_attention"}, false},
		{tracer.KindKernel, gemm, []string{"aten::matmul", "aten::bmm"}, "attention", []string{"nn.Module: GPT2Attention"}, false},
		{tracer.KindKernel, softmax, []string{"aten::softmax", "aten::_softmax"}, "attention", []string{"nn.Module: GPT2Attention"}, false},
		{tracer.KindKernel, add, []string{"aten::mul"}, "elementwise", []string{"nn.Module: Qwen2Attention"}, false},
		{tracer.KindKernel, "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#12}::operator()() const::{lambda(c10::BFloat16)#1}>(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#12}::operator()() const::{lambda(c10::BFloat16)#1} const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#12}::operator()() const::{lambda(c10::BFloat16)#1}>(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#12}::operator()() const::{lambda(c10::BFloat16)#1} const&)::{lambda(int)#1})", []string{"aten::contiguous", "aten::clone", "aten::copy_"}, "copy", []string{"nn.Module: Qwen2Attention"}, false},
		{tracer.KindKernel, add, []string{"aten::mul"}, "rope", []string{"nn.Module: Qwen2RotaryEmbedding"}, false},
		// Same kernels elsewhere keep their own category.
		{tracer.KindKernel, gemm, []string{"aten::linear", "aten::addmm"}, "gemm", nil, false},
		{tracer.KindKernel, softmax, []string{"aten::_softmax"}, "softmax", nil, false},
		{tracer.KindKernel, add, nil, "elementwise", nil, false},
		// QKV projections, before attention and gemm.
		{tracer.KindKernel, gemm, []string{"aten::linear"}, "qkv", []string{"self_attn", "self_attn.q_proj"}, false},
		{tracer.KindKernel, gemm, []string{"transformer.h.0.attn.c_attn"}, "qkv", nil, false},
		{tracer.KindKernel, gemm, []string{"aten::linear", "in_proj"}, "qkv", nil, false},
		{tracer.KindKernel, gemm, []string{"qkv_fused"}, "qkv", nil, false},
		{tracer.KindKernel, gemm, []string{"k_projection_cache"}, "gemm", nil, false}, // not a word match
		// Top-p sampler: sort and elementwise kernels under it are scan.
		{tracer.KindKernel, add, nil, "scan", []string{"sampler.top_p"}, false},
		{tracer.KindKernel, add, []string{"aten::cumsum"}, "scan", nil, false},
		{tracer.KindKernel, add, []string{"stop_profiler"}, "elementwise", nil, false},
		// Generic kernels under norm / optimizer operators.
		{tracer.KindKernel, add, []string{"aten::layer_norm"}, "norm", nil, false},
		{tracer.KindKernel, add, nil, "optimizer", []string{"Optimizer.step#AdamW.step"}, false},
		// Transfers by kind, whatever their context.
		{tracer.KindMemcpy, "Memcpy HtoD (Pinned -> Device)", []string{"aten::scaled_dot_product_attention"}, "memcpy", nil, false},
		{tracer.KindMemset, "Memset (Device)", nil, "memset", nil, false},
		{tracer.KindSync, "cudaStreamSynchronize", nil, "sync", nil, false},
		// Collectives stay collective under attention.
		{tracer.KindKernel, "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", nil, "collective", []string{"attention"}, false},
		// cuDNN convolutions run as plain GEMMs (hta_ns_resolution_v100).
		{tracer.KindKernel, "volta_sgemm_64x64_nt", []string{"ConvolutionBackward0", "aten::convolution_backward"}, "conv", nil, false},
		{tracer.KindKernel, "volta_sgemm_32x128_nn", []string{"aten::_convolution", "aten::cudnn_convolution"}, "conv", nil, false},
		{tracer.KindKernel, "volta_sgemm_128x32_nt", []string{"AddmmBackward0", "aten::mm"}, "gemm", nil, false},
		{tracer.KindKernel, add, []string{"aten::cross_entropy_loss", "aten::neg"}, "loss", nil, false},
		// Built-in loop environment.
		{tracer.KindKernel, "reward", nil, "env", []string{"env_step"}, false},
	}
	for _, c := range cases {
		if got := r.Classify(c.kind, c.name, Launch{Ops: c.ctx, Ranges: c.ranges, AfterAttention: c.after}); got != c.want {
			t.Errorf("%v %s under %q in %q (after attention %v): got %q, want %q", c.kind, Ellipsize(c.name, 50), c.ctx, c.ranges, c.after, got, c.want)
		}
	}
}

func TestUserRules(t *testing.T) {
	user := `
[[rule]]
category = "mine"
kernel = 'sgemm_128x64'
context = 'custom_block'

[[rule]]
category = "rope"
any = 'rotary'
`
	r, err := ParseRules([]byte(user), "user.toml", DefaultRules(), true)
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, ctx []string, want string) {
		t.Helper()
		if got := r.Classify(tracer.KindKernel, name, Launch{Ops: ctx}); got != want {
			t.Errorf("%s %q: got %q want %q", name, ctx, got, want)
		}
	}
	check("ampere_sgemm_128x64_nn", []string{"custom_block"}, "mine")
	check("ampere_sgemm_128x64_nn", []string{"other_block"}, "gemm") // both conditions needed
	check("ampere_sgemm_128x32_nn", []string{"custom_block"}, "gemm")
	check("void rotary_embedding_kernel<c10::BFloat16, true>(long const*)", nil, "rope")
	check("ampere_sgemm_128x32_nn", []string{"rotary_block"}, "rope") // any: context side
	check("attn_fwd", nil, "attention")                               // defaults still there
	if got := r.List()[0].Origin; got != "user.toml rule 1" {
		t.Errorf("origin %q", got)
	}

	repl, err := ParseRules([]byte("replace = true\n"+user), "user.toml", DefaultRules(), true)
	if err != nil {
		t.Fatal(err)
	}
	if got := repl.Classify(tracer.KindKernel, "attn_fwd", Launch{}); got != CategoryOther {
		t.Errorf("replace=true kept defaults: attn_fwd → %q", got)
	}
	if n := len(repl.List()); n != 2 {
		t.Errorf("replace=true: %d rules, want 2", n)
	}
}

func TestUserRulesErrors(t *testing.T) {
	cases := []struct{ file, want string }{
		{"[[rule]]\ncategory = \"x\"\nkernel = 'a('\n", `user.toml: rule 1: field "kernel": bad regex "a("`},
		{"[[rule]]\ncategory = \"x\"\nkernel = 'a'\n[[rule]]\ncategory = \"y\"\ncontext = '[z'\n", `user.toml: rule 2: field "context": bad regex "[z"`},
		{"[[rule]]\nkernel = 'a'\n", `user.toml: rule 1: field "category": missing`},
		{"[[rule]]\ncategory = \"x\"\nkinds = [\"cpu_op\"]\n", `user.toml: rule 1: field "kinds": unknown kind "cpu_op"`},
		{"[[rule]]\ncategory = \"x\"\n", `user.toml: rule 1: field "kernel": the rule has no condition`},
		{"[[rule]]\ncategory = \"x\"\nkernal = 'a'\n", `unknown key "rule.kernal"`},
		{"[[rule]\ncategory = 1\n", `user.toml:2: expected end of table array`},
	}
	for _, c := range cases {
		_, err := ParseRules([]byte(c.file), "user.toml", DefaultRules(), true)
		if err == nil {
			t.Errorf("%q: no error", c.file)
			continue
		}
		if !errors.Is(err, ErrRules) {
			t.Errorf("%q: error does not wrap ErrRules: %v", c.file, err)
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q:\n got %v\nwant it to contain %s", c.file, err, c.want)
		}
	}
	if _, err := LoadRules("/nonexistent/rules.toml"); err == nil || !strings.Contains(err.Error(), "/nonexistent/rules.toml") {
		t.Errorf("LoadRules missing file: %v", err)
	}
}

func TestManyRulesBitsets(t *testing.T) {
	// More than 64 rules: the rule bitsets span several words.
	var b strings.Builder
	for i := 0; i < 130; i++ {
		b.WriteString("[[rule]]\ncategory = \"c")
		b.WriteString(strings.Repeat("x", i%3))
		b.WriteString("\"\nkernel = '^k")
		b.WriteString(strings.Repeat("z", i))
		b.WriteString("$'\n")
	}
	r, err := ParseRules([]byte(b.String()), "many.toml", nil, true)
	if err != nil {
		t.Fatal(err)
	}
	name := "k" + strings.Repeat("z", 100) // matches rule 100 only
	if got := r.Classify(tracer.KindKernel, name, Launch{}); got != "c"+strings.Repeat("x", 100%3) {
		t.Errorf("rule 100: got %q", got)
	}
	if got := r.Classify(tracer.KindKernel, "nothing", Launch{}); got != CategoryOther {
		t.Errorf("no match: %q", got)
	}
}

// TestRulesFor: no path is the built-in table; a path is LoadRules's
// (its rules first), and a missing file is an ErrRules naming it.
func TestRulesFor(t *testing.T) {
	if r, err := RulesFor(""); err != nil || r != DefaultRules() {
		t.Errorf(`RulesFor("") = %p, %v; want the built-in table`, r, err)
	}
	p := filepath.Join(t.TempDir(), "mine.toml")
	if err := os.WriteFile(p, []byte("[[rule]]\ncategory = \"mine\"\nkernel = \"^my_kernel$\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := RulesFor(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.rules) != len(DefaultRules().rules)+1 || r.rules[0].Category != "mine" {
		t.Errorf("RulesFor(%s): %d rules, first %+v; want the file's rule before the %d built-in ones", p, len(r.rules), r.rules[0], len(DefaultRules().rules))
	}
	if _, err := RulesFor(p + ".missing"); !errors.Is(err, ErrRules) || !strings.Contains(err.Error(), "mine.toml.missing") {
		t.Errorf("missing file: %v", err)
	}
}
