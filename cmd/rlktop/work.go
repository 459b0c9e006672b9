package main

import (
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/spf13/pflag"

	"github.com/rlktop/rlktop/internal/cpupeak"
	"github.com/rlktop/rlktop/internal/units"
	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/opmodel"
)

// workFlags are the operator model and device table files of the
// commands that show modelled work (report, open).
type workFlags struct {
	opModel, peaks string
	noShapes       bool
}

func (w *workFlags) add(f *pflag.FlagSet) {
	f.StringVar(&w.opModel, "op-model", "", "TOML file of operator FLOP/byte models layered on the built-in ones (see tracer/opmodel/model.toml)")
	f.BoolVar(&w.noShapes, "no-shapes", false, "ignore the shapes a trace recorded: no FLOPs, bytes or roofline (a file of one long torch.profiler window with shapes then streams in bounded memory)")
	f.StringVar(&w.peaks, "device-peaks", "", "TOML file of device peaks (FLOP/s per dtype, bandwidth) tried before the built-in table (see tracer/attrib/devices.toml)")
}

// load returns the operator model (nil: the built-in one) and device table.
func (w *workFlags) load() (*opmodel.Model, *attrib.PeakTable, error) {
	var m *opmodel.Model
	if w.opModel != "" {
		var err error
		if m, err = opmodel.Load(w.opModel); err != nil {
			return nil, nil, err
		}
	}
	t, err := attrib.LoadPeaks(w.peaks)
	if err != nil {
		return nil, nil, err
	}
	return m, t, nil
}

// applyPeak sets s's device limits when s carries work: a CPU run's
// measured peak — the one its recording stored (attrib.PeakFromMeta in
// traces' run record), else this machine's (internal/cpupeak, cached per
// machine) — a GPU's from the table (or why none).
func applyPeak(s *attrib.Snapshot, t *attrib.PeakTable, traces ...*tracer.Trace) {
	if !s.HasWork() {
		return
	}
	if s.CPUOnly() {
		setCPUPeak(s, traces)
		return
	}
	if sourcePeaks(s, t) {
		return
	}
	if s.Peak, s.PeakNote = t.PeakFor(s); s.Peak == nil && cpuNamed(s) {
		// A CPU device that lost its vendor on the way (the built-in
		// loop's recording exported to Chrome JSON and read back).
		s.PeakNote = ""
		setCPUPeak(s, traces)
	}
}

// setCPUPeak sets s.Peak to the CPU peak its recording stored (the
// first of traces that holds one) or this machine's, and checks it
// against s's kernels.
func setCPUPeak(s *attrib.Snapshot, traces []*tracer.Trace) {
	for _, tr := range traces {
		if p := attrib.PeakFromMeta(tr.Meta); p != nil {
			s.Peak = p
			notePeakBeaten(s, false)
			return
		}
	}
	s.Peak = cpuPeak()
	notePeakBeaten(s, true)
}

// sourcePeaks sets s.SourcePeaks, and the note that says why s.Peak is
// nil, when s's sources ran on GPUs with different limits (files of an
// A100 and a V100 run): one roof for rows that mix them would misstate
// both, while each step belongs to one source. It reports whether it set
// them; sources whose devices name no GPU take no part.
func sourcePeaks(s *attrib.Snapshot, t *attrib.PeakTable) bool {
	if s.Ranks == nil || len(s.Ranks.Sources) < 2 || len(s.DeviceSource) != len(s.Devices) {
		return false
	}
	n := 0
	for _, r := range s.Ranks.Sources {
		n = max(n, r.Index+1)
	}
	peaks := make([]*attrib.Peak, n)
	var parts []string
	devices := map[string]bool{}
	for i := range n {
		p, note := t.SourcePeak(s, i)
		switch {
		case p != nil:
			peaks[i] = p
			devices[p.Device] = true
			parts = append(parts, s.Ranks.Label(i)+" "+p.Device)
		case note != attrib.NoGPUNote:
			devices[""] = true // a GPU the table does not know
			parts = append(parts, s.Ranks.Label(i)+": "+note)
		}
	}
	if len(devices) < 2 {
		return false
	}
	s.Peak, s.SourcePeaks = nil, peaks
	s.PeakNote = fmt.Sprintf("the sources ran on different devices — %s — and the kernel, category and stage rows add up the sources, so no row is read against a roof (read a file alone for its rows' bounds); each step's MFU is against its own source's device", strings.Join(parts, "; "))
	return true
}

