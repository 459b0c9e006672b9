//go:build unix

package wire

import "github.com/rlktop/rlktop/internal/testutil"

var cpuTime = testutil.CPUTime
