//go:build unix

package tracefile

import (
	"syscall"
	"time"
)

// kProcessCPU returns the process's user+system CPU time so far (0 when
// unavailable), for the benchmark's per-core throughput.
func kProcessCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
