// Package viewstest builds hand-made attrib.Snapshots for the tests of
// views and tui. Kernel names are copied from real traces in
// ../shared/traces/kineto (HTA V100 ResNet, TraceLens H100 Qwen and
// SGLang MI300); the numbers are invented and chosen so that every total,
// mean and share can be checked by hand.
package viewstest

import (
	"fmt"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/views"
)

// Kernel is one fixture row before the derived fields are filled.
type Kernel struct {
	Name, Display, Category, Stage string
	Count, TotalNs                 int64
	Ops, Ranges                    []string
}

// Kernels are the fixture's kernels (Kind kernel). Totals: 12 rows,
// 7,266 launches, 1,000,000,000 ns of kernel time.
var Kernels = []Kernel{
	{"void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<64, 128, 128, 4, cutlass::bfloat16_t> >, false, true, false, false, false, true, false>(pytorch_flash::Flash_fwd_params)",
		"pytorch_flash::flash_fwd_kernel<…>", "attention", "forward", 240, 310_000_000,
		[]string{"aten::scaled_dot_product_attention", "aten::_scaled_dot_product_flash_attention"}, []string{"ProfilerStep#3", "forward"}},
	{"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
		"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas", "gemm", "forward", 1_200, 220_000_000,
		[]string{"aten::linear", "aten::addmm"}, []string{"ProfilerStep#3", "forward"}},
	{"Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x32x64_MI16x16x1_SN_LDSB1_AFC1_AFEM1_AFEM1_ASEM1_CLR1_CADS0_DTLA0_DTLB0_DTVA0_DTVB0_EPS0_FDSI0_GRPM1_GRVWA8_GRVWB8_GSUAMBSK_GLS0_ISA942_IU1_K1",
		"Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x32x64_MI16x16x1_SN_LDSB1_AFC1_AFEM1_AFEM1_ASEM1_CLR1_CADS0_DTLA0_DTLB0_DTVA0_DTVB0_EPS0_FDSI0_GRPM1_GRVWA8_GRVWB8_GSUAMBSK_GLS0_ISA942_IU1_K1", "qkv", "forward", 480, 150_000_000,
		[]string{"aten::linear", "aten::mm"}, []string{"ProfilerStep#3", "forward", "qkv_proj"}},
	{"void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 128, true, 1>(float, float, float, float, cudnnTensorStruct, float const*, cudnnTensorStruct, float const*, cudnnTensorStruct, float*, float const*, float*, float*, float const*, float const*, float)",
		"cudnn::bn_bw_1C11_kernel_new<float, float, float2, 128, true, 1>", "norm", "backward", 640, 96_000_000,
		[]string{"autograd::engine::evaluate_function: CudnnBatchNormBackward0", "aten::cudnn_batch_norm_backward"}, []string{"ProfilerStep#3", "backward"}},
	{"volta_sgemm_64x64_nt", "volta_sgemm_64x64_nt", "gemm", "backward", 800, 64_000_000,
		[]string{"autograd::engine::evaluate_function: MmBackward0", "aten::mm"}, []string{"ProfilerStep#3", "backward"}},
	{"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)",
		"at::native::vectorized_elementwise_kernel<4, CUDAFunctor_add<float>>", "elementwise", "forward", 2_000, 50_000_000,
		[]string{"aten::add"}, []string{"ProfilerStep#3", "forward"}},
	{"void paged_attention_ll4mi_QKV_mfma16_kernel<0, __hip_bfloat16, __hip_bfloat16, (vllm::Fp8KVCacheDataType)0, 1, 128, 256, false, 4, 1, ck_tile::ComposedAttention<0u, false> >(__hip_bfloat16 const*, __hip_bfloat16 const*, __hip_bfloat16 const*, float, int const*, int const*, int const*, float const*)",
		"paged_attention_ll4mi_QKV_mfma16_kernel<…>", "attention", "decode", 96, 40_000_000,
		[]string{"aiter::paged_attention_rocm"}, []string{"decode"}},
	{"void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)",
		"cunn_SoftMaxForward<4, float, float, float, SoftMaxForwardEpilogue>", "attention", "forward", 240, 24_000_000,
		[]string{"aten::_scaled_dot_product_attention_math", "aten::_softmax"}, []string{"ProfilerStep#3", "forward"}},
	{"void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4>, float*, double, double, double, double, double, bool, bool*, bool*>",
		"multi_tensor_apply_kernel<TensorListMetadata<4>, FusedAdamMathFunctor<float, 4>>", "optimizer", "optimizer", 30, 18_000_000,
		[]string{"Optimizer.step#AdamW.step", "aten::_fused_adamw_"}, []string{"ProfilerStep#3", "optimizer"}},
	{"void cub::DeviceScanKernel<cub::DeviceScanPolicy<long>::Policy600, long const*, long*, cub::ScanTileState<long, true>, at_cuda_detail::cub::Sum, cub::NullType, int>(long const*, long*, cub::ScanTileState<long, true>, int, at_cuda_detail::cub::Sum, cub::NullType, int)",
		"cub::DeviceScanKernel<…>", "scan", "sample", 120, 14_000_000,
		[]string{"aten::cumsum"}, []string{"ProfilerStep#3", "sample"}},
	{"ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", "ncclKernel_AllReduce_RING_LL_Sum_float", "collective", "backward", 60, 12_000_000,
		[]string{"nccl:all_reduce"}, []string{"ProfilerStep#3", "backward"}},
	{"triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_0", "triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_0", "norm", "", 1_360, 2_000_000,
		nil, nil},
}

