//go:build cgo

package rocmsmi

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "rsmi_decls.h"

// Function pointers looked up with dlsym; NULL when the installed library
// lacks a symbol (the call then reports RSMI_STATUS_NOT_SUPPORTED).
static void *rlk_lib;
static rsmi_status_t (*p_init)(uint64_t);
static rsmi_status_t (*p_shut_down)(void);
static rsmi_status_t (*p_num_devices)(uint32_t *);
static rsmi_status_t (*p_name)(uint32_t, char *, size_t);
static rsmi_status_t (*p_unique_id)(uint32_t, uint64_t *);
static rsmi_status_t (*p_pci_id)(uint32_t, uint64_t *);
static rsmi_status_t (*p_busy)(uint32_t, uint32_t *);
static rsmi_status_t (*p_mem_busy)(uint32_t, uint32_t *);
static rsmi_status_t (*p_mem_total)(uint32_t, rsmi_memory_type_t, uint64_t *);
static rsmi_status_t (*p_mem_usage)(uint32_t, rsmi_memory_type_t, uint64_t *);
static rsmi_status_t (*p_power_get)(uint32_t, uint64_t *, int *); // ROCm 6+
static rsmi_status_t (*p_power_ave)(uint32_t, uint32_t, uint64_t *);
static rsmi_status_t (*p_power_cap)(uint32_t, uint32_t, uint64_t *);
static rsmi_status_t (*p_clk)(uint32_t, rsmi_clk_type_t, void *);
static rsmi_status_t (*p_temp)(uint32_t, uint32_t, rsmi_temperature_metric_t, int64_t *);
static rsmi_status_t (*p_procs)(rsmi_process_info_t *, uint32_t *);
static rsmi_status_t (*p_proc_gpus)(uint32_t, uint32_t *, uint32_t *);
static rsmi_status_t (*p_proc_by_pid)(uint32_t, rsmi_process_info_t *);
static rsmi_status_t (*p_version)(rsmi_version_t *);
static rsmi_status_t (*p_version_str)(rsmi_sw_component_t, char *, uint32_t);
static rsmi_status_t (*p_status_string)(rsmi_status_t, const char **);

#define NS RSMI_STATUS_NOT_SUPPORTED

static int rlk_open(const char *path, char *err, size_t errlen) {
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *e = dlerror();
		strncpy(err, e ? e : "dlopen failed", errlen - 1);
		err[errlen - 1] = 0;
		return -1;
	}
	rlk_lib = h;
#define SYM(p, n) *(void **)(&p) = dlsym(h, n)
	SYM(p_init, "rsmi_init");
	SYM(p_shut_down, "rsmi_shut_down");
	SYM(p_num_devices, "rsmi_num_monitor_devices");
	SYM(p_name, "rsmi_dev_name_get");
	SYM(p_unique_id, "rsmi_dev_unique_id_get");
	SYM(p_pci_id, "rsmi_dev_pci_id_get");
	SYM(p_busy, "rsmi_dev_busy_percent_get");
	SYM(p_mem_busy, "rsmi_dev_memory_busy_percent_get");
	SYM(p_mem_total, "rsmi_dev_memory_total_get");
	SYM(p_mem_usage, "rsmi_dev_memory_usage_get");
	SYM(p_power_get, "rsmi_dev_power_get");
	SYM(p_power_ave, "rsmi_dev_power_ave_get");
	SYM(p_power_cap, "rsmi_dev_power_cap_get");
	SYM(p_clk, "rsmi_dev_gpu_clk_freq_get");
	SYM(p_temp, "rsmi_dev_temp_metric_get");
	SYM(p_procs, "rsmi_compute_process_info_get");
	SYM(p_proc_gpus, "rsmi_compute_process_gpus_get");
	SYM(p_proc_by_pid, "rsmi_compute_process_info_by_pid_get");
	SYM(p_version, "rsmi_version_get");
	SYM(p_version_str, "rsmi_version_str_get");
	SYM(p_status_string, "rsmi_status_string");
#undef SYM
	if (!p_init || !p_shut_down || !p_num_devices) {
		strncpy(err, "library lacks rsmi_init / rsmi_num_monitor_devices", errlen - 1);
		err[errlen - 1] = 0;
		dlclose(h);
		rlk_lib = NULL;
		return -1;
	}
	return 0;
}

