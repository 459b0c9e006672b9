//go:build unix

package gotrace

import "github.com/rlktop/rlktop/internal/testutil"

var cpuTime = testutil.CPUTime