// Snapshot returns the fixture: one V100-like device, the kernels above
// with derived mean/min/max/p50/p99/share, one memcpy and one memset row,
// categories and stages summed from the rows, and five steps.
func Snapshot() *attrib.Snapshot {
	s := &attrib.Snapshot{
		Source: "/work/shared/traces/kineto/hta_ns_resolution_v100.json.gz",
		Format: "kineto",
		Rank:   0,
		Devices: []tracer.Device{{ID: 0, Name: "Tesla V100-SXM2-16GB", Vendor: "nvidia",
			TotalMemory: 16 << 30, SMs: 80, ComputeCap: "7.0"}},
		Dropped:  0,
		Warnings: []string{"skipped 3 events with negative dur"},
	}
	var total int64
	for _, k := range Kernels {
		total += k.TotalNs
	}
	cat := map[string]*attrib.GroupRow{}
	stage := map[string]*attrib.GroupRow{}
	var cats, stages []string
	add := func(m map[string]*attrib.GroupRow, order *[]string, key string, count, ns int64) {
		if m[key] == nil {
			m[key] = &attrib.GroupRow{Key: key}
			*order = append(*order, key)
		}
		m[key].Count += count
		m[key].TotalNs += ns
	}
	for _, k := range Kernels {
		mean := k.TotalNs / k.Count
		s.Kernels = append(s.Kernels, attrib.KernelRow{
			Name: k.Name, DisplayName: k.Display, Kind: tracer.KindKernel, Category: k.Category,
			Count: k.Count, TotalNs: k.TotalNs, MeanNs: mean, MinNs: mean / 2, MaxNs: mean * 3,
			P50Ns: mean - mean/10, P99Ns: mean * 2, Share: float64(k.TotalNs) / float64(total),
			Stage: k.Stage, Ops: k.Ops, Ranges: k.Ranges,
		})
		s.Totals.KernelCount += k.Count
		st := k.Stage
		if st == "" {
			st = "(none)"
		}
		add(cat, &cats, k.Category, k.Count, k.TotalNs)
		add(stage, &stages, st, k.Count, k.TotalNs)
	}
	s.Transfers = []attrib.KernelRow{
		{Name: "Memcpy HtoD (Pageable -> Device)", DisplayName: "Memcpy HtoD (Pageable -> Device)", Kind: tracer.KindMemcpy,
			Category: "memcpy", Count: 40, TotalNs: 30_000_000, MeanNs: 750_000, Share: 0.75, Stage: "forward"},
		{Name: "Memset (Device)", DisplayName: "Memset (Device)", Kind: tracer.KindMemset,
			Category: "memset", Count: 100, TotalNs: 10_000_000, MeanNs: 100_000, Share: 0.25, Stage: "backward"},
	}
	add(cat, &cats, "memcpy", 40, 30_000_000)
	add(cat, &cats, "memset", 100, 10_000_000)
	add(stage, &stages, "forward", 40, 30_000_000)
	add(stage, &stages, "backward", 100, 10_000_000)
	s.Totals.KernelTotalNs = total
	s.Totals.TransferCount = 140
	s.Totals.TransferNs = 40_000_000
	s.Totals.GPUTotalNs = total + 40_000_000
	s.Totals.GPUBusyNs = 940_000_000
	s.Totals.KernelBusyNs = 910_000_000 // invented: the copies add 30 ms of busy time
	s.Totals.SpanNs = 1_250_000_000
	for _, k := range cats {
		r := cat[k]
		r.Share = float64(r.TotalNs) / float64(s.Totals.GPUTotalNs)
		s.Categories = append(s.Categories, *r)
	}
	for _, k := range stages {
		r := stage[k]
		r.Share = float64(r.TotalNs) / float64(s.Totals.GPUTotalNs)
		s.Stages = append(s.Stages, *r)
	}
	sortGroups(s.Categories)
	sortGroups(s.Stages)
	for i := int64(0); i < 5; i++ {
		s.Steps = append(s.Steps, attrib.StepRow{Step: i + 1, StartNs: i * 250_000_000,
			DurNs: 240_000_000 + i*2_500_000, KernelNs: 200_000_000, Count: 1_493 + i})
	}
	return s
}

