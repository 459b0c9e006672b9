package views_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/views"
)

// sampleFindings are findings as attrib.EvaluateFindings makes them (the
// built-in loop on the math path; figures of a real profile run).
func sampleFindings() []attrib.Finding {
	return []attrib.Finding{
		{ID: "attention-math-fallback", Title: "attention runs on the math fallback", Kind: attrib.FindMathAttention,
			Share: 0.336, ShareOf: "GPU time",
			Evidence: []string{"math-path attention kernels: 429 ms of 1.28 s GPU time (33.6%), 71.5 ms per step over 6 steps",
				"fused attention kernels: 0 ns; attention in all: 647 ms"},
			Top:    []string{"attn_math_softmax 201 ms (66 calls)", "attn_math_qk 130 ms (66 calls)", "attn_math_pv 98.1 ms (66 calls)"},
			Try:    "switch scaled_dot_product_attention to a fused backend: sdpa=flash, efficient or cudnn",
			Flag:   &attrib.FindingFlag{Key: "attention", Value: "fused", Current: "math"},
			Source: "a training report: 'the math attention fallback costing 136 ms per step'"},
		{ID: "dominant-category", Title: "one category owns most of the GPU time", Kind: attrib.FindDominant,
			Share: 0.507, ShareOf: "GPU time",
			Evidence: []string{`category "attention": 647 ms of 1.28 s GPU time (50.7%), 22 ops, 108 ms per step`},
			Top:      []string{"attn_math_softmax 201 ms (31.1% of the category)"},
			Try:      "work on this category first", Source: "a training report: 'forward at 96%'"},
	}
}

func TestFindingsView(t *testing.T) {
	for _, w := range widths {
		for _, c := range []struct {
			name  string
			keys  []string
			tried bool
		}{{"first", nil, false}, {"second", []string{"down"}, false}, {"tried", nil, true}} {
			t.Run(fmt.Sprintf("%s_w%d", c.name, w), func(t *testing.T) {
				v := views.NewFindings(styles())
				v.SetSize(w, 16)
				v.SetFocused(true)
				v.SetFindings(sampleFindings(), "")
				if c.tried {
					v.SetTried("attention-math-fallback", "tried attention=fused: step 0.61× [0.46, 0.89] faster, attention 0.64×, outputs max |Δ| 1.2e-06, not bitwise")
				}
				press(v, c.keys...)
				golden.RequireEqual(t, render(t, v.View(), w, 16))
			})
		}
	}
	v := views.NewFindings(styles())
	v.SetSize(80, 6)
	v.SetFindings(nil, "")
	golden.RequireEqual(t, render(t, v.View(), 80, 6))
}

// TestFindingsEnter: enter on a finding with a flag asks the root to test
// it (TryMsg with the finding's id); on one without, a status line.
func TestFindingsEnter(t *testing.T) {
	v := views.NewFindings(styles())
	v.SetSize(80, 16)
	v.SetFocused(true)
	v.SetFindings(sampleFindings(), "")
	cmd := v.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	if cmd == nil {
		t.Fatal("enter: no command")
	}
	if a, ok := cmd().(views.TryMsg); !ok || a.Finding != "attention-math-fallback" {
		t.Errorf("enter: %#v, want try attention-math-fallback", cmd())
	}
	if f := v.Find("attention-math-fallback"); f == nil || f.Flag.Value != "fused" {
		t.Errorf("Find: %+v", f)
	}
	press(v, "down")
	if a, ok := v.Update(tea.KeyPressMsg{Code: tea.KeyEnter})().(views.NoteMsg); !ok || !strings.Contains(a.Text, "no flag to test") {
		t.Errorf("enter on a finding without a flag: %#v, want a status", a)
	}
	// The cursor stays on its finding when the list is re-ranked.
	fs := sampleFindings()
	fs[0], fs[1] = fs[1], fs[0]
	v.SetFindings(fs, "")
	if a, ok := v.Update(tea.KeyPressMsg{Code: tea.KeyEnter})().(views.NoteMsg); !ok {
		t.Errorf("after re-ranking the cursor left dominant-category: %#v", a)
	}
}

// TestFindingsTriedOutlivesFinding: a comparison restarts the live window,
// so the finding it tested drops out of the list until its rule fires
// again; the measured result stays on screen meanwhile (the CI failure of
// TestLiveTUIFindingEnterCompares: "0 findings" right after the result).
func TestFindingsTriedOutlivesFinding(t *testing.T) {
	const line = "tried attention=fused: step 0.61× [0.46, 0.89] faster"
	v := views.NewFindings(styles())
	v.SetSize(80, 12)
	v.SetFindings(sampleFindings(), "")
	v.SetTried("attention-math-fallback", line)
	for _, c := range []struct {
		name string
		fs   []attrib.Finding
		note string
	}{{"none", nil, "no findings yet: waiting for the first steps"}, {"other", sampleFindings()[1:], ""}} {
		v.SetFindings(c.fs, c.note)
		out := render(t, v.View(), 80, 12)
		if !strings.Contains(out, line) || !strings.Contains(out, "tested in this run") {
			t.Errorf("%s: the tested result is gone:\n%s", c.name, out)
		}
	}
	v.SetFindings(sampleFindings(), "")
	if out := render(t, v.View(), 80, 12); strings.Contains(out, "tested in this run") {
		t.Errorf("listed again, the result belongs on its finding only:\n%s", out)
	}
}