static rsmi_status_t rlk_init(void) { return p_init(0); }
static rsmi_status_t rlk_shut_down(void) { return p_shut_down(); }
static rsmi_status_t rlk_num_devices(uint32_t *n) { return p_num_devices(n); }
static rsmi_status_t rlk_name(uint32_t d, char *b, size_t n) { return p_name ? p_name(d, b, n) : NS; }
static rsmi_status_t rlk_unique_id(uint32_t d, uint64_t *v) { return p_unique_id ? p_unique_id(d, v) : NS; }
static rsmi_status_t rlk_pci_id(uint32_t d, uint64_t *v) { return p_pci_id ? p_pci_id(d, v) : NS; }
static rsmi_status_t rlk_busy(uint32_t d, uint32_t *v) { return p_busy ? p_busy(d, v) : NS; }
static rsmi_status_t rlk_mem_busy(uint32_t d, uint32_t *v) { return p_mem_busy ? p_mem_busy(d, v) : NS; }
static rsmi_status_t rlk_mem_total(uint32_t d, uint64_t *v) { return p_mem_total ? p_mem_total(d, RSMI_MEM_TYPE_VRAM, v) : NS; }
static rsmi_status_t rlk_mem_usage(uint32_t d, uint64_t *v) { return p_mem_usage ? p_mem_usage(d, RSMI_MEM_TYPE_VRAM, v) : NS; }
// Power in microwatts: rsmi_dev_power_get where present (ROCm 6+, the only
// one that works on MI300), else the average power of sensor 0.
static rsmi_status_t rlk_power(uint32_t d, uint64_t *v) {
	rsmi_status_t s = NS;
	if (p_power_get) {
		int type = 0;
		s = p_power_get(d, v, &type);
		if (s == RSMI_STATUS_SUCCESS) return s;
	}
	return p_power_ave ? p_power_ave(d, 0, v) : s;
}
static rsmi_status_t rlk_power_cap(uint32_t d, uint64_t *v) { return p_power_cap ? p_power_cap(d, 0, v) : NS; }
static rsmi_status_t rlk_clk(uint32_t d, int mem, void *buf) { return p_clk ? p_clk(d, mem ? RSMI_CLK_TYPE_MEM : RSMI_CLK_TYPE_SYS, buf) : NS; }
// Temperature in millidegrees C: edge sensor, else junction (MI200/MI300
// have no edge sensor).
static rsmi_status_t rlk_temp(uint32_t d, int64_t *v) {
	if (!p_temp) return NS;
	rsmi_status_t s = p_temp(d, RSMI_TEMP_TYPE_EDGE, RSMI_TEMP_CURRENT, v);
	if (s == RSMI_STATUS_SUCCESS) return s;
	return p_temp(d, RSMI_TEMP_TYPE_JUNCTION, RSMI_TEMP_CURRENT, v);
}
static rsmi_status_t rlk_procs(rsmi_process_info_t *p, uint32_t *n) { return p_procs ? p_procs(p, n) : NS; }
static rsmi_status_t rlk_proc_gpus(uint32_t pid, uint32_t *d, uint32_t *n) { return p_proc_gpus ? p_proc_gpus(pid, d, n) : NS; }
static rsmi_status_t rlk_proc_by_pid(uint32_t pid, rsmi_process_info_t *p) { return p_proc_by_pid ? p_proc_by_pid(pid, p) : NS; }
static rsmi_status_t rlk_version(uint32_t *ma, uint32_t *mi, uint32_t *pa) {
	if (!p_version) return NS;
	rsmi_version_t v;
	memset(&v, 0, sizeof v);
	rsmi_status_t s = p_version(&v);
	*ma = v.major; *mi = v.minor; *pa = v.patch;
	return s;
}
static rsmi_status_t rlk_driver_version(char *b, uint32_t n) { return p_version_str ? p_version_str(RSMI_SW_COMP_DRIVER, b, n) : NS; }
static const char *rlk_status_string(rsmi_status_t s) {
	const char *out = NULL;
	if (p_status_string && p_status_string(s, &out) == RSMI_STATUS_SUCCESS && out) return out;
	return "unknown ROCm SMI status";
}
static void rlk_close(void) {
	if (rlk_lib) { dlclose(rlk_lib); rlk_lib = NULL; }
}
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"unsafe"

	"github.com/rlktop/rlktop/gpu/reading"
	"github.com/rlktop/rlktop/tracer"
)