func sortGroups(g []attrib.GroupRow) {
	for i := 1; i < len(g); i++ {
		for j := i; j > 0 && (g[j].TotalNs > g[j-1].TotalNs || g[j].TotalNs == g[j-1].TotalNs && g[j].Key < g[j-1].Key); j-- {
			g[j], g[j-1] = g[j-1], g[j]
		}
	}
}

// Big returns a snapshot with n synthetic kernels (for benchmarks), named
// like templated ATen kernels, with distinct totals and their names' ids
// (KernelRow.NameID) 1…n, as a live session's one string table gives.
func Big(n int) *attrib.Snapshot {
	s := Snapshot()
	s.Kernels = s.Kernels[:0]
	var total int64
	for i := 0; i < n; i++ {
		t := int64(n-i) * 1_000
		total += t
		name := fmt.Sprintf("void at::native::elementwise_kernel<128, %d, at::native::gpu_kernel_impl_nocast<at::native::BinaryFunctor<float, float, float, at::native::MulFunctor<float> > > >(int)", i)
		s.Kernels = append(s.Kernels, attrib.KernelRow{Name: name, NameID: tracer.StrID(i + 1), DisplayName: fmt.Sprintf("elementwise_kernel<128, %d, MulFunctor<float>>", i),
			Kind: tracer.KindKernel, Category: "elementwise", Count: int64(i%97 + 1), TotalNs: t, MeanNs: t / int64(i%97+1),
			Ops: []string{"aten::mul"}, Ranges: []string{"forward"}})
	}
	for i := range s.Kernels {
		s.Kernels[i].Share = float64(s.Kernels[i].TotalNs) / float64(total)
	}
	return s
}

// Timeline returns a hand-made timeline in the built-in loop's shape: two
// steps of 7,000 ns (step 41 at 0, step 42 at 7,000), one stream with the
// math attention fallback's kernels (attn_math_qk 1,000–2,000 ns,
// attn_math_softmax 2,000–2,500, attn_math_pv 2,500–3,500), a GEMM
// 4,000–6,000 and an optimizer kernel 8,000–13,000 on stream 7; a memcpy
// 500–900 on stream 13; the ranges "collect" (0–7,000) with "forward"
// (900–6,100) inside it and "update" (7,000–14,000); and a flag switch
// at 7,000. Idle on stream 7: 0–1,000, 3,500–4,000, 6,000–8,000 and
// 13,000–14,000.
func Timeline() (*attrib.Timeline, []views.TimelineMark) {
	ctxF := []string{"collect", "forward"}
	op := func(lane int32, kind tracer.Kind, name, cat, stage string, step, s, e int64, ops, ranges []string) attrib.TimelineOp {
		return attrib.TimelineOp{Lane: lane, Kind: kind, StartNs: s, DurNs: e - s, Name: name, Display: name,
			Category: cat, Stage: stage, Step: step, Ops: ops, Ranges: ranges}
	}
	tl := &attrib.Timeline{
		StartNs: 0, EndNs: 14_000,
		Lanes: []attrib.TimelineLane{{Device: 0, Stream: 7}, {Device: 0, Stream: 13}},
		Ops: []attrib.TimelineOp{
			op(1, tracer.KindMemcpy, "Memcpy HtoD", "memcpy", "collect", 41, 500, 900, nil, []string{"collect"}),
			op(0, tracer.KindKernel, "attn_math_qk", "attention", "forward", 41, 1_000, 2_000, []string{"attn_math"}, ctxF),
			op(0, tracer.KindKernel, "attn_math_softmax", "attention", "forward", 41, 2_000, 2_500, []string{"attn_math"}, ctxF),
			op(0, tracer.KindKernel, "attn_math_pv", "attention", "forward", 41, 2_500, 3_500, []string{"attn_math"}, ctxF),
			op(0, tracer.KindKernel, "gemm_nt", "gemm", "forward", 41, 4_000, 6_000, []string{"linear"}, ctxF),
			op(0, tracer.KindKernel, "adamw_step", "optimizer", "update", 42, 8_000, 13_000, nil, []string{"update"}),
		},
		CPU: []attrib.TimelineSpan{
			{Kind: tracer.KindRange, StartNs: 0, DurNs: 7_000, Name: "collect"},
			{Kind: tracer.KindRange, StartNs: 900, DurNs: 5_200, Name: "forward", Depth: 1},
			{Kind: tracer.KindRange, StartNs: 7_000, DurNs: 7_000, Name: "update"},
		},
		Steps: []attrib.TimelineStep{{Step: 41, StartNs: 0, DurNs: 7_000}, {Step: 42, StartNs: 7_000, DurNs: 7_000}},
	}
	return tl, []views.TimelineMark{{AtNs: 7_000, Label: "attention=fused"}}
}

