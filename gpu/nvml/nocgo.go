//go:build !cgo

package nvml

import "github.com/rlktop/rlktop/gpu/reading"

// Backend is unavailable without cgo.
type Backend struct{}

// Options tune Open.
type Options struct {
	// LibraryPath overrides "libnvidia-ml.so.1".
	LibraryPath string
}

// Open always returns ErrNotSupported in a build without cgo.
func Open(Options) (*Backend, error) { return nil, ErrNotSupported }

func (*Backend) Name() string                    { return "nvml" }
func (*Backend) Info() (reading.Info, error)     { return reading.Info{}, ErrNotSupported }
func (*Backend) Read() ([]reading.Device, error) { return nil, ErrNotSupported }
func (*Backend) Close() error                    { return nil }