// DefaultLibraryPaths are tried in order with dlopen: the plain name (the
// dev package's link, or ld.so.conf), the sonames of Debian (.1) and ROCm
// 5/6 (.5, .6, .7), then ROCm's default prefix.
var DefaultLibraryPaths = []string{
	"librocm_smi64.so", "librocm_smi64.so.1", "librocm_smi64.so.7", "librocm_smi64.so.6", "librocm_smi64.so.5",
	"/opt/rocm/lib/librocm_smi64.so",
}

// Options tune Open.
type Options struct {
	// LibraryPaths override DefaultLibraryPaths.
	LibraryPaths []string
	// SysRoot prefixes /sys when checking that the amdgpu driver is
	// loaded; "" is the real root.
	SysRoot string
}

// The C library state is process-wide: one Backend at a time.
var (
	openMu sync.Mutex
	isOpen bool
)

// Backend reads AMD devices through ROCm SMI. Safe for concurrent use.
type Backend struct {
	mu      sync.Mutex
	n       uint32
	path    string
	closed  bool
	version string
}

// Open loads librocm_smi64 and initialises it. Errors: ErrNoLibrary (no
// library could be loaded), ErrNoDevices (loaded, zero devices), or the
// library's own status for other failures. Only one Backend may be open
// at a time in a process.
func Open(opts Options) (*Backend, error) {
	openMu.Lock()
	defer openMu.Unlock()
	if isOpen {
		return nil, errors.New("ROCm SMI is already open in this process")
	}
	paths := opts.LibraryPaths
	if len(paths) == 0 {
		paths = DefaultLibraryPaths
	}
	var errbuf [256]C.char
	var used string
	for _, p := range paths {
		cp := C.CString(p)
		rc := C.rlk_open(cp, &errbuf[0], C.size_t(len(errbuf)))
		C.free(unsafe.Pointer(cp))
		if rc == 0 {
			used = p
			break
		}
	}
	if used == "" {
		return nil, ErrNoLibrary
	}
	// Without the amdgpu kernel driver rsmi_init fails after printing to
	// stderr (which would tear the TUI); do not call it.
	if _, err := os.Stat(filepath.Join(opts.SysRoot, "/sys/module/amdgpu")); err != nil {
		C.rlk_close()
		return nil, fmt.Errorf("%w (amdgpu kernel driver not loaded)", ErrNoDevices)
	}
	if s := C.rlk_init(); s != C.RSMI_STATUS_SUCCESS {
		C.rlk_close()
		return nil, fmt.Errorf("ROCm SMI (%s) init failed: %s", used, statusString(s))
	}
	var n C.uint32_t
	if s := C.rlk_num_devices(&n); s != C.RSMI_STATUS_SUCCESS {
		C.rlk_shut_down()
		C.rlk_close()
		return nil, fmt.Errorf("ROCm SMI: cannot count devices: %s", statusString(s))
	}
	if n == 0 {
		C.rlk_shut_down()
		C.rlk_close()
		return nil, ErrNoDevices
	}
	b := &Backend{n: uint32(n), path: used}
	var ma, mi, pa C.uint32_t
	if C.rlk_version(&ma, &mi, &pa) == C.RSMI_STATUS_SUCCESS {
		b.version = fmt.Sprintf("%d.%d.%d", ma, mi, pa)
	}
	isOpen = true
	return b, nil
}

func statusString(s C.rsmi_status_t) string {
	return fmt.Sprintf("%s (status %d)", C.GoString(C.rlk_status_string(s)), int(s))
}

// Name returns "rocm-smi".
func (b *Backend) Name() string { return "rocm-smi" }

// Close shuts ROCm SMI down and unloads it.
func (b *Backend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	openMu.Lock()
	defer openMu.Unlock()
	C.rlk_shut_down()
	C.rlk_close()
	isOpen = false
	return nil
}

