//go:build cgo

package nvml

import (
	"errors"
	"fmt"
	"strconv"
	"sync"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/rlktop/rlktop/gpu/reading"
	"github.com/rlktop/rlktop/tracer"
)

// Options tune Open.
type Options struct {
	// LibraryPath overrides "libnvidia-ml.so.1" (tests use a missing name
	// to check the no-driver path on machines that have a driver).
	LibraryPath string
}

// Backend reads NVIDIA devices through NVML. Safe for concurrent use.
type Backend struct {
	mu      sync.Mutex
	lib     gonvml.Interface
	devices []gonvml.Device
	closed  bool
}

// Open loads NVML and enumerates the devices. With no driver the error
// is ErrNoDriver (compare with errors.Is); other failures (driver/library
// mismatch, no permission) are returned with NVML's own message.
func Open(opts Options) (*Backend, error) {
	var lib gonvml.Interface
	if opts.LibraryPath != "" {
		lib = gonvml.New(gonvml.WithLibraryPath(opts.LibraryPath))
	} else {
		lib = gonvml.New()
	}
	if ret := lib.Init(); ret != gonvml.SUCCESS {
		if ret == gonvml.ERROR_LIBRARY_NOT_FOUND {
			if opts.LibraryPath != "" {
				return nil, fmt.Errorf("%w (looked for %s)", ErrNoDriver, opts.LibraryPath)
			}
			return nil, ErrNoDriver
		}
		if ret == gonvml.ERROR_DRIVER_NOT_LOADED {
			return nil, ErrDriverNotLoaded
		}
		return nil, fmt.Errorf("NVML init failed: %s", errString(ret))
	}
	n, ret := lib.DeviceGetCount()
	if ret != gonvml.SUCCESS {
		lib.Shutdown()
		return nil, fmt.Errorf("NVML: cannot count devices: %s", errString(ret))
	}
	b := &Backend{lib: lib}
	for i := 0; i < n; i++ {
		d, ret := lib.DeviceGetHandleByIndex(i)
		if ret != gonvml.SUCCESS {
			lib.Shutdown()
			return nil, fmt.Errorf("NVML: device %d: %s", i, errString(ret))
		}
		b.devices = append(b.devices, d)
	}
	return b, nil
}

func errString(r gonvml.Return) string {
	return fmt.Sprintf("%s (%s)", gonvml.ErrorString(r), r.String())
}

// Name returns "nvml".
func (b *Backend) Name() string { return "nvml" }

// Close shuts NVML down.
func (b *Backend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	if ret := b.lib.Shutdown(); ret != gonvml.SUCCESS {
		return fmt.Errorf("NVML shutdown: %s", errString(ret))
	}
	return nil
}

var errClosed = errors.New("NVML backend closed")

// Info reads driver, CUDA and NVML versions and each device's name, UUID,
// memory, compute capability, SM count (where NVML gives it) and PCI bus.
func (b *Backend) Info() (reading.Info, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return reading.Info{}, errClosed
	}
	info := reading.Info{Vendor: "nvidia"}
	if v, ret := b.lib.SystemGetDriverVersion(); ret == gonvml.SUCCESS {
		info.Driver = v
	}
	if v, ret := b.lib.SystemGetNVMLVersion(); ret == gonvml.SUCCESS {
		info.Library = v
	}
	if v, ret := b.lib.SystemGetCudaDriverVersion(); ret == gonvml.SUCCESS {
		// 12040 → "12.4" (CUDA_VERSION encoding: 1000*major + 10*minor).
		info.CUDA = strconv.Itoa(v/1000) + "." + strconv.Itoa(v%1000/10)
	}
	for i, d := range b.devices {
		td := tracer.Device{ID: int32(i), Vendor: "nvidia", Props: map[string]string{}}
		if v, ret := d.GetName(); ret == gonvml.SUCCESS {
			td.Name = v
		}
		if v, ret := d.GetUUID(); ret == gonvml.SUCCESS {
			td.Props["uuid"] = v
		}
		if m, ret := d.GetMemoryInfo(); ret == gonvml.SUCCESS {
			td.TotalMemory = int64(m.Total)
		}
		if ma, mi, ret := d.GetCudaComputeCapability(); ret == gonvml.SUCCESS {
			td.ComputeCap = strconv.Itoa(ma) + "." + strconv.Itoa(mi)
		}
		if a, ret := d.GetAttributes(); ret == gonvml.SUCCESS && a.MultiprocessorCount > 0 {
			td.SMs = int(a.MultiprocessorCount)
		}
		if p, ret := d.GetPciInfo(); ret == gonvml.SUCCESS {
			td.Props["pciBusId"] = cString(p.BusId[:])
		}
		if v, ret := d.GetPowerManagementLimit(); ret == gonvml.SUCCESS {
			td.Props["powerLimitMilliwatts"] = strconv.FormatUint(uint64(v), 10)
		}
		if v, ret := d.GetMaxClockInfo(gonvml.CLOCK_SM); ret == gonvml.SUCCESS {
			td.Props["maxSmClockMHz"] = strconv.FormatUint(uint64(v), 10)
		}
		info.Devices = append(info.Devices, td)
	}
	return info, nil
}