// BigTimeline returns a timeline of n kernels (for benchmarks) on four
// streams of one device, named as in Big(n) (kernel i is Big's row
// i%(n/8+1), so names repeat as launches of one kernel do), 1,000 ns
// each with 250 ns gaps, in steps of 1,000 launches, one "forward" CPU
// range per step.
func BigTimeline(n int) *attrib.Timeline {
	tl := &attrib.Timeline{}
	for s := int32(0); s < 4; s++ {
		tl.Lanes = append(tl.Lanes, attrib.TimelineLane{Device: 0, Stream: 7 + s})
	}
	names := n/8 + 1
	for i := 0; i < n; i++ {
		k := i % names
		start := int64(i) * 1_250
		tl.Ops = append(tl.Ops, attrib.TimelineOp{Lane: int32(i % 4), Kind: tracer.KindKernel, StartNs: start, DurNs: 1_000,
			Name:    fmt.Sprintf("void at::native::elementwise_kernel<128, %d, at::native::gpu_kernel_impl_nocast<at::native::BinaryFunctor<float, float, float, at::native::MulFunctor<float> > > >(int)", k),
			Display: fmt.Sprintf("elementwise_kernel<128, %d, MulFunctor<float>>", k), Category: "elementwise", Stage: "forward",
			Step: int64(i / 1_000), Ops: []string{"aten::mul"}, Ranges: []string{"forward"}})
	}
	for s := int64(0); s*1_000 < int64(n); s++ {
		start, end := s*1_000*1_250, min((s+1)*1_000, int64(n))*1_250
		tl.Steps = append(tl.Steps, attrib.TimelineStep{Step: s, StartNs: start, DurNs: end - start})
		tl.CPU = append(tl.CPU, attrib.TimelineSpan{Kind: tracer.KindRange, StartNs: start, DurNs: end - start, Name: "forward"})
	}
	tl.EndNs = int64(n) * 1_250
	return tl
}

// BigWork is Big(n) with modelled work on every kernel (fp32 FLOPs and
// bytes from its rank: half compute-bound, half memory-bound on an H100's
// 989 TFLOP/s bf16, 67 TFLOP/s fp32 and 3.35 TB/s) and the small memory
// model of Memory, so that the Roofline and Memory views have rows.
func BigWork(n int) *attrib.Snapshot {
	s := Big(n)
	s.Peak = &attrib.Peak{Device: "NVIDIA H100 SXM", BytesPerS: 3.35e12}
	s.Peak.FlopsPerS[tracer.DTypeFP32] = 67e12
	s.Peak.FlopsPerS[tracer.DTypeBF16] = 989e12
	for i := range s.Kernels {
		k := &s.Kernels[i]
		w := attrib.Work{Bytes: float64(k.TotalNs) * 1e3, Ns: k.TotalNs}
		w.Flops = w.Bytes * float64(1+i%2*100) // FLOP/B 1 or 101 against a ridge of 20
		w.FlopsByDType[tracer.DTypeFP32] = w.Flops
		k.Work = w
		s.Work.Flops += w.Flops
		s.Work.Bytes += w.Bytes
		s.Work.FlopsByDType[tracer.DTypeFP32] += w.Flops
		s.Work.Ns += w.Ns
	}
	s.Memory = Memory()
	return s
}
