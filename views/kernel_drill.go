package views

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/rlktop/rlktop/internal/escape"
	"github.com/rlktop/rlktop/tracer/attrib"
)

// drillGroup is one line of the kernel drill-down: launches sharing a
// launch context, a stage or a step.
type drillGroup struct {
	key     string
	step    int64
	count   int64
	totalNs int64
}

// drillData groups the selected kernel's launches by launch context
// (operators › ranges), by stage and by step, each with the launch count
// and GPU time: from the aggregation of every launch (KernelRow.Launches;
// steps: the newest attrib.MaxLaunchSteps, then the older ones and those
// outside every step summed), else from the launches the timeline holds.
func (k *Kernels) drillData(r *attrib.KernelRow) (ctx, stages, steps []drillGroup, n int64) {
	if l := r.Launches; l != nil {
		conv := func(gs []attrib.LaunchGroup) []drillGroup {
			out := make([]drillGroup, 0, len(gs))
			for _, g := range gs {
				key := g.Key
				if key == "" {
					key = "(no operator or range recorded)"
				}
				out = append(out, drillGroup{key: key, count: g.Count, totalNs: g.TotalNs})
			}
			return out
		}
		for _, s := range l.Steps {
			steps = append(steps, drillGroup{step: s.Step, count: s.Count, totalNs: s.TotalNs})
		}
		if l.OlderSteps.Count > 0 {
			steps = append(steps, drillGroup{step: olderSteps, count: l.OlderSteps.Count, totalNs: l.OlderSteps.TotalNs})
		}
		if l.NoStep.Count > 0 {
			steps = append(steps, drillGroup{step: -1, count: l.NoStep.Count, totalNs: l.NoStep.TotalNs})
		}
		return conv(l.Contexts), conv(l.Stages), steps, r.Count
	}
	if k.tl == nil {
		return nil, nil, nil, 0
	}
	byCtx := map[string]*drillGroup{}
	byStage := map[string]*drillGroup{}
	byStep := map[int64]*drillGroup{}
	add := func(m map[string]*drillGroup, key string, o *attrib.TimelineOp) {
		g := m[key]
		if g == nil {
			g = &drillGroup{key: key}
			m[key] = g
		}
		g.count++
		g.totalNs += o.DurNs
	}
	for i := range k.tl.Ops {
		o := &k.tl.Ops[i]
		if o.Name != r.Name || o.Category != r.Category || o.Kind != r.Kind {
			continue
		}
		n++
		c := strings.Join(append(append([]string{}, o.Ops...), o.Ranges...), " › ")
		if c == "" {
			c = "(no operator or range recorded)"
		}
		add(byCtx, c, o)
		st := o.Stage
		if st == "" {
			st = attrib.StageNone
		}
		add(byStage, st, o)
		g := byStep[o.Step]
		if g == nil {
			g = &drillGroup{step: o.Step}
			byStep[o.Step] = g
		}
		g.count++
		g.totalNs += o.DurNs
	}
	flat := func(m map[string]*drillGroup) []drillGroup {
		var out []drillGroup
		for _, g := range m {
			out = append(out, *g)
		}
		slices.SortFunc(out, func(a, b drillGroup) int { return cmp.Or(cmp.Compare(b.totalNs, a.totalNs), cmp.Compare(a.key, b.key)) })
		return out
	}
	for _, g := range byStep {
		steps = append(steps, *g)
	}
	slices.SortFunc(steps, func(a, b drillGroup) int { return cmp.Compare(b.step, a.step) }) // newest first
	return flat(byCtx), flat(byStage), steps, n
}

// olderSteps marks the drill-down line of launches in steps older than
// the newest attrib.MaxLaunchSteps.
const olderSteps = -2

// drillView draws the drill-down: the kernel's name, then its launch
// contexts, stages and steps with count, time and share of the kernel's
// time on the timeline.
func (k *Kernels) drillView() string {
	st := k.st
	r := k.Selected()
	if r == nil {
		return block([]string{st.Table.Dim.Render("no kernel selected (esc: back)")}, k.w, k.h)
	}
	ctx, stages, steps, n := k.drillData(r)
	head := []string{
		st.Detail.Label.Render("kernel ") + st.Detail.Name.Render(ansi.Truncate(escape.Control(r.Name), max(k.w-7, 1), "…")),
		st.Detail.Label.Render(fmt.Sprintf("category %s · %s launches, %s in all", escape.Control(r.Category), FormatCount(r.Count), FormatNs(r.TotalNs))),
	}
	var body []string
	if n == 0 {
		body = append(body, st.Table.Dim.Render("no launches of this kernel on the timeline; its first launch was under:"),
			" "+fitLeftCut(strings.Join(append(append([]string{}, r.Ops...), r.Ranges...), " › "), k.w-1))
	} else {
		var total int64
		for _, g := range ctx {
			total += g.totalNs
		}
		where := "on the timeline"
		if r.Launches != nil {
			where = "in all"
		}
		body = append(body, st.Table.Dim.Render(fmt.Sprintf("%s launches %s (%s), grouped:", FormatCount(n), where, FormatNs(total))))
		const cw, tw, sw = 8, 9, 6
		nw := max(k.w-1-cw-1-tw-1-sw-1, 8)
		section := func(title string, gs []drillGroup, label func(g drillGroup) string) {
			body = append(body, st.Table.Header.Render(" "+fit(title, nw)+" "+fitRight("count", cw)+" "+fitRight("time", tw)+" "+fitRight("share", sw)))
			for _, g := range gs {
				share := 0.0
				if total > 0 {
					share = float64(g.totalNs) / float64(total)
				}
				body = append(body, " "+fitLeftCut(label(g), nw)+" "+fitRight(FormatCount(g.count), cw)+" "+
					fitRight(FormatNs(g.totalNs), tw)+" "+fitRight(FormatShare(share), sw))
			}
		}
		section("launch context (operators › ranges)", ctx, func(g drillGroup) string { return g.key })
		section("stage", stages, func(g drillGroup) string { return g.key })
		section("step (newest first)", steps, func(g drillGroup) string {
			switch g.step {
			case olderSteps:
				return fmt.Sprintf("older steps (before the newest %d)", attrib.MaxLaunchSteps)
			case -1:
				return "(no step)"
			}
			return fmt.Sprint(g.step)
		})
	}
	page := max(k.h-len(head), 1)
	from := min(max(k.dscroll, 0), max(len(body)-page, 0))
	to := min(from+page, len(body))
	return block(append(head, body[from:to]...), k.w, k.h)
}
