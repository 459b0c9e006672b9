package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/internal/testutil"
)

// TestReportMergesJSONReports is the merge: the JSON reports
// of real ranks' traces (hta_diff_control_a100 rank 3 and
// hta_diff_test_v100 rank 1, which share steps 1009–1014; then also
// hta_sampled_rank0 rank 0, whose steps they do not share), given to
// `rlktop report`, give the report of the traces read together in every
// field the JSON reports carry:
// totals, kernel and transfer rows (count, total, min, max, mean, share,
// stage, launch context), categories, stages, steps per source, sources
// and step spreads. What needs the events is left out and said: matched
// collectives (late rank, waits) are empty, and the percentiles of a
// kernel found in several reports are approximate, checked to lie
// between the smallest and largest of the reports' own (the median of a
// union lies between the parts' medians) and flagged percentiles_approx,
// and its stage (where most of its time was) is one of the reports'.
func TestReportMergesJSONReports(t *testing.T) {
	dir := filepath.Join(testutil.SharedTraces(t), "kineto")
	t.Run("two ranks, common steps", func(t *testing.T) {
		checkMergedReports(t, dir, 6, "hta_diff_control_a100", "hta_diff_test_v100")
	})
	t.Run("three ranks", func(t *testing.T) {
		checkMergedReports(t, dir, 0, "hta_diff_control_a100", "hta_diff_test_v100", "hta_sampled_rank0")
	})
}