// beatenMinNs is the modelled time a kernel row needs before its rate is
// trusted against the peak: a few short calls timed at µs resolution can
// read above any roof.
const beatenMinNs = 10_000_000

// notePeakBeaten checks s's measured CPU peak against its kernels: one
// that ran above it (of peak > 100% over at least beatenMinNs) shows the
// peak was measured while other work held the cores. The cache is then
// dropped once per process (cpupeak.Forget: the next start measures
// again) when the peak is this machine's (here), and s.PeakNote says so.
func notePeakBeaten(s *attrib.Snapshot, here bool) {
	p := s.Peak
	if p == nil || !p.Measured {
		return
	}
	var best attrib.Rates
	name := ""
	for _, k := range s.Kernels {
		if k.Work.Ns < beatenMinNs {
			continue
		}
		if r := attrib.RatesOf(k.Work, p); r.OfPeak > best.OfPeak {
			best, name = r, k.Name
		}
	}
	if best.OfPeak <= 1 {
		return
	}
	if !here {
		s.PeakNote = fmt.Sprintf("%s ran at %s of the measured %s peak the recording stored, so that peak was measured while other work held the cores", name, units.Share(best.OfPeak), best.Bound)
		return
	}
	forgetPeak()
	s.PeakNote = fmt.Sprintf("%s ran at %s of the measured %s peak, so the peak was measured while other work held the cores; rlktop measures it again at its next start",
		name, units.Share(best.OfPeak), best.Bound)
}

// forgetPeak drops the cached CPU peak once per process.
var forgetPeak = sync.OnceFunc(cpupeak.Forget)

// measurePeakFirst measures this machine's CPU peak before a built-in
// loop (or a command on a machine without a GPU driver) starts when none
// is cached: measured beside the running loop the
// microbenchmarks get half the cores and the roofline would read above
// 100%. About 600 ms, once per machine.
func measurePeakFirst() {
	if !cpupeak.Cached() {
		cpuPeak()
	}
}

// gpuDriverPresent reports whether this machine has an NVIDIA or AMD GPU
// compute driver (/dev/nvidiactl, /dev/kfd): without one a traced command
// can only run on the CPU.
func gpuDriverPresent() bool {
	for _, p := range []string{"/dev/nvidiactl", "/dev/kfd"} {
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	return false
}

// cpuNamed reports whether every device of s that ran work is named as a
// CPU ("Go CPU (in-process gotrace)").
func cpuNamed(s *attrib.Snapshot) bool {
	devs := s.WorkingDevices()
	for _, d := range devs {
		if !strings.Contains(strings.ToUpper(d.Name), "CPU") {
			return false
		}
	}
	return len(devs) > 0
}

// livePeak sets a live snapshot's device limits (session.Options.Peak).
func livePeak(s *attrib.Snapshot) { applyPeak(s, attrib.DefaultPeaks()) }

// attachPeak is livePeak for a process rlktop attached to: measuring a
// CPU's peak takes every core for about 0.7 s, which would slow the
// running job (and read low beside it), so a CPU run gets this
// machine's cached measurement only.
func attachPeak(s *attrib.Snapshot) {
	if s.HasWork() && s.CPUOnly() && !cpupeak.Cached() {
		s.PeakNote = "no CPU peak measured on this machine yet: rlktop measures it (about 0.7 s of every core) before a run it starts, never beside a job it attached to"
		return
	}
	livePeak(s)
}

// cpuPeak is this machine's measured CPU peak (measured or read once).
var cpuPeak = sync.OnceValue(func() *attrib.Peak {
	r := cpupeak.Get()
	p := &attrib.Peak{Device: "CPU " + r.Machine, Match: r.Machine, Measured: true, BytesPerS: r.BytesPerS,
		Source: "measured on this machine at " + r.At + ": " + r.Method}
	p.FlopsPerS[tracer.DTypeFP32] = r.FlopsPerS
	return p
})
