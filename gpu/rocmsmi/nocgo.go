//go:build !cgo

package rocmsmi

import "github.com/rlktop/rlktop/gpu/reading"

// Backend is unavailable without cgo.
type Backend struct{}

// Options tune Open.
type Options struct {
	// LibraryPaths override the names tried with dlopen.
	LibraryPaths []string
	// SysRoot prefixes /sys when checking for the amdgpu driver.
	SysRoot string
}

// Open always returns ErrNotSupported in a build without cgo.
func Open(Options) (*Backend, error) { return nil, ErrNotSupported }

func (*Backend) Name() string                    { return "rocm-smi" }
func (*Backend) Info() (reading.Info, error)     { return reading.Info{}, ErrNotSupported }
func (*Backend) Read() ([]reading.Device, error) { return nil, ErrNotSupported }
func (*Backend) Close() error                    { return nil }
