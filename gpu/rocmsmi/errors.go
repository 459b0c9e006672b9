// Package rocmsmi reads AMD GPU telemetry through the ROCm SMI library
// (librocm_smi64), opened at run time with dlopen so that one build works
// with or without ROCm installed. Building needs cgo and the ROCm SMI
// headers (Debian: librocm-smi-dev); a build without cgo compiles a stub
// whose Open returns ErrNotSupported.
package rocmsmi

import (
	"errors"

	"github.com/rlktop/rlktop/gpu/reading"
)

// ErrNoLibrary is returned by Open when no librocm_smi64 can be loaded: no
// ROCm on this machine. An expected state; its text is the calm line
// shown.
var ErrNoLibrary = errors.New("no ROCm SMI: librocm_smi64.so not found")

// ErrNoDevices is returned by Open when the library loads but reports no
// AMD GPU (e.g. ROCm SMI installed on a machine without amdgpu devices).
var ErrNoDevices = errors.New("no AMD GPU: ROCm SMI found no devices")

// ErrNotSupported is returned by Open in a build without cgo.
var ErrNotSupported = errors.New("AMD telemetry is not supported in this build (built with CGO_ENABLED=0; rebuild with cgo for ROCm SMI)")

var _ reading.Backend = (*Backend)(nil)
