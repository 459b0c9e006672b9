//go:build cupti && cgo && !cudahome

package main

// Without a CUDA toolkit, compile the CUPTI headers against rlktop's
// minimal cuda.h (see ../include/mincuda/cuda.h).

// #cgo CFLAGS: -I${SRCDIR}/../include/mincuda
import "C"