// TestFindingsDetailNotCut: a long "try" text wraps with a hanging
// indent and every word of it is on screen (once it showed
// "TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENT…": continuation lines were
// wrapped at the first line's width, then indented past the edge).
func TestFindingsDetailNotCut(t *testing.T) {
	fs := sampleFindings()
	fs[0].Try = "on ROCm set TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL=1 for GPUs whose AOTriton marks them experimental, then compare sdpa=flash against the math path with enough steps per arm to decide"
	v := views.NewFindings(styles())
	v.SetSize(80, 24)
	v.SetFindings(fs, "")
	out := render(t, v.View(), 80, 24)
	if strings.Contains(out, "…") {
		t.Errorf("a line is cut:\n%s", out)
	}
	flat := strings.Join(strings.Fields(out), " ")
	if !strings.Contains(flat, strings.Join(strings.Fields(fs[0].Try), " ")) {
		t.Errorf("the try text is not whole:\n%s", out)
	}
}

// TestFindingsCursorToTopWhenGone: on finding 2 (dominant-category), a new
// list without it (only a third finding, then both back) puts the cursor
// on the first finding, not on the index it had; a list that still holds
// the finding keeps it under the cursor.
func TestFindingsCursorToTopWhenGone(t *testing.T) {
	v := views.NewFindings(styles())
	v.SetSize(80, 20)
	v.SetFocused(true)
	fs := sampleFindings()
	third := attrib.Finding{ID: "idle-gpu", Title: "the GPU is idle", Try: "overlap"}
	cursorOf := func() int { // the number of the row marked ›, 0-based; -1 none
		for _, l := range strings.Split(render(t, v.View(), 80, 20), "\n") {
			if !strings.HasPrefix(l, "›") {
				continue
			}
			for _, w := range strings.Fields(strings.TrimPrefix(l, "›")) {
				if n, err := strconv.Atoi(strings.TrimSuffix(w, ".")); err == nil && strings.HasSuffix(w, ".") {
					return n - 1
				}
			}
		}
		return -1
	}

	v.SetFindings([]attrib.Finding{fs[0], fs[1], third}, "")
	v.Update(tea.KeyPressMsg{Code: tea.KeyDown})
	v.Update(tea.KeyPressMsg{Code: tea.KeyDown})
	if c := cursorOf(); c != 2 {
		t.Fatalf("cursor %d after two downs, want 2", c)
	}
	v.SetFindings([]attrib.Finding{third, fs[0]}, "")
	if c := cursorOf(); c != 0 {
		t.Errorf("the finding under the cursor is still listed at 0: cursor %d", c)
	}
	v.Update(tea.KeyPressMsg{Code: tea.KeyDown})
	v.SetFindings([]attrib.Finding{fs[1], third}, "") // fs[0] gone
	if c := cursorOf(); c != 0 {
		t.Errorf("the finding under the cursor is gone: cursor %d, want 0 (the top)", c)
	}
}

// TestFindingsHelpOffersTestOnlyWithFlag: the help line offers "enter
// test its flag" on the first sample finding (it names attention=fused)
// and not on the second (no flag: enter would only say so).
func TestFindingsHelpOffersTestOnlyWithFlag(t *testing.T) {
	st := views.DefaultStyles()
	f := views.NewFindings(&st)
	f.SetFindings(sampleFindings(), "")
	has := func() bool {
		for _, b := range f.ShortHelp() {
			if b.Help().Desc == "test its flag" {
				return true
			}
		}
		return false
	}
	if !has() {
		t.Error("finding with a flag: enter is not offered")
	}
	f.Update(tea.KeyPressMsg{Code: tea.KeyDown})
	if has() {
		t.Error("finding without a flag: enter is offered")
	}
}

// Two findings that name one flag (the built-in loop's math fallback and
// its attention being memory-bound both offer attention=fused): testing
// it from one shows the result on both, and neither offers enter again.
func TestFindingsTriedSharedFlag(t *testing.T) {
	fs := sampleFindings()
	second := fs[0]
	second.ID, second.Title, second.Kind = "attention-memory-bound", "attention is memory-bound", attrib.FindRooflineBound
	fs = append(fs, second)
	v := views.NewFindings(styles())
	v.SetSize(120, 30)
	v.SetFocused(true)
	v.SetFindings(fs, "")
	line := "tried attention=fused: step 0.73× [0.68, 0.79] faster"
	v.SetTried("attention-math-fallback", line)
	press(v, "down", "down")
	out := v.View()
	if !strings.Contains(out, "attention is memory-bound  [attention-memory-bound]") || !strings.Contains(out, line) || strings.Contains(out, "enter compares") {
		t.Errorf("the second finding of the tested flag does not show the result:\n%s", out)
	}
	if strings.Contains(out, "enter: attention=fused") {
		t.Errorf("a finding whose flag was tested still offers enter:\n%s", out)
	}
}