func cString(b []int8) string {
	out := make([]byte, 0, len(b))
	for _, c := range b {
		if c == 0 {
			break
		}
		out = append(out, byte(c))
	}
	return string(out)
}

// Read samples every device: utilisation, memory, power, clocks,
// temperature, clock event reasons and the compute and graphics processes.
func (b *Backend) Read() ([]reading.Device, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, errClosed
	}
	out := make([]reading.Device, 0, len(b.devices))
	for i, d := range b.devices {
		out = append(out, readDevice(i, d))
	}
	return out, nil
}

func readDevice(i int, d gonvml.Device) reading.Device {
	r := reading.Device{
		Index: i, Vendor: "nvidia",
		UtilPct: reading.Unknown, MemUtilPct: reading.Unknown,
		MemUsedBytes: reading.Unknown, MemTotalBytes: reading.Unknown,
		PowerMW: reading.Unknown, PowerLimitMW: reading.Unknown,
		SMClockMHz: reading.Unknown, MemClockMHz: reading.Unknown, TempC: reading.Unknown,
	}
	fail := func(field string, ret gonvml.Return) {
		r.Errors = append(r.Errors, field+": "+errString(ret))
	}
	if v, ret := d.GetName(); ret == gonvml.SUCCESS {
		r.Name = v
	}
	if v, ret := d.GetUUID(); ret == gonvml.SUCCESS {
		r.UUID = v
	}
	if u, ret := d.GetUtilizationRates(); ret == gonvml.SUCCESS {
		r.UtilPct, r.MemUtilPct = int(u.Gpu), int(u.Memory)
	} else {
		fail("utilization", ret)
	}
	if m, ret := d.GetMemoryInfo(); ret == gonvml.SUCCESS {
		r.MemUsedBytes, r.MemTotalBytes = int64(m.Used), int64(m.Total)
	} else {
		fail("memory", ret)
	}
	if v, ret := d.GetPowerUsage(); ret == gonvml.SUCCESS {
		r.PowerMW = int64(v)
	} else {
		fail("power", ret)
	}
	if v, ret := d.GetEnforcedPowerLimit(); ret == gonvml.SUCCESS {
		r.PowerLimitMW = int64(v)
	} else {
		fail("power limit", ret)
	}
	if v, ret := d.GetClockInfo(gonvml.CLOCK_SM); ret == gonvml.SUCCESS {
		r.SMClockMHz = int(v)
	} else {
		fail("sm clock", ret)
	}
	if v, ret := d.GetClockInfo(gonvml.CLOCK_MEM); ret == gonvml.SUCCESS {
		r.MemClockMHz = int(v)
	} else {
		fail("memory clock", ret)
	}
	if v, ret := d.GetTemperature(gonvml.TEMPERATURE_GPU); ret == gonvml.SUCCESS {
		r.TempC = int(v)
	} else {
		fail("temperature", ret)
	}
	mask, ret := d.GetCurrentClocksEventReasons()
	if ret == gonvml.ERROR_FUNCTION_NOT_FOUND || ret == gonvml.ERROR_NOT_SUPPORTED {
		mask, ret = d.GetCurrentClocksThrottleReasons() // drivers before r535
	}
	if ret == gonvml.SUCCESS {
		r.Throttle, r.ThrottleKnown = ThrottleNames(mask), true
	} else {
		fail("throttle reasons", ret)
	}
	if ps, ret := d.GetComputeRunningProcesses(); ret == gonvml.SUCCESS {
		r.Processes = appendProcs(r.Processes, ps, "compute")
	} else {
		fail("compute processes", ret)
	}
	if ps, ret := d.GetGraphicsRunningProcesses(); ret == gonvml.SUCCESS {
		r.Processes = appendProcs(r.Processes, ps, "graphics")
	}
	return r
}

// noMemValue is NVML_VALUE_NOT_AVAILABLE for usedGpuMemory (unsigned -1),
// reported e.g. on Windows WDDM and for some MIG configurations.
const noMemValue = ^uint64(0)

func appendProcs(dst []reading.Process, ps []gonvml.ProcessInfo, kind string) []reading.Process {
	for _, p := range ps {
		mem := int64(reading.Unknown)
		if p.UsedGpuMemory != noMemValue {
			mem = int64(p.UsedGpuMemory)
		}
		dst = append(dst, reading.Process{PID: int(p.Pid), UsedMemBytes: mem, Kind: kind})
	}
	return dst
}
