// Package reading holds the plain data types that GPU telemetry backends
// (gpu/nvml, gpu/rocmsmi) return and package gpu re-exports, so that the
// binding packages need not import gpu (which imports them), and the
// whole Sample the device panel draws, so that the view layer need not
// import gpu either (internal/archtest checks it). Pure Go.
package reading

import "github.com/rlktop/rlktop/tracer"

// Unknown marks a numeric field the backend could not read (not
// supported on the device, permission denied, or not implemented for the
// vendor).
const Unknown = -1

// Device is one device's telemetry at one instant. Numeric fields are
// Unknown (-1) when not read; Errors says why for the first failure of
// each field.
type Device struct {
	Index  int    // the backend's device index (NVML / ROCm SMI order)
	Vendor string // "nvidia" or "amd"
	Name   string // "NVIDIA H200", "AMD Instinct MI300X"
	UUID   string // NVIDIA "GPU-…"; AMD unique id in hex; "" unknown

	UtilPct    int // % of the last sample period a kernel ran (NVML) / GPU busy (ROCm), 0..100
	MemUtilPct int // % of the period device memory was read or written, 0..100

	MemUsedBytes  int64
	MemTotalBytes int64

	PowerMW      int64 // board power draw, milliwatts
	PowerLimitMW int64 // enforced power limit, milliwatts

	SMClockMHz  int // current graphics/SM (AMD: system) clock, MHz
	MemClockMHz int // current memory clock, MHz
	TempC       int // GPU core (AMD: edge, else junction) temperature, °C

	// Throttle lists why clocks are held down now, by name (see
	// gpu/nvml.ThrottleNames); empty when not throttled. ThrottleKnown is
	// false when the backend cannot tell (then Throttle is nil).
	Throttle      []string
	ThrottleKnown bool

	// Processes using the device, as the driver reports them. PIDs are in
	// the driver's pid namespace (the host's, inside most containers).
	Processes []Process

	Errors []string // "field: reason" for fields that could not be read
}

// Process is one process holding a device context.
type Process struct {
	PID          int
	UsedMemBytes int64  // device memory it holds, bytes; Unknown when the driver does not say
	Kind         string // "compute" or "graphics" (NVIDIA); "compute" (AMD)
}

// Info describes the driver stack and the devices, for the run record and
// the device panel's header. Empty strings are unknown.
type Info struct {
	Vendor  string // "nvidia" or "amd"
	Library string // telemetry library version: NVML "12.550.54.14", ROCm SMI "5.2.3"
	Driver  string // kernel driver version: "550.54.14", amdgpu "6.8.0"
	CUDA    string // CUDA version the driver supports, "12.4" (NVIDIA)
	ROCm    string // ROCm version where the library says it (AMD)
	// Devices carries static properties: ID = backend index, Name,
	// Vendor, TotalMemory (bytes), SMs (0 unknown), ComputeCap ("9.0"),
	// Props (uuid, pci bus id, …).
	Devices []tracer.Device
}

// Backend is one vendor's telemetry source.
type Backend interface {
	// Name is "nvml" or "rocm-smi".
	Name() string
	// Info reads the driver versions and device properties.
	Info() (Info, error)
	// Read samples every device. A device whose reading fails entirely is
	// returned with its Errors set rather than failing the call.
	Read() ([]Device, error)
	// Close releases the library.
	Close() error
}
