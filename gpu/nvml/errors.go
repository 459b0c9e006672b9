// Package nvml reads NVIDIA GPU telemetry through NVML
// (github.com/NVIDIA/go-nvml, which opens libnvidia-ml.so.1 with dlopen at
// run time, so building needs no driver). It needs cgo; a build without
// cgo compiles a stub whose Open returns ErrNotSupported.
package nvml

import (
	"errors"

	"github.com/rlktop/rlktop/gpu/reading"
)

// ErrNoDriver is returned by Open when libnvidia-ml.so.1 cannot be loaded:
// no NVIDIA driver on this machine. It is an expected state, not a fault;
// its text is the one calm line the device panel shows.
var ErrNoDriver = errors.New("no NVIDIA driver: libnvidia-ml.so.1 not found")

// ErrDriverNotLoaded is returned by Open when libnvidia-ml loads but the
// NVIDIA kernel driver is not (NVML_ERROR_DRIVER_NOT_LOADED: driver
// libraries mounted into a container on a machine without the GPU, or the
// module not loaded). Also an expected state with a calm line.
var ErrDriverNotLoaded = errors.New("no NVIDIA driver: libnvidia-ml.so.1 found but the NVIDIA kernel driver is not loaded")

// ErrNotSupported is returned by Open in a build without cgo.
var ErrNotSupported = errors.New("NVIDIA telemetry is not supported in this build (built with CGO_ENABLED=0; rebuild with cgo for NVML)")

var _ reading.Backend = (*Backend)(nil)
