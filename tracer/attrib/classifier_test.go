package attrib

import (
	"path/filepath"
	"testing"

	"github.com/rlktop/rlktop/internal/testutil"
	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/tracefile"
)

// The memoised Classifier gives every GPU op of real traces the category
// of the slow path, Rules.Classify with the op's context names.
func TestClassifierMatchesClassify(t *testing.T) {
	dir := filepath.Join(testutil.SharedTraces(t), "kineto")
	for _, f := range []string{"hta_diff_control_a100.json.gz", "tracelens_mi300_qwen15_aotriton.json.gz"} {
		tr, err := tracefile.Open(filepath.Join(dir, f), tracefile.Options{})
		if err != nil {
			t.Fatal(err)
		}
		r := DefaultRules()
		c := NewClassifier(r, tr.Strings, tr.Contexts)
		n := 0
		for i := range tr.Events {
			e := &tr.Events[i]
			if e.Kind != tracer.KindKernel && e.Kind != tracer.KindMemcpy && e.Kind != tracer.KindMemset {
				continue
			}
			var l Launch
			if e.Ctx != 0 {
				l = LaunchOf(tr.Strings, &tr.Contexts[e.Ctx])
			}
			want := r.Classify(e.Kind, tr.Strings.Get(e.Name), l)
			if got := c.Category(e.Kind, e.Name, e.Ctx); got != want {
				t.Fatalf("%s: %s %q: Classifier %q, Classify %q", f, e.Kind, tr.Strings.Get(e.Name), got, want)
			}
			n++
		}
		if n == 0 {
			t.Fatalf("%s: no GPU op", f)
		}
	}
}
