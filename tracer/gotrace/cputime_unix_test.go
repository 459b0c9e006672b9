//go:build unix

package gotrace

import (
	"syscall"
	"time"
)

// cpuTime returns the process's user+system CPU time: on a shared,
// loaded machine events per CPU-second is the per-core figure.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
