// Package gpu is rlktop's device discovery and telemetry: NVIDIA through
// NVML (gpu/nvml), AMD through ROCm SMI (gpu/rocmsmi), and always the
// traced child's CPU% and RSS from /proc (gpu/proc). This package is pure
// Go; cgo lives in the two binding packages, each with a !cgo stub, so
// rlktop builds with CGO_ENABLED=0 (then only the /proc sampler works).
//
// A GPU process that is neither the watched child nor one of its
// descendants is a co-tenant: it shares the GPU and skews timings;
// Sample.CoTenants lists them.
package gpu

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rlktop/rlktop/gpu/nvml"
	"github.com/rlktop/rlktop/gpu/proc"
	"github.com/rlktop/rlktop/gpu/reading"
	"github.com/rlktop/rlktop/gpu/rocmsmi"
)

// Sampler produces telemetry samples.
type Sampler interface {
	Sample() (reading.Sample, error)
}

// Options tune OpenWith. The zero value is what Open uses.
type Options struct {
	NVML     nvml.Options
	ROCm     rocmsmi.Options
	NoNVML   bool   // do not try NVIDIA
	NoROCm   bool   // do not try AMD
	ProcRoot string // /proc mount point; "" is /proc
	// Backends, when non-nil, are used instead of opening NVML and ROCm
	// SMI (tests, replay).
	Backends []reading.Backend
}

// Monitor samples the GPU backends that opened and the watched child.
// It implements Sampler and is safe for concurrent use.
type Monitor struct {
	backends []reading.Backend
	lines    []string
	proc     *proc.Sampler
	procRoot string

	mu       sync.Mutex
	infos    []reading.Info
	infoDone bool
}

// Open tries NVIDIA, then AMD, and always watches processes through
// /proc. It never fails: status is one line saying what is sampled and,
// calmly, what is absent — on a machine without GPUs, "no NVIDIA driver:
// libnvidia-ml.so.1 not found; no ROCm SMI: librocm_smi64.so not found;
// CPU only: the child's CPU% and RSS". Call Watch with the child's pid.
func Open() (*Monitor, string) { return OpenWith(Options{}) }

// OpenWith is Open with options.
func OpenWith(opts Options) (*Monitor, string) {
	m := &Monitor{procRoot: opts.ProcRoot, proc: proc.New(0, opts.ProcRoot)}
	if m.procRoot == "" {
		m.procRoot = "/proc"
	}
	var absent []string
	if opts.Backends != nil {
		m.backends = opts.Backends
	} else {
		if !opts.NoNVML {
			b, err := nvml.Open(opts.NVML)
			switch {
			case err == nil:
				m.backends = append(m.backends, b)
			case errors.Is(err, nvml.ErrNoDriver), errors.Is(err, nvml.ErrDriverNotLoaded), errors.Is(err, nvml.ErrNotSupported):
				absent = append(absent, err.Error())
			default:
				absent = append(absent, "NVIDIA telemetry unavailable: "+err.Error())
			}
		}
		if !opts.NoROCm {
			b, err := rocmsmi.Open(opts.ROCm)
			switch {
			case err == nil:
				m.backends = append(m.backends, b)
			case errors.Is(err, rocmsmi.ErrNoLibrary), errors.Is(err, rocmsmi.ErrNoDevices), errors.Is(err, rocmsmi.ErrNotSupported):
				absent = append(absent, err.Error())
			default:
				absent = append(absent, "AMD telemetry unavailable: "+err.Error())
			}
		}
	}
	for _, b := range m.backends {
		line := b.Name()
		if info, err := b.Info(); err == nil {
			m.infos = append(m.infos, info)
			line = fmt.Sprintf("%s: %d device(s)", info.Vendor, len(info.Devices))
			if info.Driver != "" {
				line += ", driver " + info.Driver
			}
			if info.CUDA != "" {
				line += ", CUDA " + info.CUDA
			}
		}
		m.lines = append(m.lines, line)
	}
	m.infoDone = true
	if len(m.backends) == 0 {
		m.lines = append(m.lines, absent...)
		m.lines = append(m.lines, "CPU only: the child's CPU% and RSS")
	}
	return m, strings.Join(m.lines, "; ")
}

// Lines returns the status as separate lines (backends that opened, or
// the calm reasons none did).
func (m *Monitor) Lines() []string { return append([]string(nil), m.lines...) }

// HasGPU reports whether a GPU backend opened.
func (m *Monitor) HasGPU() bool { return len(m.backends) > 0 }

// Infos returns the driver versions and device properties of each open
// backend (read once at Open), for the run record.
func (m *Monitor) Infos() []reading.Info {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]reading.Info(nil), m.infos...)
}

// Watch sets the child whose process tree is sampled and against which
// co-tenants are judged; 0 stops watching. Call again after a relaunch.
func (m *Monitor) Watch(pid int) { m.proc.SetRoot(pid) }

// Close releases the GPU libraries.
func (m *Monitor) Close() error {
	var errs []error
	for _, b := range m.backends {
		errs = append(errs, b.Close())
	}
	return errors.Join(errs...)
}

// Sample reads every backend and the watched child. It returns an error
// only when nothing at all could be read; partial failures are listed in
// Sample.Errors and in each device's Errors.
func (m *Monitor) Sample() (reading.Sample, error) {
	s := reading.Sample{TS: time.Now().UnixNano()}
	for _, b := range m.backends {
		devs, err := b.Read()
		if err != nil {
			s.Errors = append(s.Errors, b.Name()+": "+err.Error())
			continue
		}
		s.Devices = append(s.Devices, devs...)
	}
	root := m.proc.Root()
	if root > 0 {
		st, err := m.proc.Sample()
		if err == nil {
			s.Proc, s.ProcOK = st, true
		} else {
			s.Errors = append(s.Errors, err.Error())
		}
	}
	if s.ProcOK {
		s.CoTenants, s.ForeignPIDs = coTenants(s.Devices, s.Proc.PIDs, m.procRoot)
	}
	if len(s.Devices) == 0 && !s.ProcOK && len(s.Errors) > 0 {
		return s, fmt.Errorf("telemetry: nothing could be read: %s", strings.Join(s.Errors, "; "))
	}
	return s, nil
}

// coTenants lists device processes outside tree. When no device pid is
// visible in procRoot, the driver's pids are from another namespace and
// nothing can be judged (foreign true, no co-tenants).
func coTenants(devs []reading.Device, tree []int, procRoot string) (out []reading.CoTenant, foreign bool) {
	ours := make(map[int]bool, len(tree))
	for _, p := range tree {
		ours[p] = true
	}
	any, visible := false, false
	for _, d := range devs {
		for _, p := range d.Processes {
			any = true
			if ours[p.PID] {
				visible = true
				continue
			}
			if _, err := os.Stat(filepath.Join(procRoot, strconv.Itoa(p.PID))); err == nil {
				visible = true
			}
			out = append(out, reading.CoTenant{Device: d.Index, Vendor: d.Vendor, PID: p.PID, UsedMemBytes: p.UsedMemBytes})
		}
	}
	if any && !visible {
		return nil, true
	}
	return out, false
}
