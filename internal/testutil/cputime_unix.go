//go:build unix

package testutil

import (
	"syscall"
	"time"
)

// CPUTime returns the process's user+system CPU time, for benchmarks'
// events per CPU-second: on a shared, loaded machine that is the per-core
// figure, where events per second (wall) also counts time spent waiting
// for a core.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
