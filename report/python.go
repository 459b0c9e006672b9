package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/rlktop/rlktop/internal/escape"
	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/livestate"
)

// ByPython is the view of where the Python side of the steps went: the
// Python agent's stack samples per function (self and total) for the whole
// step and per stage, and per stage the step thread's samples by state.
const ByPython = "python"

// NoPythonText says why a snapshot has no Python view.
const NoPythonText = "no Python samples in this input: they come from the Python agent's sampler (rlktop run/record/compare of a Python command; --py-sample-hz, default 100)"

// PythonDoc is the JSON "python" object (attrib.PyProfile). Sample counts
// are samples; times ns (the samples' weights: the time each stands for).
type PythonDoc struct {
	Samples     int64  `json:"samples"`
	StepSamples int64  `json:"step_thread_samples"`
	WeightNs    int64  `json:"sampled_ns"`
	PeriodNs    int64  `json:"period_ns"`
	Steps       int64  `json:"steps"`
	Dropped     uint64 `json:"dropped"`
	BeforeSteps int64  `json:"before_steps"`
	// Functions: the whole step's rows (stage "") then each stage's, each
	// scope by self samples descending.
	Functions []PyFunctionDoc `json:"functions"`
	Stages    []PyStageDoc    `json:"stages"`
}

// PyFunctionDoc is one function in one scope: Stage "" is the whole step
// (every stage), else the stage's samples only. Share is TotalSamples
// over the scope's samples; SelfShare SelfSamples over them.
type PyFunctionDoc struct {
	Function     string           `json:"function"`
	File         string           `json:"file"`
	Line         int              `json:"line"` // the definition's first line
	Stage        string           `json:"stage"`
	SelfSamples  int64            `json:"self_samples"`
	TotalSamples int64            `json:"total_samples"`
	Share        float64          `json:"share"`
	SelfShare    float64          `json:"self_share"`
	SelfNs       int64            `json:"self_ns"`
	TotalNs      int64            `json:"total_ns"`
	States       map[string]int64 `json:"states"` // self samples by state (tracer.PyState names)
}

// PyStageDoc is one stage's samples: all threads', and the step thread's
// by state, its sampled time per step (ns) and the share of it running
// Python bytecode.
type PyStageDoc struct {
	Stage       string           `json:"stage"`
	Samples     int64            `json:"samples"`
	StepSamples int64            `json:"step_thread_samples"`
	NsPerStep   int64            `json:"ns_per_step"`
	PythonShare float64          `json:"python_share"`
	States      map[string]int64 `json:"states"`
}

func statesMap(s [tracer.PyStates]int64) map[string]int64 {
	m := make(map[string]int64, tracer.PyStates)
	for i, v := range s {
		m[tracer.PyState(i).String()] = v
	}
	return m
}

// pythonDoc is p as JSON (nil for nil).
func pythonDoc(p *attrib.PyProfile, topN int) *PythonDoc {
	if p == nil {
		return nil
	}
	d := &PythonDoc{Samples: p.Samples, StepSamples: p.StepSamples, WeightNs: p.WeightNs, PeriodNs: p.PeriodNs, Steps: p.Steps,
		Dropped: p.Dropped, BeforeSteps: p.BeforeSteps, Functions: []PyFunctionDoc{}, Stages: []PyStageDoc{}}
	add := func(stage string) {
		for _, r := range top(p.Functions(stage), topN) {
			d.Functions = append(d.Functions, PyFunctionDoc{Function: r.Function, File: r.File, Line: r.Line, Stage: r.Stage,
				SelfSamples: r.Self, TotalSamples: r.Total, Share: r.Share, SelfShare: r.SelfShare, SelfNs: r.SelfNs, TotalNs: r.TotalNs,
				States: statesMap(r.States)})
		}
	}
	add("")
	rows := p.StageRows()
	for _, r := range rows {
		add(r.Stage)
		d.Stages = append(d.Stages, PyStageDoc{Stage: r.Stage, Samples: r.Samples, StepSamples: r.StepSamples, NsPerStep: r.NsPerStep,
			PythonShare: r.PythonShare(), States: statesMap(r.States)})
	}
	return d
}

