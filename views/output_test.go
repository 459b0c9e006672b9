package views_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"
	"github.com/rlktop/rlktop/tracer/livestate"
	"github.com/rlktop/rlktop/views"
)

// outputFixture: a training log as a PyTorch script writes it — loss on
// stdout, warnings on stderr, a notice from rlktop, an escape sequence
// that must be shown escaped, and a progress line still being written.
func outputFixture() (lines, partial []livestate.OutputLine) {
	texts := []struct {
		s    livestate.Stream
		text string
	}{
		{livestate.Stdout, "epoch 0 step 10 loss 2.3026 lr 3.0e-04 58.1 samples/s"},
		{livestate.Stderr, "UserWarning: TypedStorage is deprecated"},
		{livestate.Stdout, "epoch 0 step 20 loss 2.1187 lr 3.0e-04 61.4 samples/s"},
		{livestate.Notice, "rlktop: 12 KiB of output skipped (the pane was behind)"},
		{livestate.Stdout, "epoch 0 step 30 loss 1.9871 lr 3.0e-04 60.9 samples/s \x1b[31mred\x1b[0m"},
		{livestate.Stderr, "step 30: 412.0 ms, legal 26, policy loss 0.8044, value loss 0.5184 (update at step 27)"},
	}
	for i, t := range texts {
		lines = append(lines, livestate.OutputLine{Seq: uint64(i + 1), Stream: t.s, Text: t.text})
	}
	partial = []livestate.OutputLine{{Stream: livestate.Stdout, Text: "evaluating: 40%|████      | 4/10"}}
	return lines, partial
}

func TestOutputView(t *testing.T) {
	cases := []struct {
		name string
		h    int
		keys []string
	}{
		{"all", 10, nil},
		{"filter-loss", 10, []string{"/", "l", "o", "s", "s", " ", "[0-9]", "enter"}},
		{"stderr", 10, []string{"s", "s"}},
		{"scrolled", 5, []string{"up", "up"}},
	}
	for _, c := range cases {
		for _, w := range widths {
			t.Run(fmt.Sprintf("%s/w%d", c.name, w), func(t *testing.T) {
				v := views.NewOutput(styles())
				v.SetSize(w, c.h)
				v.SetFocused(true)
				v.Append(outputFixture())
				press(v, c.keys...)
				golden.RequireEqual(t, render(t, v.View(), w, c.h))
			})
		}
	}
}

// TestOutputFilterFollowDrop: the filter keeps the lines that match (by
// hand: the three stdout "loss" lines and the stderr step line); a Seq
// gap counts as dropped lines; a line already seen is not added twice;
// scrolling up stops following, End follows again.
func TestOutputFilterFollowDrop(t *testing.T) {
	v := views.NewOutput(styles())
	v.SetSize(80, 5)
	lines, partial := outputFixture()
	v.Append(lines, partial)
	v.SetFilter("loss [0-9]")
	if got := len(v.Lines()); got != 4 {
		t.Errorf("filter kept %d lines, want 4", got)
	}
	v.SetFilter("")
	v.Append([]livestate.OutputLine{lines[5], {Seq: 10, Stream: livestate.Stdout, Text: "after a gap"}}, nil)
	if got := len(v.Lines()); got != 7 {
		t.Errorf("%d lines, want 7 (6 + 1; the repeated Seq 6 ignored)", got)
	}
	if info := v.Info(); !strings.Contains(info, "3 earlier dropped") {
		t.Errorf("info %q, want 3 dropped (Seq 7–9)", info)
	}
	press(v, "up")
	if v.Following() {
		t.Error("still following after up")
	}
	press(v, "end")
	if !v.Following() {
		t.Error("not following after End")
	}
	// Bounded: OutputMaxLines + 10 lines keep the newest OutputMaxLines.
	var many []livestate.OutputLine
	for i := 0; i < views.OutputMaxLines+10; i++ {
		many = append(many, livestate.OutputLine{Seq: uint64(100 + i), Stream: livestate.Stdout, Text: fmt.Sprint("line ", i)})
	}
	v.Append(many, nil)
	got := v.Lines()
	if len(got) != views.OutputMaxLines || got[len(got)-1].Text != fmt.Sprint("line ", views.OutputMaxLines+9) {
		t.Errorf("%d lines, last %q", len(got), got[len(got)-1].Text)
	}
}

// TestOutputWrapsWords (log lines were cut at 80 columns): a
// 150-character log line shows in full at 80 columns, over two rows, and
// every word of it is on the screen whole (none cut at a row's end); while
// following, the newest line's last row is the bottom row of the lines.
func TestOutputWrapsWords(t *testing.T) {
	text := "step 40: 398.5 ms, legal 31, policy loss 0.7713, value loss 0.4920 (update at step 37), " +
		"throughput 2.51 steps/s, grad norm 1.0394, entropy 2.8811"
	v := views.NewOutput(styles())
	v.SetSize(80, 4)
	v.Append([]livestate.OutputLine{{Seq: 1, Stream: livestate.Stdout, Text: "first line"},
		{Seq: 2, Stream: livestate.Stdout, Text: text}}, nil)
	out := render(t, v.View(), 80, 4)
	rows := strings.Split(out, "\n")
	var words []string
	for _, r := range rows {
		words = append(words, strings.Fields(strings.ReplaceAll(r, "│", " "))...)
	}
	for _, w := range strings.Fields(text) {
		found := false
		for _, got := range words {
			if got == w {
				found = true
			}
		}
		if !found {
			t.Errorf("word %q not shown whole:\n%s", w, out)
		}
	}
	if !strings.Contains(rows[2], "entropy 2.8811") {
		t.Errorf("row 2 = %q, want the end of the newest line", rows[2])
	}
}
