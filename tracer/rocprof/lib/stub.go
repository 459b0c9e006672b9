//go:build !rocm || !cgo

// Command lib is rlktop's rocprofiler-sdk tool library. Built without the
// rocm tag (or without cgo) it is this stub, so that `go build ./...` works
// everywhere; scripts/build-rocprof.sh builds the real library with
// -tags rocm -buildmode=c-shared (it needs only a C compiler: the ABI
// subset is declared in ../include).
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "this build has no rocprofiler-sdk tool library: build it with scripts/build-rocprof.sh (needs cgo and a C compiler)")
	os.Exit(2)
}
