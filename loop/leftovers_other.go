//go:build !linux

package loop

import "time"

// Leftover is a process the command started that was still running after
// it. Finding them needs /proc: elsewhere none are found.
type Leftover struct {
	PID  int
	Comm string
}

func endMarked(string, time.Duration) []Leftover { return nil }