var errClosed = errors.New("ROCm SMI backend closed")

// declValues reports the constants and layouts of rsmi_decls.h, for the
// test that compares them with the real rocm_smi.h.
func declValues() string {
	return fmt.Sprintf("SUCCESS=%d NOT_SUPPORTED=%d CLK_SYS=%d CLK_MEM=%d TEMP_EDGE=%d TEMP_JUNCTION=%d TEMP_CURRENT=%d MEM_VRAM=%d SW_DRIVER=%d PROC_SIZE=%d PROC_VRAM_OFF=%d VER_SIZE=%d",
		C.RSMI_STATUS_SUCCESS, C.RSMI_STATUS_NOT_SUPPORTED, C.RSMI_CLK_TYPE_SYS, C.RSMI_CLK_TYPE_MEM,
		C.RSMI_TEMP_TYPE_EDGE, C.RSMI_TEMP_TYPE_JUNCTION, C.RSMI_TEMP_CURRENT, C.RSMI_MEM_TYPE_VRAM, C.RSMI_SW_COMP_DRIVER,
		unsafe.Sizeof(C.rsmi_process_info_t{}), unsafe.Offsetof(C.rsmi_process_info_t{}.vram_usage), unsafe.Sizeof(C.rsmi_version_t{}))
}

// Info reads the library and driver versions and each device's name,
// unique id, PCI id and VRAM size. SM (compute unit) count and gfx
// architecture are not available through ROCm SMI and stay unknown.
func (b *Backend) Info() (reading.Info, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return reading.Info{}, errClosed
	}
	info := reading.Info{Vendor: "amd", Library: b.version}
	var buf [256]C.char
	if C.rlk_driver_version(&buf[0], C.uint32_t(len(buf))) == C.RSMI_STATUS_SUCCESS {
		info.Driver = C.GoString(&buf[0])
	}
	for i := uint32(0); i < b.n; i++ {
		d := C.uint32_t(i)
		td := tracer.Device{ID: int32(i), Vendor: "amd", Props: map[string]string{"library": b.path}}
		if C.rlk_name(d, &buf[0], C.size_t(len(buf))) == C.RSMI_STATUS_SUCCESS {
			td.Name = C.GoString(&buf[0])
		}
		var v C.uint64_t
		if C.rlk_mem_total(d, &v) == C.RSMI_STATUS_SUCCESS {
			td.TotalMemory = int64(v)
		}
		if C.rlk_unique_id(d, &v) == C.RSMI_STATUS_SUCCESS {
			td.Props["uniqueId"] = fmt.Sprintf("0x%x", uint64(v))
		}
		if C.rlk_pci_id(d, &v) == C.RSMI_STATUS_SUCCESS {
			td.Props["pciBusId"] = bdf(uint64(v))
		}
		info.Devices = append(info.Devices, td)
	}
	return info, nil
}

// bdf formats ROCm SMI's BDF id (domain<<32 | bus<<8 | device<<3 |
// function) as "0000:c1:00.0".
func bdf(id uint64) string {
	return fmt.Sprintf("%04x:%02x:%02x.%x", id>>32, (id>>8)&0xff, (id>>3)&0x1f, id&0x7)
}

