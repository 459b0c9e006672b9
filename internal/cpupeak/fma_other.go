//go:build !amd64

package cpupeak

// fmaLoop: no vector loop is written for this architecture; the compute
// peak is the GEMM's alone.
func fmaLoop() (loop func(rounds int64), flopsPerRound float64, name string) { return nil, 0, "" }
