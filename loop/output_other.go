//go:build !linux

package loop

import (
	"errors"
	"os"
)

// punchHole is Linux only; elsewhere read output files are truncated.
func punchHole(f *os.File, off, n int64) error { return errors.ErrUnsupported }
