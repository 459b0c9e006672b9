//go:build unix

package session

import (
	"syscall"
	"time"
)

// cpuTime returns the process's user+system CPU time. On a shared, loaded
// machine events per CPU-second is the per-core figure; events/s (wall)
// also counts time spent waiting for a core.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
