// Package gputest provides fake telemetry for tests of code that shows or
// records gpu.Samples (the device panel, the recorder). The numbers are
// invented fixtures shaped like real readings, not measurements.
package gputest

import (
	"time"

	"github.com/rlktop/rlktop/gpu/reading"
)

// Fixed is a gpu.Sampler that returns S (with TS set to the call time
// unless S.TS is non-zero) and Err on every call.
type Fixed struct {
	S   reading.Sample
	Err error
}

// Sample implements gpu.Sampler.
func (f *Fixed) Sample() (reading.Sample, error) {
	s := f.S
	if s.TS == 0 {
		s.TS = time.Now().UnixNano()
	}
	return s, f.Err
}

// TS is the fixed timestamp of the fixtures: 2026-11-29 12:00:00 UTC, ns.
const TS = int64(1795953600) * 1e9

// H200Busy is one NVIDIA H200 at full load, power-capped, with the child's
// process (pid 4242) and a co-tenant (pid 999) on it.
func H200Busy() reading.Sample {
	return reading.Sample{
		TS: TS,
		Devices: []reading.Device{{
			Index: 0, Vendor: "nvidia", Name: "NVIDIA H200", UUID: "GPU-00000000-0000-0000-0000-000000000000",
			UtilPct: 98, MemUtilPct: 41,
			MemUsedBytes: 61 << 30, MemTotalBytes: 143771 << 20,
			PowerMW: 697_000, PowerLimitMW: 700_000,
			SMClockMHz: 1755, MemClockMHz: 3201, TempC: 71,
			Throttle: []string{"sw_power_cap"}, ThrottleKnown: true,
			Processes: []reading.Process{
				{PID: 4242, UsedMemBytes: 58 << 30, Kind: "compute"},
				{PID: 999, UsedMemBytes: 3 << 30, Kind: "compute"},
			},
		}},
		Proc:      reading.ProcStat{Root: 4242, PIDs: []int{4242, 4250}, CPUPct: 104.5, RSSBytes: 9 << 30},
		ProcOK:    true,
		CoTenants: []reading.CoTenant{{Device: 0, Vendor: "nvidia", PID: 999, UsedMemBytes: 3 << 30}},
	}
}

// MI300Idle is one AMD MI300X, idle, with unknown throttle reasons (ROCm
// SMI does not report them) and no processes.
func MI300Idle() reading.Sample {
	return reading.Sample{
		TS: TS,
		Devices: []reading.Device{{
			Index: 0, Vendor: "amd", Name: "AMD Instinct MI300X", UUID: "0x1234abcd",
			UtilPct: 0, MemUtilPct: 0,
			MemUsedBytes: 283 << 20, MemTotalBytes: 192 << 30,
			PowerMW: 141_000, PowerLimitMW: 750_000,
			SMClockMHz: 132, MemClockMHz: 900, TempC: 38,
		}},
	}
}

// CPUOnly is the built-in loop on a machine without a GPU driver: only
// the child's CPU% and RSS.
func CPUOnly() reading.Sample {
	return reading.Sample{
		TS:     TS,
		Proc:   reading.ProcStat{Root: 4242, PIDs: []int{4242}, CPUPct: 187.3, RSSBytes: 312 << 20},
		ProcOK: true,
	}
}

// CPUOnlyStatus is the status line gpu.Open gives on a machine with
// neither driver (and no ROCm SMI library).
const CPUOnlyStatus = "no NVIDIA driver: libnvidia-ml.so.1 not found; no ROCm SMI: librocm_smi64.so not found; CPU only: the child's CPU% and RSS"
