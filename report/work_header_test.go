package report

import (
	"strings"
	"testing"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
)

// A trace whose one step holds 32 of its 4,000,000 FLOPs (the rest ran
// before the step range opened) says so beside the per-step median, which
// alone reads as contradicting the total; a trace whose steps hold all
// its work says nothing more.
func TestWorkHeaderSaysWorkOutsideSteps(t *testing.T) {
	peak := &attrib.Peak{Device: "dev", Source: "sheet", BytesPerS: 1e12}
	peak.FlopsPerS[tracer.DTypeFP32] = 1e12
	for _, c := range []struct {
		inStep float64
		want   string
	}{
		{32, "steps: median 32.0 FLOP per step, MFU 0.0% (1 step holds 32.0 FLOP of the 4.00 MFLOP; the rest ran outside steps)\n"},
		{4e6, "steps: median 4.00 MFLOP per step, MFU 0.4%\n"},
	} {
		s := &attrib.Snapshot{Peak: peak}
		s.Work = attrib.Work{Flops: 4e6, Bytes: 1e6, Ns: 1000}
		s.Steps = []attrib.StepRow{{DurNs: 1e6}}
		s.Work.FlopsByDType[tracer.DTypeFP32] = 4e6
		s.Steps[0].Work = attrib.Work{Flops: c.inStep, Bytes: 10, Ns: 1000}
		s.Steps[0].Work.FlopsByDType[tracer.DTypeFP32] = c.inStep
		var b strings.Builder
		workHeader(&b, s, "")
		if !strings.Contains(b.String(), c.want) {
			t.Errorf("in step %v FLOPs: header\n%s\nlacks %q", c.inStep, b.String(), c.want)
		}
	}
}

// A run of 10 steps of which the profiler traced 2 (a Python command's
// agent): the per-step median says it is over those 2.
func TestWorkHeaderSaysTracedSteps(t *testing.T) {
	s := &attrib.Snapshot{}
	s.Work = attrib.Work{Flops: 2e6, Bytes: 1e6, Ns: 1000}
	for i := range 10 {
		st := attrib.StepRow{Step: int64(i), DurNs: 1e6}
		if i == 2 || i == 3 {
			st.Work = attrib.Work{Flops: 1e6, Bytes: 10, Ns: 500}
		}
		s.Steps = append(s.Steps, st)
	}
	var b strings.Builder
	stepsLine(&b, s, "")
	if want := "steps: median 1.00 MFLOP per step (over the 2 of 10 steps with kernels)\n"; b.String() != want {
		t.Errorf("steps line %q, want %q", b.String(), want)
	}
}

// A kernel row whose 30 µs are 10 µs modelled and 20 µs not has its rates
// over the 10 µs, and the table says so under it; a row modelled whole
// needs no note.
func TestRateNoteOnPartlyModelledRows(t *testing.T) {
	s := &attrib.Snapshot{}
	s.Work = attrib.Work{Flops: 1e6, Ns: 10_000, UnmodelledNs: 20_000}
	s.Kernels = []attrib.KernelRow{{Name: "k", Count: 2, TotalNs: 30_000, Work: s.Work}}
	if got, want := rateNote(s, ByKernel), "FLOP/s and B/s: over the time of each row's modelled kernels (1 row is partly unmodelled)"; got != want {
		t.Errorf("partly modelled: %q, want %q", got, want)
	}
	s.Kernels[0].Work.UnmodelledNs = 0
	if got := rateNote(s, ByKernel); got != "" {
		t.Errorf("modelled whole: %q, want none", got)
	}
}
