package tracefile

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/rlktop/rlktop/internal/testutil"
	"github.com/rlktop/rlktop/tracer"
)

// readWith reads raw as Read does with the given workers and chunk size.
func readWith(t *testing.T, raw []byte, name string, workers, chunk int) (*tracer.Trace, error) {
	t.Helper()
	return Read(bytes.NewReader(raw), name, int64(len(raw)), Options{workers: workers, chunk: chunk})
}

// The parallel reading of every shared Kineto trace, with chunks from
// a few hundred bytes (cuts inside events and strings, at event starts
// and between them) to the default, gives the trace the one-pass reading
// gives: events, names, counters, warnings, metadata, errors.
func TestKinetoParallelSame(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(testutil.SharedTraces(t), "kineto", "*.json*"))
	if len(files) == 0 {
		t.Skip("no shared Kineto traces")
	}
	for _, p := range files {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Ext(p) == ".gz" {
			raw = gunzipFile(t, p)
		}
		want, werr := readWith(t, raw, p, 1, 0)
		for _, chunk := range []int{300, 4093, 65536, 1 << 20, 0} {
			if chunk > 0 && len(raw)/chunk > 20000 {
				continue
			}
			got, gerr := readWith(t, raw, p, 3, chunk)
			if (gerr == nil) != (werr == nil) || gerr != nil && gerr.Error() != werr.Error() {
				t.Errorf("%s chunk %d: error %v, one pass %v", filepath.Base(p), chunk, gerr, werr)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s chunk %d: trace differs from the one-pass reading", filepath.Base(p), chunk)
			}
		}
	}
}

// Damage read in parallel costs what it costs read in one pass: the same
// error (offset, message), the same partial trace, for a trace cut at
// several points (inside the array, inside an event, inside a string)
// and with bytes overwritten by garbage, a bare value or a stray bracket.
func TestKinetoParallelDamage(t *testing.T) {
	raw := gunzipFile(t, filepath.Join(testutil.SharedTraces(t), "kineto", "hta_sampled_rank0.json.gz"))
	var cases []struct {
		name string
		in   []byte
	}
	add := func(name string, in []byte) {
		cases = append(cases, struct {
			name string
			in   []byte
		}{name, in})
	}
	for _, f := range []float64{0.001, 0.3, 0.5001, 0.77, 0.999} {
		n := int(float64(len(raw)) * f)
		add(fmt.Sprintf("cut at %d", n), raw[:n])
		for _, junk := range []string{"@@@", "]", "}", `"x":1`, "{", ",,", "\\"} {
			d := slices.Clone(raw)
			copy(d[n:], junk)
			add(fmt.Sprintf("%q at %d", junk, n), d)
		}
	}
	for _, c := range cases {
		want, werr := readWith(t, c.in, "d.json", 1, 0)
		for _, chunk := range []int{1000, 30011} {
			got, gerr := readWith(t, c.in, "d.json", 2, chunk)
			if fmt.Sprint(gerr) != fmt.Sprint(werr) {
				t.Errorf("%s chunk %d: error\n%v\none pass\n%v", c.name, chunk, gerr, werr)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s chunk %d: trace differs from the one-pass reading", c.name, chunk)
			}
		}
	}
}

// OpenStream's windows and trace are the same read in parallel.
func TestKinetoParallelStream(t *testing.T) {
	p := filepath.Join(testutil.SharedTraces(t), "kineto", "hta_diff_test_v100.json.gz")
	read := func(workers, chunk int) (*tracer.Trace, []Capture, error) {
		var ws []Capture
		tr, err := OpenStream(p, Options{workers: workers, chunk: chunk}, func(w *Capture) error {
			c := *w
			c.Events, c.Contexts, c.Strings = slices.Clone(w.Events), slices.Clone(w.Contexts), nil
			ws = append(ws, c)
			return nil
		})
		return tr, ws, err
	}
	wt, ww, werr := read(1, 0)
	if werr != nil || len(ww) == 0 {
		t.Fatalf("one pass: %d windows, %v", len(ww), werr)
	}
	for _, chunk := range []int{5000, 1 << 20} {
		gt, gw, gerr := read(2, chunk)
		if fmt.Sprint(gerr) != fmt.Sprint(werr) || !reflect.DeepEqual(gw, ww) || !reflect.DeepEqual(gt, wt) {
			t.Errorf("chunk %d: %d windows (%v), one pass %d", chunk, len(gw), gerr, len(ww))
		}
	}
}