// checkMergedReports compares the report of the JSON reports of names
// with the report of their traces (see TestReportMergesJSONReports);
// spreads is the number of step spreads the traces give together.
func checkMergedReports(t *testing.T, dir string, spreads int, names ...string) {
	var traces, reps []string
	tmp := t.TempDir()
	for _, name := range names {
		tr := filepath.Join(dir, name+".json.gz")
		out, err := runReport(t, tr, "--format", "json")
		if err != nil {
			t.Fatal(err)
		}
		rep := filepath.Join(tmp, name+".report.json")
		if err := os.WriteFile(rep, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		traces, reps = append(traces, tr), append(reps, rep)
	}
	decode := func(args ...string) map[string]any {
		out, err := runReport(t, append(args, "--format", "json")...)
		if err != nil {
			t.Fatalf("report %v: %v\n%s", args, err, out)
		}
		var d map[string]any
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	together, merged := decode(traces...), decode(reps...)
	var parts []map[string]any
	for _, r := range reps {
		parts = append(parts, decode(r))
	}
	if sp, _ := together["step_spreads"].([]any); len(sp) != spreads {
		t.Fatalf("the traces together have %d step spreads, want %d", len(sp), spreads)
	}
	// What only the events give.
	for _, d := range []map[string]any{together, merged} {
		delete(d, "warnings")
		delete(d, "collectives_matched")
		delete(d, "collectives_unmatched")
		for _, s := range d["sources"].([]any) {
			delete(s.(map[string]any), "coll_wait_ns")
			delete(s.(map[string]any), "last_arrivals")
		}
		sp, _ := d["step_spreads"].([]any)
		for _, s := range sp {
			for _, k := range []string{"late_rank", "collectives", "wait_ns"} {
				delete(s.(map[string]any), k)
			}
		}
	}
	// Percentiles: exact for a kernel in one report, else bounded.
	for _, view := range []string{"kernels", "transfers"} {
		m, g := merged[view].([]any), together[view].([]any)
		if len(m) != len(g) {
			t.Fatalf("%s: %d merged rows, %d together", view, len(m), len(g))
		}
		approx := 0
		for i := range m {
			mr, gr := m[i].(map[string]any), g[i].(map[string]any)
			var seen []map[string]any
			for _, p := range parts {
				for _, r := range p[view].([]any) {
					r := r.(map[string]any)
					if r["name"] == mr["name"] && r["category"] == mr["category"] && r["kind"] == mr["kind"] {
						seen = append(seen, r)
					}
				}
			}
			if len(seen) > 1 {
				approx++
				if mr["percentiles_approx"] != true {
					t.Errorf("%s %v: in %d reports but not flagged percentiles_approx", view, mr["name"], len(seen))
				}
				for _, q := range []string{"p50_ns", "p99_ns"} {
					lo, hi := seen[0][q].(float64), seen[0][q].(float64)
					for _, r := range seen {
						lo, hi = min(lo, r[q].(float64)), max(hi, r[q].(float64))
					}
					if v := mr[q].(float64); v < lo || v > hi {
						t.Errorf("%s %v: merged %s %v outside the reports' [%v, %v]", view, mr["name"], q, v, lo, hi)
					}
				}
				// The stage (most of the kernel's time) is one of the
				// reports' stages: each report names only its own top one.
				found := false
				for _, r := range seen {
					found = found || r["stage"] == mr["stage"]
				}
				if !found {
					t.Errorf("%s %v: merged stage %q is none of the reports' stages", view, mr["name"], mr["stage"])
				}
				for _, r := range []map[string]any{mr, gr} {
					delete(r, "stage")
					delete(r, "p50_ns")
					delete(r, "p99_ns")
					delete(r, "percentiles_approx")
				}
			}
		}
		if approx == 0 {
			t.Errorf("%s: no row in several reports; the percentile rule is untested", view)
		}
	}
	for k := range together {
		if a, b := together[k], merged[k]; !reflect.DeepEqual(a, b) {
			if la, ok := a.([]any); ok {
				if lb, ok := b.([]any); ok && len(la) == len(lb) {
					for i := range la {
						if !reflect.DeepEqual(la[i], lb[i]) {
							t.Errorf("%s[%d] differs\ntraces together %v\nmerged reports  %v", k, i, la[i], lb[i])
						}
					}
					continue
				}
			}
			a, _ := json.Marshal(together[k])
			b, _ := json.Marshal(merged[k])
			t.Errorf("%s differs\ntraces together %.800s\nmerged reports  %.800s", k, a, b)
		}
	}
	for k := range merged {
		if _, ok := together[k]; !ok {
			t.Errorf("merged report has %q, the traces' report has not", k)
		}
	}
	// The table says what the merge could not give.
	out, err := runReport(t, reps...)
	if err != nil || !strings.Contains(out, "collectives are not matched across sources") {
		t.Errorf("report table of merged JSON reports: %v\n%s", err, out)
	}
	// Mixing reports and traces is refused with a clear error.
	if _, err := runReport(t, reps[0], traces[1]); err == nil || !strings.Contains(err.Error(), "JSON reports only") {
		t.Errorf("report JSON + trace: %v, want an error asking for one kind", err)
	}
}

// TestReportMergesCPUOnlyReports: JSON reports of traces without GPU work
// (their kernel rows are CPU operators) merge into a report that says CPU
// operators too, as reporting the traces together does (the
// merge of two DDP ranks' reports once said "kernels: 2700").
func TestReportMergesCPUOnlyReports(t *testing.T) {
	src := filepath.Join(testutil.SharedTraces(t), "kineto", "hta_cpu_only.json.gz")
	tmp := t.TempDir()
	var docs []string
	for _, n := range []string{"a.json", "b.json"} {
		p := filepath.Join(tmp, n)
		if err := os.WriteFile(p, reportJSON(t, src), 0o644); err != nil {
			t.Fatal(err)
		}
		docs = append(docs, p)
	}
	whole, err := runReport(t, src, src)
	if err != nil {
		t.Fatal(err)
	}
	merged, err := runReport(t, docs...)
	if err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"traces together": whole, "merged JSON reports": merged} {
		if !strings.Contains(out, "CPU operators") || strings.Contains(out, "kernels: ") {
			t.Errorf("%s: want CPU operators, not kernels:\n%s", name, out)
		}
	}
}
