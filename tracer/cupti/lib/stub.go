//go:build !cupti || !cgo

// Command lib is rlktop's CUPTI injection library. Built without the cupti
// tag (or without cgo) it is this stub, so that `go build ./...` works on
// machines without the CUPTI headers; scripts/build-cupti.sh builds the
// real library with -tags cupti -buildmode=c-shared.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "this build has no CUPTI tracer: build it with scripts/build-cupti.sh (needs the CUPTI headers and cgo)")
	os.Exit(2)
}
