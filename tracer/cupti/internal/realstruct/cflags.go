//go:build cupti && cgo && !cudahome

package realstruct

// #cgo CFLAGS: -I${SRCDIR}/../../include/mincuda
import "C"
