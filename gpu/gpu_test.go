package gpu

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rlktop/rlktop/gpu/nvml"
	"github.com/rlktop/rlktop/gpu/reading"
	"github.com/rlktop/rlktop/gpu/rocmsmi"
	"github.com/rlktop/rlktop/tracer"
)

// TestOpenWithoutDriverIsCalm: on a machine without an NVIDIA driver, Open
// reports exactly the calm line and sampling still works (CPU fallback).
func TestOpenWithoutDriverIsCalm(t *testing.T) {
	_, err := nvml.Open(nvml.Options{})
	switch {
	case err == nil:
		t.Skip("an NVIDIA driver is present here: the no-driver line cannot be checked")
	case errors.Is(err, nvml.ErrNotSupported):
		m, status := Open()
		defer m.Close()
		if !strings.Contains(status, nvml.ErrNotSupported.Error()) {
			t.Errorf("status %q lacks the !cgo line", status)
		}
		return
	case !errors.Is(err, nvml.ErrNoDriver):
		t.Skipf("NVML fails here for another reason: %v", err)
	}
	m, status := Open()
	defer m.Close()
	t.Logf("status: %s", status)
	lines := m.Lines()
	found := false
	for _, l := range lines {
		if l == "no NVIDIA driver: libnvidia-ml.so.1 not found" {
			found = true
		}
	}
	if !found {
		t.Errorf("lines %q lack exactly %q", lines, "no NVIDIA driver: libnvidia-ml.so.1 not found")
	}
	if m.HasGPU() {
		t.Skip("an AMD GPU is present; the CPU-only path cannot be checked")
	}
	// With no ROCm SMI library either, the whole line (as gputest.CPUOnlyStatus).
	m2, st2 := OpenWith(Options{ROCm: rocmsmi.Options{LibraryPaths: []string{"librocm_smi64-rlktop-absent.so"}}})
	m2.Close()
	if want := "no NVIDIA driver: libnvidia-ml.so.1 not found; no ROCm SMI: librocm_smi64.so not found; CPU only: the child's CPU% and RSS"; st2 != want {
		t.Errorf("status %q, want %q", st2, want)
	}
	if !strings.HasSuffix(status, "CPU only: the child's CPU% and RSS") {
		t.Errorf("status %q does not end with the CPU fallback", status)
	}
	s, err := m.Sample()
	if err != nil {
		t.Fatalf("sampling without a GPU or child: %v", err)
	}
	if len(s.Devices) != 0 || s.ProcOK {
		t.Errorf("sample %+v, want empty", s)
	}
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	m.Watch(cmd.Process.Pid)
	s, err = m.Sample()
	if err != nil || !s.ProcOK || s.Proc.RSSBytes <= 0 {
		t.Errorf("watched sleep: err %v, sample %+v", err, s.Proc)
	}
}

// fakeBackend serves fixed readings.
type fakeBackend struct{ devs []reading.Device }

func (f *fakeBackend) Name() string { return "fake" }
func (f *fakeBackend) Info() (reading.Info, error) {
	return reading.Info{Vendor: "nvidia", Driver: "550.1", CUDA: "12.4", Devices: []tracer.Device{{ID: 0, Name: "Fake GPU"}}}, nil
}
func (f *fakeBackend) Read() ([]reading.Device, error) { return f.devs, nil }
func (f *fakeBackend) Close() error                    { return nil }

