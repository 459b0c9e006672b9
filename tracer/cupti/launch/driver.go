package launch

import (
	"os"
	"path/filepath"
	"strings"
)

// Driver says whether an NVIDIA driver is usable on this machine.
type Driver struct {
	Present bool
	// Version is the kernel module's version line
	// (/proc/driver/nvidia/version), "" when unknown.
	Version string
	// LibCUDA is where libcuda.so.1 was found, "" when not.
	LibCUDA string
	// Why explains Present == false in words for the banner.
	Why string
}

// libcudaDirs are the folders searched for libcuda.so.1 besides those in
// LD_LIBRARY_PATH (Debian/Ubuntu multiarch, RHEL, WSL, container toolkit).
var libcudaDirs = []string{
	"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib",
	"/usr/local/nvidia/lib64", "/usr/lib/wsl/lib", "/usr/local/cuda/compat",
}

// DetectDriver looks for the NVIDIA driver without loading it: the kernel
// module (/proc/driver/nvidia/version, or /dev/nvidiactl) and the user-mode
// driver library libcuda.so.1 (LD_LIBRARY_PATH, then the usual folders).
// Both must be there for CUDA — and so the CUPTI tracer — to work.
//
// RLKTOP_ASSUME_DRIVER=1 skips the checks and reports a driver (for tests
// that load a stand-in libcupti, and for unusual installs).
func DetectDriver() Driver {
	if os.Getenv("RLKTOP_ASSUME_DRIVER") == "1" {
		return Driver{Present: true, Version: "assumed (RLKTOP_ASSUME_DRIVER=1)"}
	}
	return detectDriver("/", os.Getenv("LD_LIBRARY_PATH"))
}

func detectDriver(root, ldPath string) Driver {
	var d Driver
	module := false
	if b, err := os.ReadFile(filepath.Join(root, "proc/driver/nvidia/version")); err == nil {
		module = true
		d.Version = strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0])
	} else if _, err := os.Stat(filepath.Join(root, "dev/nvidiactl")); err == nil {
		module = true
	}
	dirs := append(filepath.SplitList(ldPath), libcudaDirs...)
	for _, dir := range dirs {
		if dir == "" {
			continue
		}
		p := filepath.Join(root, dir, "libcuda.so.1")
		if _, err := os.Stat(p); err == nil {
			d.LibCUDA = filepath.Join(dir, "libcuda.so.1")
			break
		}
	}
	switch {
	case !module && d.LibCUDA == "":
		d.Why = "no NVIDIA driver found (no /proc/driver/nvidia/version, no libcuda.so.1)"
	case !module:
		d.Why = "no NVIDIA kernel driver loaded (no /proc/driver/nvidia/version or /dev/nvidiactl; libcuda.so.1 is at " + d.LibCUDA + ")"
	case d.LibCUDA == "":
		d.Why = "the NVIDIA kernel driver is loaded but libcuda.so.1 was not found (add its folder to LD_LIBRARY_PATH)"
	default:
		d.Present = true
	}
	return d
}
