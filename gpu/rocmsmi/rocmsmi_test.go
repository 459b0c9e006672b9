//go:build cgo

package rocmsmi

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestMissingLibraryIsCalm(t *testing.T) {
	_, err := Open(Options{LibraryPaths: []string{"librocm_smi64-rlktop-absent.so"}})
	if !errors.Is(err, ErrNoLibrary) || err.Error() != "no ROCm SMI: librocm_smi64.so not found" {
		t.Fatalf("err = %v, want exactly ErrNoLibrary", err)
	}
}

func TestRealAMDGPU(t *testing.T) {
	b, err := Open(Options{})
	if errors.Is(err, ErrNoLibrary) || errors.Is(err, ErrNoDevices) {
		t.Skipf("no AMD GPU here (%v): real-device ROCm SMI test skipped", err)
	}
	if err != nil {
		t.Skipf("ROCm SMI present but unusable here: %v", err)
	}
	defer b.Close()
	info, err := b.Info()
	if err != nil {
		t.Fatal(err)
	}
	devs, err := b.Read()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range devs {
		t.Logf("%+v", d)
		if d.MemTotalBytes <= 0 || d.MemUsedBytes > d.MemTotalBytes || d.UtilPct > 100 {
			t.Errorf("device %d implausible: %+v", d.Index, d)
		}
	}
	if len(devs) != len(info.Devices) {
		t.Errorf("%d readings, %d devices", len(devs), len(info.Devices))
	}
}

func TestBDF(t *testing.T) {
	// domain 0, bus 0xc1, device 0, function 0 → 0000:c1:00.0
	if got := bdf(0xc1 << 8); got != "0000:c1:00.0" {
		t.Errorf("bdf = %s", got)
	}
	if got := bdf(1<<32 | 0x03<<8 | 2<<3 | 1); got != "0001:03:02.1" {
		t.Errorf("bdf = %s", got)
	}
}

// TestDeclsMatchHeader compiles testdata/header_probe.c against the real
// rocm_smi.h (librocm-smi-dev) and compares what it prints with our own
// declarations.
func TestDeclsMatchHeader(t *testing.T) {
	if _, err := os.Stat("/usr/include/rocm_smi/rocm_smi.h"); err != nil {
		t.Skip("rocm_smi.h not installed (apt-get install librocm-smi-dev): cannot cross-check rsmi_decls.h")
	}
	cc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("no gcc to compile the header probe")
	}
	bin := filepath.Join(t.TempDir(), "probe")
	if out, err := exec.Command(cc, "-o", bin, filepath.Join("testdata", "header_probe.c")).CombinedOutput(); err != nil {
		t.Fatalf("compiling the probe: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := declValues(), strings.TrimSpace(string(out)); got != want {
		t.Errorf("rsmi_decls.h:  %s\nrocm_smi.h:    %s", got, want)
	}
}
