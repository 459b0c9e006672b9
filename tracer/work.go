package tracer

import (
	"math"
	"strings"
)

// Work is the modelled work of one GPU op (or CPU operator by self time):
// the FLOPs it performs and the bytes it moves, from the shapes of the
// operator that launched it (tracer/opmodel) or from the source itself
// (the built-in loop knows its kernels' shapes).
//
// A KindKernel event carries its Work in Event.Value (PackWork); 0 there
// means nothing is known (the source recorded no shapes).
type Work struct {
	Flops float64 // floating-point operations, a multiply-add counted as 2
	Bytes float64 // tensor bytes read plus written (a lower bound of traffic)
	DType DType   // the dtype the FLOPs run at (the roofline's compute peak)
	// Modelled is false for a kernel whose launching operators have no
	// model (Flops and Bytes are 0 and its time counts as unmodelled).
	Modelled bool
}

// DType is the numeric type of modelled work, as device peaks are quoted.
type DType uint8

// DTypes, in the order the device table lists peaks.
const (
	DTypeUnknown DType = iota
	DTypeFP64
	DTypeFP32
	DTypeTF32
	DTypeBF16
	DTypeFP16
	DTypeFP8
	DTypeINT8
	dtypeCount
)

var dtypeNames = [...]string{"", "fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "int8"}

// String returns "fp32", "bf16", … ("" unknown).
func (d DType) String() string {
	if int(d) < len(dtypeNames) {
		return dtypeNames[d]
	}
	return ""
}

// ParseDType is the inverse of DType.String.
func ParseDType(s string) (DType, bool) {
	for i, n := range dtypeNames {
		if n == s && i > 0 {
			return DType(i), true
		}
	}
	return DTypeUnknown, false
}

// KernelDType is the dtype a kernel runs its modelled FLOPs at, from d,
// the dtype its operator's inputs were recorded with, and the kernel's
// name: FP32 inputs multiplied on TF32 tensor cores (PyTorch's
// allow_tf32, set_float32_matmul_precision("high")) run at the TF32
// peak, 8× the FP32 one on an A100 (156 against 19.5 TFLOP/s), and
// against the FP32 peak such a GEMM reads 128%. The name says so: "tf32"
// in it (cuBLAS and cuDNN kernels: sm80_xmma_gemm_tf32f32_…), or CUTLASS's
// tensor-op SGEMM with the 16×8×8 instruction shape of the TF32 MMA
// (mma.sync.m16n8k8 with .tf32 operands; cutlass_80_tensorop_s1688gemm_…).
// Any other d or name is returned as it is.
func KernelDType(name string, d DType) DType {
	if d != DTypeFP32 {
		return d
	}
	if strings.Contains(name, "tf32") || strings.Contains(name, "tensorop_s1688") {
		return DTypeTF32
	}
	return d
}

// RetypeWork is v (a kernel's packed Work, PackWork) with its dtype as
// KernelDType gives it for the kernel's name.
func RetypeWork(v int64, name string) int64 {
	w, ok := UnpackWork(v)
	if !ok || !w.Modelled {
		return v
	}
	if d := KernelDType(name, w.DType); d != w.DType {
		w.DType = d
		return PackWork(w)
	}
	return v
}

// Layout of a packed Work (an int64's bits, high to low): 1 bit modelled,
// 1 bit unmodelled, 4 bits dtype, 29 bits FLOPs, 29 bits bytes. FLOPs and
// bytes are non-negative float32 values with their mantissa rounded to 21
// bits (relative error below 2.4e-7), exponents to 2^127.
const (
	workModelled   = 1 << 63
	workUnmodelled = 1 << 62
	workDTypeShift = 58
	workFlopsShift = 29
	workFieldMask  = 1<<29 - 1
)

// PackWork encodes w for Event.Value of a kernel; never 0.
func PackWork(w Work) int64 {
	if !w.Modelled {
		return int64(uint64(workUnmodelled))
	}
	v := uint64(workModelled) | uint64(w.DType&15)<<workDTypeShift |
		packF29(w.Flops)<<workFlopsShift | packF29(w.Bytes)
	return int64(v)
}

// UnpackWork decodes a kernel's Event.Value; ok is false when it holds no
// Work (0, or a value no PackWork wrote).
func UnpackWork(v int64) (w Work, ok bool) {
	u := uint64(v)
	switch {
	case u&workModelled != 0:
		return Work{
			Flops:    unpackF29(u >> workFlopsShift & workFieldMask),
			Bytes:    unpackF29(u & workFieldMask),
			DType:    DType(u >> workDTypeShift & 15),
			Modelled: true,
		}, true
	case u == workUnmodelled:
		return Work{}, true
	}
	return Work{}, false
}

// packF29 rounds x >= 0 to a float32 with a 21-bit mantissa and returns
// its 29 low bits (exponent and mantissa; the sign is always 0).
func packF29(x float64) uint64 {
	if !(x > 0) { // 0, negative, NaN
		return 0
	}
	b := uint64(math.Float32bits(float32(min(x, math.MaxFloat32))))
	b = (b + 1<<1) >> 2 // round the two low mantissa bits away
	return min(b, workFieldMask)
}

func unpackF29(b uint64) float64 {
	return float64(math.Float32frombits(uint32(b << 2)))
}
