package cpupeak

import "golang.org/x/sys/cpu"

//go:noescape
func fmaAVX2(n int64)

//go:noescape
func fmaAVX512(n int64)

// fmaLoop returns this core's widest fused multiply-add loop (fma_amd64.s)
// and the FLOPs one round of it does; nil when the CPU has neither
// AVX-512F nor AVX2 with FMA (or the OS does not save their registers,
// which x/sys/cpu checks).
func fmaLoop() (loop func(rounds int64), flopsPerRound float64, name string) {
	switch {
	case cpu.X86.HasAVX512F:
		return fmaAVX512, 12 * 16 * 2, "AVX-512 FMA"
	case cpu.X86.HasAVX2 && cpu.X86.HasFMA:
		return fmaAVX2, 12 * 8 * 2, "AVX2 FMA"
	}
	return nil, 0, ""
}