// pyStateCell renders a function's self samples by state as its
// non-Python part: "torch 80%", "dataloader 20% sleep 5%"; "" when all
// ran Python bytecode.
func pyStateCell(st [tracer.PyStates]int64, self int64) string {
	if self == 0 {
		return ""
	}
	var parts []string
	for i := 1; i < tracer.PyStates; i++ {
		if st[i] > 0 {
			parts = append(parts, tracer.PyState(i).String()+" "+Percent(float64(st[i])/float64(self)))
		}
	}
	return strings.Join(parts, " ")
}

// pythonGrids returns the function grid of the whole step and the stage
// grid. human: formatted cells (table, md), else raw (csv).
func pythonGrids(p *attrib.PyProfile, human bool, topN int) (funcs, stages grid) {
	pct := func(x float64) string {
		if human {
			return Percent(x)
		}
		return strconv.FormatFloat(x, 'f', 6, 64)
	}
	ns := func(v int64) string {
		if human {
			return Duration(v)
		}
		return strconv.FormatInt(v, 10)
	}
	num := func(v int64) string { return strconv.FormatInt(v, 10) }
	perStep := func(v int64) int64 {
		if p.Steps > 0 {
			return v / p.Steps
		}
		return v
	}
	if human {
		funcs.header = []string{"function", "where", "self", "self %", "total", "total %", "self/step", "inside"}
		for _, r := range top(p.Functions(""), topN) {
			funcs.rows = append(funcs.rows, []string{r.Function, r.Where(), num(r.Self), pct(r.SelfShare), num(r.Total), pct(r.Share),
				ns(perStep(r.SelfNs)), pyStateCell(r.States, r.Self)})
		}
		funcs.right = []bool{false, false, true, true, true, true, true, false}
		stages.header = []string{"stage", "samples", "step thread/step", "python", "torch", "native", "waiting"} // python: bytecode (native: C calls outside torch)
		for _, r := range p.StageRows() {
			n := float64(max(r.StepSamples, 1))
			wait := r.States[tracer.PySleep] + r.States[tracer.PyLock] + r.States[tracer.PyQueue] + r.States[tracer.PyLoader]
			stages.rows = append(stages.rows, []string{r.Stage, num(r.Samples), ns(r.NsPerStep), pct(float64(r.States[tracer.PyRunning]) / n),
				pct(float64(r.States[tracer.PyTorch]) / n), pct(float64(r.States[tracer.PyNative]) / n), pct(float64(wait) / n)})
		}
		stages.right = []bool{false, true, true, true, true, true, true}
		return funcs, stages
	}
	funcs.header = []string{"function", "file", "line", "stage", "self_samples", "total_samples", "self_share", "share", "self_ns", "total_ns"}
	scopes := []string{""}
	for _, r := range p.StageRows() {
		scopes = append(scopes, r.Stage)
	}
	for _, sc := range scopes {
		for _, r := range top(p.Functions(sc), topN) {
			funcs.rows = append(funcs.rows, []string{r.Function, r.File, num(int64(r.Line)), r.Stage, num(r.Self), num(r.Total), pct(r.SelfShare), pct(r.Share), ns(r.SelfNs), ns(r.TotalNs)})
		}
	}
	return funcs, stages
}

// pythonNote is the line under the tables: samples, rate, steps, drops.
func pythonNote(p *attrib.PyProfile) string {
	s := fmt.Sprintf("%d Python samples", p.Samples)
	if p.PeriodNs > 0 {
		s += fmt.Sprintf(" at %.0f Hz", 1e9/float64(p.PeriodNs))
	}
	if p.Steps > 0 {
		s += fmt.Sprintf(" over %d steps (%d before the first step left out)", p.Steps, p.BeforeSteps)
	}
	s += "; self: the function was the innermost frame, total: it was on the stack; inside: what its self samples were executing besides Python bytecode"
	if p.Dropped > 0 {
		s += fmt.Sprintf("; %d samples dropped by the agent (its queue was full)", p.Dropped)
	}
	return s
}

