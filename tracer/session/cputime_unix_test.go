//go:build unix

package session

import "github.com/rlktop/rlktop/internal/testutil"

var cpuTime = testutil.CPUTime