func TestCoTenants(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	// The child: a shell with a sleeping grandchild.
	cmd := exec.Command("sh", "-c", "sleep 30 & wait")
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	child := cmd.Process.Pid
	var grandchild int
	for deadline := time.Now().Add(5 * time.Second); grandchild == 0 && time.Now().Before(deadline); {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(child) + "/task/" + strconv.Itoa(child) + "/children")
		if f := strings.Fields(string(b)); len(f) > 0 {
			grandchild, _ = strconv.Atoi(f[0])
		}
		time.Sleep(10 * time.Millisecond)
	}
	if grandchild == 0 {
		t.Skip("cannot see the grandchild through /proc/<pid>/task/<pid>/children")
	}
	self := os.Getpid() // this test process: on the GPU, not the child's
	fb := &fakeBackend{devs: []reading.Device{{Index: 0, Vendor: "nvidia", UtilPct: 50, MemUtilPct: 10,
		MemUsedBytes: 1 << 30, MemTotalBytes: 80 << 30, PowerMW: 300000, PowerLimitMW: 700000,
		SMClockMHz: 1980, MemClockMHz: 2619, TempC: 55, Throttle: []string{"gpu_idle", "sw_power_cap"}, ThrottleKnown: true,
		Processes: []reading.Process{{PID: grandchild, UsedMemBytes: 1 << 29}, {PID: self, UsedMemBytes: 1 << 20}}}}}
	m, status := OpenWith(Options{Backends: []reading.Backend{fb}})
	if !strings.Contains(status, "driver 550.1, CUDA 12.4") {
		t.Errorf("status %q", status)
	}
	s, _ := m.Sample()
	if s.HasCoTenant() {
		t.Errorf("no child watched, yet co-tenants %v", s.CoTenants)
	}
	m.Watch(child)
	s, err := m.Sample()
	if err != nil {
		t.Fatal(err)
	}
	if len(s.CoTenants) != 1 || s.CoTenants[0].PID != self || s.CoTenants[0].UsedMemBytes != 1<<20 {
		t.Errorf("co-tenants %+v, want only pid %d (grandchild %d is the child's)", s.CoTenants, self, grandchild)
	}
	// All driver pids invisible here: another pid namespace.
	fb.devs[0].Processes = []reading.Process{{PID: 1 << 22}, {PID: 1<<22 + 1}}
	s, _ = m.Sample()
	if !s.ForeignPIDs || s.HasCoTenant() {
		t.Errorf("foreign pids: ForeignPIDs %v, co-tenants %v", s.ForeignPIDs, s.CoTenants)
	}

	// Counters from the first kind of sample, checked by hand.
	fb.devs[0].Processes = []reading.Process{{PID: self}}
	s, _ = m.Sample()
	strs := tracer.NewStrings()
	cs := AppendCounters(nil, &s, strs.Intern)
	got := map[string]float64{}
	for _, c := range cs {
		if c.TS != s.TS {
			t.Errorf("counter at %d, sample at %d", c.TS, s.TS)
		}
		got[strs.Get(c.Name)] = c.Value
	}
	want := map[string]float64{CounterUtilPct: 50, CounterMemUtilPct: 10, CounterMemUsedBytes: 1 << 30,
		CounterPowerMW: 300000, CounterPowerLimitMW: 700000, CounterSMClockMHz: 1980, CounterMemClockMHz: 2619,
		CounterTempC: 55, CounterThrottled: 1, CounterCoTenants: 1, CounterProcRSSBytes: float64(s.Proc.RSSBytes)}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
}

type countingSampler struct{ n int }

func (c *countingSampler) Sample() (reading.Sample, error) {
	c.n++
	return reading.Sample{TS: int64(c.n), Devices: []reading.Device{{Index: 1, UtilPct: c.n, MemUtilPct: reading.Unknown,
		MemUsedBytes: reading.Unknown, MemTotalBytes: reading.Unknown, PowerMW: reading.Unknown, PowerLimitMW: reading.Unknown,
		SMClockMHz: reading.Unknown, MemClockMHz: reading.Unknown, TempC: reading.Unknown}}}, nil
}

func TestPoller(t *testing.T) {
	strs := tracer.NewStrings()
	p := NewPoller(&countingSampler{}, 20*time.Millisecond, strs.Intern)
	ctx, cancel := context.WithCancel(context.Background())
	ch := p.Run(ctx)
	var last int64
	for i := 0; i < 3; i++ {
		r := <-ch
		if r.Err != nil || len(r.Counters) != 1 {
			t.Fatalf("reading %+v", r)
		}
		c := r.Counters[0]
		if strs.Get(c.Name) != CounterUtilPct || c.Device != 1 || c.Value != float64(r.Sample.TS) || r.Sample.TS <= last {
			t.Errorf("counter %+v (%s) for sample %d", c, strs.Get(c.Name), r.Sample.TS)
		}
		last = r.Sample.TS
	}
	cancel()
	for range ch { // must close
	}
	if NewPoller(&countingSampler{}, time.Nanosecond, strs.Intern).Interval() != MinInterval {
		t.Error("interval not clamped")
	}
}