// writePython writes the Python view (report --by python) in o.Format.
func writePython(w io.Writer, s *attrib.Snapshot, o Options) error {
	p := s.Python
	switch o.Format {
	case "json":
		return writeJSON(w, s, o)
	case "csv":
		if p == nil {
			p = &attrib.PyProfile{} // the header only
		}
		g, _ := pythonGrids(p, false, o.Top)
		return writeCSVGrid(w, g)
	}
	md := o.Format == "md"
	var b strings.Builder
	var hb strings.Builder
	if err := header(&hb, s, ""); err != nil {
		return err
	}
	if md {
		for _, l := range strings.Split(strings.TrimRight(hb.String(), "\n"), "\n") {
			b.WriteString(l + "  \n")
		}
	} else {
		b.WriteString(hb.String())
	}
	if p == nil {
		if md {
			fmt.Fprintf(&b, "\n_%s_\n", escape.Markdown(NoPythonText))
		} else {
			fmt.Fprintf(&b, "\n%s\n", NoPythonText)
		}
		_, err := io.WriteString(w, b.String())
		return err
	}
	funcs, stages := pythonGrids(p, true, o.Top)
	section := func(title string, g grid) {
		if md {
			fmt.Fprintf(&b, "\n**%s**\n\n", escape.Markdown(title))
			writeMDGrid(&b, g)
		} else {
			fmt.Fprintf(&b, "\n%s\n", title)
			writeTextGrid(&b, g)
		}
	}
	title := "Python functions, whole step"
	if p.Steps == 0 {
		title = "Python functions, whole run (no steps)"
	}
	section(title, funcs)
	if n := len(p.Functions("")) - len(funcs.rows); n > 0 {
		if md {
			fmt.Fprintf(&b, "\n_%d more rows not shown_\n", n)
		} else {
			fmt.Fprintf(&b, "… %d more rows (--top 0 shows all)\n", n)
		}
	}
	section("Python per stage (step thread: its sampled time per step, and what it was doing)", stages)
	if md {
		fmt.Fprintf(&b, "\n_%s_\n", escape.Markdown(pythonNote(p)))
	} else {
		b.WriteString(pythonNote(p) + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteFolded writes the Python samples of p (of o.Stage; "" every stage)
// as folded stacks, one line per distinct stack: frames outermost first
// as "function (file:line)" joined by ";", a space, the sample count —
// the input of flamegraph.pl and speedscope. Semicolons and line breaks
// in names become "_" and " ". Errors: ErrOption when p is nil or the
// stage has no samples; write errors.
func WriteFolded(w io.Writer, p *attrib.PyProfile, o Options) error {
	stage := o.Stage
	if p == nil {
		return fmt.Errorf("%w: %s", ErrOption, NoPythonText)
	}
	lines := p.Folded(stage)
	if len(lines) == 0 {
		var names []string
		for _, r := range p.StageRows() {
			names = append(names, r.Stage)
		}
		return fmt.Errorf("%w: no Python samples in stage %q (stages with samples: %s)", ErrOption, stage, strings.Join(names, ", "))
	}
	clean := strings.NewReplacer(";", "_", "\n", " ", "\r", " ")
	var b strings.Builder
	for _, l := range lines {
		b.Reset()
		for i, f := range l.Frames {
			if i > 0 {
				b.WriteByte(';')
			}
			b.WriteString(clean.Replace(fmt.Sprintf("%s (%s:%d)", f.Function, f.File, f.Line)))
		}
		fmt.Fprintf(&b, " %d\n", l.Samples)
		if _, err := io.WriteString(w, b.String()); err != nil {
			return err
		}
	}
	return nil
}

// writePythonArms prints, per comparison arm, where its Python time went
// (livestate.ArmPython): the step thread's sampled time a step, its
// shares in Python, torch and waits, and the heaviest functions.
func writePythonArms(b *strings.Builder, arms []livestate.ArmPython, md bool) {
	if len(arms) == 0 {
		return
	}
	g := grid{header: []string{"arm", "samples", "step thread/step", "python", "torch", "waiting", "top functions (self share)"},
		right: []bool{false, true, true, true, true, true, false}}
	for _, a := range arms {
		var top []string
		for _, f := range a.Functions {
			if len(top) == 3 {
				break
			}
			top = append(top, fmt.Sprintf("%s %s %s", f.Function, f.Where, Percent(f.SelfShare)))
		}
		g.rows = append(g.rows, []string{a.Arm, strconv.FormatInt(a.Samples, 10), Duration(a.StepNs), Percent(a.PythonShare), Percent(a.TorchShare),
			Percent(a.WaitShare), strings.Join(top, ", ")})
	}
	if md {
		b.WriteString("\n**Python per arm** (the Python agent's stack samples of the counted steps)\n\n")
		writeMDGrid(b, g)
		return
	}
	b.WriteString("\nPython per arm (the Python agent's stack samples of the counted steps)\n")
	writeTextGrid(b, g)
}
