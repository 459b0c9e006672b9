package views

import (
	"math"
	"strconv"

	"github.com/rlktop/rlktop/tracer/attrib"
)

// The Stages view beside the Python samples: per stage, the step
// thread's sampled time a step, the share of it running Python bytecode,
// and the stage's GPU time as a share of that ("env_step … │ 31 ms/step
// py 92% GPU 2%"); stages that only Python samples saw (no GPU work) get
// rows of their own, after the others.

// pyCellWidth is the cells the Python side of a stage row takes (shown
// when the pane is at least 64 wide).
const pyCellWidth = 33

// stagesAndPython is the Stages view's rows (the snapshot's stages,
// then those with Python samples only: no GPU op launched in them) and
// the snapshot's Python stage rows by stage (nil without samples), from
// one StageRows: a pass over the samples, which the Stages pane, shown
// beside every view, made twice per snapshot.
func stagesAndPython(s *attrib.Snapshot) ([]attrib.GroupRow, map[string]attrib.PyStageRow) {
	if s.Python == nil {
		return s.Stages, nil
	}
	rows := s.Stages
	seen := map[string]bool{}
	for _, r := range rows {
		seen[r.Key] = true
	}
	py := map[string]attrib.PyStageRow{}
	for _, r := range s.Python.StageRows() {
		py[r.Stage] = r
		if !seen[r.Stage] {
			if len(rows) == len(s.Stages) {
				rows = append([]attrib.GroupRow(nil), rows...)
			}
			rows = append(rows, attrib.GroupRow{Key: r.Stage})
		}
	}
	return rows, py
}

// pyCell renders the Python side of stage row r in at most w cells: the
// step thread's sampled time a step in the stage, the share of its
// samples running Python, and the stage's GPU time a step over that
// time; "" when the stage has no step-thread samples or no room.
func (g *Groups) pyCell(r *attrib.GroupRow, w int) string {
	p, ok := g.py[r.Key]
	if !ok || p.StepSamples == 0 || w < 12 {
		return ""
	}
	pct := func(f float64) string { return strconv.Itoa(int(math.Round(100*f))) + "%" }
	s := " │ " + FormatNs(p.NsPerStep) + "/step py " + pct(p.PythonShare())
	if steps := opSteps(g.snap); steps > 0 && p.NsPerStep > 0 {
		gpu := float64(r.TotalNs) / float64(steps) / float64(p.NsPerStep)
		s += " " + gpuWord(g.snap) + " " + pct(min(gpu, 1))
	}
	return fit(s, w)
}

// opSteps is the number of steps GPU (or CPU operator) time was
// collected over: the steps holding any op (torch.profiler windows
// cover 2 of every 10), else the Python samples' steps.
func opSteps(s *attrib.Snapshot) int64 {
	var n int64
	for _, st := range s.Steps {
		if st.Count > 0 {
			n++
		}
	}
	if n == 0 && s.Python != nil {
		n = s.Python.Steps
	}
	return n
}

// gpuWord names the snapshot's op time in the Stages view's Python side:
// "GPU", or "ops" (CPU operators) for a trace without GPU work.
func gpuWord(s *attrib.Snapshot) string {
	if s.CPUOnly() {
		return "ops"
	}
	return "GPU"
}
