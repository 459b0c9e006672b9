package reading

import "time"

// Sample is the telemetry of every device and of the watched child at one
// instant.
type Sample struct {
	TS      int64 // ns since the Unix epoch (host CLOCK_REALTIME), when sampling began
	Devices []Device
	// Proc is the watched child tree; ProcOK is false when no child is
	// watched or it has exited.
	Proc   ProcStat
	ProcOK bool
	// CoTenants are GPU processes that are neither the watched child nor
	// its descendants (empty when no child is watched).
	CoTenants []CoTenant
	// ForeignPIDs is true when the driver reports GPU processes but none
	// of their pids exists in this /proc: the driver sees another pid
	// namespace (a container), so co-tenants cannot be told apart and
	// CoTenants is left empty.
	ForeignPIDs bool
	// Errors are read failures of this sample ("nvml: …"), not fatal.
	Errors []string
}

// CoTenant is a process sharing a device with the watched child.
type CoTenant struct {
	Device       int    // Device.Index
	Vendor       string // "nvidia" / "amd"
	PID          int
	UsedMemBytes int64 // Unknown when the driver does not say
}

// HasCoTenant reports whether another process shares a device.
func (s *Sample) HasCoTenant() bool { return len(s.CoTenants) > 0 }

// ProcStat is one sample of a process tree (gpu/proc.Sampler).
type ProcStat struct {
	Root int   // the watched process
	PIDs []int // Root and its live descendants, ascending
	// CPUPct is the CPU time the tree used since the previous sample over
	// the wall time between them, in percent of one CPU (200 = two CPUs
	// busy). -1 on the first sample (no interval yet).
	CPUPct float64
	// CPUTicks is the tree's total utime+stime now, in 1/proc.UserHZ s.
	CPUTicks uint64
	RSSBytes int64 // sum of VmRSS over the tree, bytes
	At       time.Time
}
