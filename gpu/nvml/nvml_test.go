//go:build cgo

package nvml

import (
	"errors"
	"testing"
)

func TestMissingLibraryIsCalm(t *testing.T) {
	_, err := Open(Options{LibraryPath: "libnvidia-ml-rlktop-absent.so.1"})
	if !errors.Is(err, ErrNoDriver) {
		t.Fatalf("err = %v, want ErrNoDriver", err)
	}
}

// requireNVML opens the real driver library or skips, saying why.
func requireNVML(t *testing.T) *Backend {
	t.Helper()
	b, err := Open(Options{})
	if errors.Is(err, ErrNoDriver) {
		if err.Error() != "no NVIDIA driver: libnvidia-ml.so.1 not found" {
			t.Errorf("no-driver line = %q", err.Error())
		}
		t.Skip("no NVIDIA driver on this machine (libnvidia-ml.so.1 not found): real-GPU NVML test skipped")
	}
	if err != nil {
		t.Fatalf("NVML present but failing: %v", err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func TestRealGPU(t *testing.T) {
	b := requireNVML(t)
	info, err := b.Info()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("driver %s, CUDA %s, NVML %s", info.Driver, info.CUDA, info.Library)
	if info.Driver == "" || info.CUDA == "" || len(info.Devices) == 0 {
		t.Errorf("info incomplete: %+v", info)
	}
	devs, err := b.Read()
	if err != nil {
		t.Fatal(err)
	}
	if len(devs) != len(info.Devices) {
		t.Fatalf("%d readings for %d devices", len(devs), len(info.Devices))
	}
	for _, d := range devs {
		t.Logf("%+v", d)
		if d.UtilPct < 0 || d.UtilPct > 100 || d.MemUtilPct < 0 || d.MemUtilPct > 100 {
			t.Errorf("device %d: utilisation %d%% / %d%%", d.Index, d.UtilPct, d.MemUtilPct)
		}
		if d.MemTotalBytes <= 0 || d.MemUsedBytes < 0 || d.MemUsedBytes > d.MemTotalBytes {
			t.Errorf("device %d: memory %d of %d", d.Index, d.MemUsedBytes, d.MemTotalBytes)
		}
		if d.MemTotalBytes != info.Devices[d.Index].TotalMemory {
			t.Errorf("device %d: total memory %d in Read, %d in Info", d.Index, d.MemTotalBytes, info.Devices[d.Index].TotalMemory)
		}
		if d.PowerMW <= 0 || d.PowerLimitMW <= 0 || d.SMClockMHz <= 0 || d.TempC <= 0 || d.TempC > 120 {
			t.Errorf("device %d: power %d/%d mW, sm clock %d MHz, temp %d °C", d.Index, d.PowerMW, d.PowerLimitMW, d.SMClockMHz, d.TempC)
		}
		if !d.ThrottleKnown {
			t.Errorf("device %d: throttle reasons unknown: %v", d.Index, d.Errors)
		}
	}
}