// Read samples every device. Throttle reasons are not read (ROCm SMI
// exposes them only inside the versioned gpu_metrics blob), so
// ThrottleKnown is false.
func (b *Backend) Read() ([]reading.Device, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, errClosed
	}
	procs := b.processes()
	out := make([]reading.Device, 0, b.n)
	var buf [256]C.char
	fbuf := make([]byte, freqBufSize)
	for i := uint32(0); i < b.n; i++ {
		d := C.uint32_t(i)
		r := reading.Device{
			Index: int(i), Vendor: "amd",
			UtilPct: reading.Unknown, MemUtilPct: reading.Unknown,
			MemUsedBytes: reading.Unknown, MemTotalBytes: reading.Unknown,
			PowerMW: reading.Unknown, PowerLimitMW: reading.Unknown,
			SMClockMHz: reading.Unknown, MemClockMHz: reading.Unknown, TempC: reading.Unknown,
			Processes: procs[i],
		}
		fail := func(field string, s C.rsmi_status_t) {
			r.Errors = append(r.Errors, field+": "+statusString(s))
		}
		if C.rlk_name(d, &buf[0], C.size_t(len(buf))) == C.RSMI_STATUS_SUCCESS {
			r.Name = C.GoString(&buf[0])
		}
		var u32 C.uint32_t
		var u64 C.uint64_t
		var i64 C.int64_t
		if C.rlk_unique_id(d, &u64) == C.RSMI_STATUS_SUCCESS {
			r.UUID = fmt.Sprintf("0x%x", uint64(u64))
		}
		if s := C.rlk_busy(d, &u32); s == C.RSMI_STATUS_SUCCESS {
			r.UtilPct = int(u32)
		} else {
			fail("utilization", s)
		}
		if s := C.rlk_mem_busy(d, &u32); s == C.RSMI_STATUS_SUCCESS {
			r.MemUtilPct = int(u32)
		} else {
			fail("memory utilization", s)
		}
		if s := C.rlk_mem_usage(d, &u64); s == C.RSMI_STATUS_SUCCESS {
			r.MemUsedBytes = int64(u64)
		} else {
			fail("memory used", s)
		}
		if s := C.rlk_mem_total(d, &u64); s == C.RSMI_STATUS_SUCCESS {
			r.MemTotalBytes = int64(u64)
		} else {
			fail("memory total", s)
		}
		if s := C.rlk_power(d, &u64); s == C.RSMI_STATUS_SUCCESS {
			r.PowerMW = int64(u64) / 1000 // µW → mW
		} else {
			fail("power", s)
		}
		if s := C.rlk_power_cap(d, &u64); s == C.RSMI_STATUS_SUCCESS {
			r.PowerLimitMW = int64(u64) / 1000
		} else {
			fail("power limit", s)
		}
		for _, mem := range []int{0, 1} {
			clear(fbuf)
			s := C.rlk_clk(d, C.int(mem), unsafe.Pointer(&fbuf[0]))
			mhz, ok := decodeFreq(fbuf)
			switch {
			case s != C.RSMI_STATUS_SUCCESS:
				fail([]string{"sm clock", "memory clock"}[mem], s)
			case !ok:
				r.Errors = append(r.Errors, []string{"sm clock", "memory clock"}[mem]+": unrecognised rsmi_frequencies_t layout")
			case mem == 0:
				r.SMClockMHz = mhz
			default:
				r.MemClockMHz = mhz
			}
		}
		if s := C.rlk_temp(d, &i64); s == C.RSMI_STATUS_SUCCESS {
			r.TempC = int(i64 / 1000) // millidegrees C
		} else {
			fail("temperature", s)
		}
		out = append(out, r)
	}
	return out, nil
}

// processes lists compute processes per device index. ROCm SMI reports
// VRAM per process, not per (process, device); a process on several
// devices gets its total on each.
func (b *Backend) processes() map[uint32][]reading.Process {
	var n C.uint32_t
	if C.rlk_procs(nil, &n) != C.RSMI_STATUS_SUCCESS || n == 0 {
		return nil
	}
	list := make([]C.rsmi_process_info_t, int(n)+8) // room for processes started meanwhile
	n = C.uint32_t(len(list))
	if C.rlk_procs(&list[0], &n) != C.RSMI_STATUS_SUCCESS {
		return nil
	}
	out := map[uint32][]reading.Process{}
	devs := make([]C.uint32_t, b.n)
	for _, p := range list[:min(int(n), len(list))] {
		mem := int64(reading.Unknown)
		var full C.rsmi_process_info_t
		if C.rlk_proc_by_pid(p.process_id, &full) == C.RSMI_STATUS_SUCCESS {
			mem = int64(full.vram_usage)
		}
		nd := C.uint32_t(len(devs))
		if C.rlk_proc_gpus(p.process_id, &devs[0], &nd) != C.RSMI_STATUS_SUCCESS {
			continue
		}
		for _, d := range devs[:min(int(nd), len(devs))] {
			out[uint32(d)] = append(out[uint32(d)], reading.Process{PID: int(p.process_id), UsedMemBytes: mem, Kind: "compute"})
		}
	}
	return out
}
