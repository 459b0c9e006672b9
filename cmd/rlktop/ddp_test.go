package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/internal/testutil"
	"github.com/rlktop/rlktop/report"
	"github.com/rlktop/rlktop/tracer/attrib"
)

// TestDDPGlooRanks : a real two-rank
// PyTorch DDP job on CPU (gloo), rank 1 slowed on purpose by a 40 ms
// sleep before each backward pass (examples/ddp_gloo.py), writes one
// Kineto trace per rank; `rlktop report --format json` of both must give
// per-rank numbers, step spreads and collective matching equal to
// testdata/ddp_check.py, a standard-library script reading the same
// files by the rules of per-rank attribution. The deliberate slowdown must show
// as rank 1 arriving last and rank 0 waiting for it.
func TestDDPGlooRanks(t *testing.T) {
	r := testutil.NeedTorchRoot(t)
	run := r.Command("python3", r.Dst+"/ddp_gloo.py", "--world", "2", "--steps", "8", "--slow-rank", "1", "--slow-ms", "40",
		"--trace-dir", r.Dst+"/ddp")
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("ddp_gloo.py: %v\n%s", err, tail(string(out), 3000))
	}
	dir := filepath.Join(r.Dir, strings.TrimPrefix(r.Dst, "/"), "ddp")
	files := []string{filepath.Join(dir, "rank0.json"), filepath.Join(dir, "rank1.json")}

	out := reportJSON(t, files...)
	check := exec.Command("python3", "testdata/ddp_check.py", files[0], files[1])
	check.Stderr = os.Stderr
	want, err := check.Output()
	if err != nil {
		t.Fatalf("ddp_check.py: %v", err)
	}
	type doc struct {
		Sources     []map[string]any `json:"sources"`
		StepSpreads []map[string]any `json:"step_spreads"`
		Matched     int              `json:"collectives_matched"`
	}
	var got, exp doc
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("report JSON: %v", err)
	}
	if err := json.Unmarshal(want, &exp); err != nil {
		t.Fatalf("ddp_check.py JSON: %v\n%s", err, want)
	}
	if len(got.Sources) != 2 || len(exp.Sources) != 2 {
		t.Fatalf("sources: rlktop %d, check %d", len(got.Sources), len(exp.Sources))
	}
	for i, e := range exp.Sources {
		for k, v := range e {
			if k == "path" {
				continue
			}
			if !reflect.DeepEqual(got.Sources[i][k], v) {
				t.Errorf("rank %v %s: rlktop %v, independent %v", e["rank"], k, got.Sources[i][k], v)
			}
		}
	}
	if len(exp.StepSpreads) < 4 || len(got.StepSpreads) != len(exp.StepSpreads) {
		t.Fatalf("step spreads: rlktop %d, check %d (want the 6 traced steps)", len(got.StepSpreads), len(exp.StepSpreads))
	}
	for i, e := range exp.StepSpreads {
		if !reflect.DeepEqual(got.StepSpreads[i], e) {
			t.Errorf("step spread %d:\n rlktop %v\n check  %v", i, got.StepSpreads[i], e)
		}
	}
	if got.Matched != exp.Matched || exp.Matched < 6 {
		t.Errorf("collectives matched: rlktop %d, check %d (want >= 6: one gloo all-reduce per step at least)", got.Matched, exp.Matched)
	}
	// The deliberate straggler: rank 1 arrives last at most collectives,
	// rank 0 waits for it (about 40 ms a step) and rank 1 hardly waits.
	r0, r1 := got.Sources[0], got.Sources[1]
	// A strict majority, not 80%: on a loaded machine rank 0 can be
	// descheduled long enough to arrive last at a few (9 of 12 seen in a
	// -short run of cmd/rlktop beside other engineers' Torch tests).
	if l1, l0 := r1["last_arrivals"].(float64), r0["last_arrivals"].(float64); 2*l1 <= float64(got.Matched) || l1 <= l0 {
		t.Errorf("rank 1 arrived last at %v of %d collectives (rank 0 at %v): want most (it sleeps 40 ms a step)", l1, got.Matched, l0)
	}
	if w0, w1 := r0["coll_wait_ns"].(float64), r1["coll_wait_ns"].(float64); w0 < 4*20e6 || w1 > w0/4 {
		t.Errorf("collective wait: rank 0 %.0f ns, rank 1 %.0f ns: want rank 0 waiting (>= 20 ms a step), rank 1 much less", w0, w1)
	}
	// The findings say who and why: the straggler finding
	// names the stage rank 1 sleeps in ("straggle", the script's --slow-ms
	// 40 per step; rank 0 has none), and exposed communication does not
	// blame rank 0 for its waiting.
	fo, err := runReport(t, files[0], files[1], "--by", "finding", "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var fd report.FindingsDoc
	if err := json.Unmarshal([]byte(fo), &fd); err != nil {
		t.Fatalf("%v\n%s", err, fo)
	}
	var st *attrib.Finding
	for i := range fd.Findings {
		if fd.Findings[i].ID == "straggler-rank" {
			st = &fd.Findings[i]
		}
	}
	if st == nil {
		t.Fatalf("findings %+v: no straggler-rank", fd.Findings)
	}
	ev := strings.Join(st.Evidence, "\n")
	if late, others := st.Numbers["late_stage_ns"], st.Numbers["others_stage_ns"]; late < 40e6 || late > 80e6 || others != 0 ||
		!strings.Contains(ev, `rank 1 spends`) || !strings.Contains(ev, `stage "straggle"`) {
		t.Errorf("straggler: late stage %.0f ns per step, others %.0f (want 40-80 ms in \"straggle\": a 40 ms sleep, overshot under load; 0):\n%s", late, others, ev)
	}
	// report --by rank says the same under its verdict.
	if txt, err := runReport(t, files[0], files[1], "--by", "rank"); err != nil || !strings.Contains(txt, "\nrank 1 spends ") || !strings.Contains(txt, `per step in stage "straggle", the others 0 ns`) {
		t.Errorf("report --by rank: %v, no line on rank 1's straggle stage:\n%s", err, txt)
	}
	for _, f := range fd.Findings {
		if f.ID == "exposed-communication" && strings.Contains(strings.Join(f.Evidence, "\n"), "most exposed: rank 0") {
			t.Errorf("exposed communication blames rank 0, which waits for rank 1:\n%s", strings.Join(f.Evidence, "\n"))
		}
	}
}

// TestReportSourcesApart: four unrelated real traces
// (two of them both claim rank 0) reported together stay four sources:
// each one's span and steps equal testdata/sources_check.py's count from
// its raw events, the total span is the longest of them (before, one span
// ran across the four unrelated clocks), step rows are per source (19,
// not merged by number), and the sources are numbered in argument order.
func TestReportSourcesApart(t *testing.T) {
	dir := filepath.Join(testutil.SharedTraces(t), "kineto")
	var files []string
	for _, f := range []string{"hta_diff_control_a100", "hta_diff_test_v100", "hta_ns_resolution_v100", "hta_sampled_rank0"} {
		files = append(files, filepath.Join(dir, f+".json.gz"))
	}
	out := reportJSON(t, files...)
	var got struct {
		Rank   int `json:"rank"`
		Totals struct {
			SpanNs int64 `json:"span_ns"`
		} `json:"totals"`
		Steps []struct {
			Step   int64 `json:"step"`
			Source *int  `json:"source"`
		} `json:"steps"`
		Sources []struct {
			Index       int    `json:"index"`
			Rank        int    `json:"rank"`
			RankFrom    string `json:"rank_from"`
			Path        string `json:"path"`
			SpanNs      int64  `json:"span_ns"`
			Steps       int    `json:"steps"`
			KernelCount int64  `json:"kernel_count"`
		} `json:"sources"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	check := exec.Command("python3", append([]string{"testdata/sources_check.py"}, files...)...)
	check.Stderr = os.Stderr
	raw, err := check.Output()
	if err != nil {
		t.Fatalf("sources_check.py: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if len(got.Sources) != 4 || len(lines) != 4 {
		t.Fatalf("%d sources, %d check lines", len(got.Sources), len(lines))
	}
	var longest int64
	steps := 0
	for i, l := range lines {
		var want struct {
			SpanNs  int64 `json:"span_ns"`
			Steps   int   `json:"steps"`
			Kernels int64 `json:"kernels"`
		}
		if err := json.Unmarshal([]byte(l), &want); err != nil {
			t.Fatal(err)
		}
		s := got.Sources[i]
		if s.Index != i || s.Path != files[i] || s.Rank != i || s.RankFrom != "order" {
			t.Errorf("source %d: %+v: want index and rank %d from the order (two files claim rank 0)", i, s, i)
		}
		if s.SpanNs != want.SpanNs || s.Steps != want.Steps || s.KernelCount != want.Kernels {
			t.Errorf("%s: span %d steps %d kernels %d; independent %+v", filepath.Base(files[i]), s.SpanNs, s.Steps, s.KernelCount, want)
		}
		longest = max(longest, want.SpanNs)
		steps += want.Steps
	}
	if got.Totals.SpanNs != longest || got.Rank != -1 {
		t.Errorf("total span %d ns, rank %d: want the longest source's span %d and no single rank", got.Totals.SpanNs, got.Rank, longest)
	}
	if len(got.Steps) != steps {
		t.Errorf("%d step rows, want %d (one per source and step)", len(got.Steps), steps)
	}
	for _, st := range got.Steps {
		if st.Source == nil {
			t.Fatalf("step %d without its source", st.Step)
		}
	}
}

// TestDDPLiveRanks: `rlktop run --headless -- python3
// ddp_gloo.py --world 2` — the script starts its two ranks as children
// (RANK/WORLD_SIZE in their environment, as torchrun does); each rank's
// Python agent connects to the one session (RLKTOP_SOCKET is inherited)
// and is a source of its own with its hello's rank; rank 1 is slowed on
// purpose (120 ms a step: at 40 ms a loaded 2-core machine's scheduling
// noise once made rank 0 as often last), so where collectives were
// matched it is the late one.
func TestDDPLiveRanks(t *testing.T) {
	r := testutil.NeedTorchRoot(t)
	cmd := r.Command(r.Bin, "run", "--headless", "--steps", "6", "--format", "json", "--",
		"python3", r.Dst+"/ddp_gloo.py", "--world", "2", "--steps", "40", "--slow-rank", "1", "--slow-ms", "120")
	assertLiveRanks(t, cmd)
}

// runDDPHeadless runs `rlktop run --headless --format json ARGS… --
// python3 ddp_gloo.py SCRIPTARGS…` in the PyTorch root and returns its
// report (stdout) and stderr (the script's own lines); a failed run fails
// the test.
func runDDPHeadless(t *testing.T, r *testutil.TorchRoot, args []string, scriptArgs ...string) ([]byte, string) {
	t.Helper()
	argv := append(append([]string{r.Bin, "run", "--headless", "--format", "json"}, args...), "--", "python3", r.Dst+"/ddp_gloo.py")
	cmd := r.Command(append(argv, scriptArgs...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("run --headless: %v\n%s", err, tail(stderr.String(), 3000))
	}
	return out, stderr.String()
}

// TestDDPLiveRankSteps: the live step table of `rlktop run --headless
// --by step -- python3 ddp_gloo.py --world 2` lists every rank's steps 1–7
// apart (the session's aggregate keyed steps by number only, so one rank's
// rows hid the other's: the lead saw rank 1's steps alone), each row under
// its own rank, with that rank's CPU operators in the profiled steps, and
// each rank's step k is the script's own step k of that rank. The script
// (--stamps) ends its line for step k with the Unix time (ns) of that
// step's end, taken after optimizer.step(); the agent ends step k inside
// optimizer.step() and starts step k+1 there, so in one clock, with no
// tolerance, rlktop's step k begins before the script's stamp of step
// k-1 and ends after it, and ends before the script's stamp of step k.
// Durations: per rank, the median of rlktop's step-start to next-start
// (duration for the last) is within 3 ms or 10% of the median the script
// printed (its perf_counter from one step's end to the next). A median,
// because a single step can differ by a few ms: at the boundary where
// the agent exports its torch.profiler window the rank's main thread
// waits for the GIL or a CPU after rlktop's step began and before the
// script's stamp (9 ms seen with three busy loops on the 2-core machine;
// the CI failure of 7cd9862 compared steps one by one and saw 46.5 ms
// against 41.0).
func TestDDPLiveRankSteps(t *testing.T) {
	r := testutil.NeedTorchRoot(t)
	out, stderr := runDDPHeadless(t, r, []string{"--by", "step"}, "--world", "2", "--steps", "8", "--stamps")
	// The script's own figures per (rank, step): ms, and the Unix ns of
	// the step's end.
	type rs = rankStep
	scriptMs, scriptEnd, _ := scriptSteps(stderr)
	var doc struct {
		Sources []struct {
			Index int `json:"index"`
			Rank  int `json:"rank"`
		} `json:"sources"`
		Steps []struct {
			Step    int64 `json:"step"`
			StartNs int64 `json:"start_ns"`
			DurNs   int64 `json:"dur_ns"`
			Ops     int64 `json:"gpu_ops"`
			Source  *int  `json:"source"`
		} `json:"step_rows"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	rankOf := map[int]int64{}
	for _, s := range doc.Sources {
		rankOf[s.Index] = int64(s.Rank)
	}
	if len(rankOf) != 2 {
		t.Fatalf("sources %+v, want the two ranks", doc.Sources)
	}
	starts := map[rs]int64{}
	durs := map[rs]int64{}
	ops := map[int64]int64{}
	for _, st := range doc.Steps {
		if st.Source == nil {
			t.Fatalf("step %d without its source:\n%s", st.Step, out)
		}
		k := rs{rankOf[*st.Source], st.Step}
		if _, dup := starts[k]; dup {
			t.Errorf("rank %d step %d listed twice", k.rank, k.step)
		}
		starts[k], durs[k] = st.StartNs, st.DurNs
		ops[k.rank] += st.Ops
	}
	for rank := range int64(2) {
		if ops[rank] == 0 {
			t.Errorf("rank %d: no CPU operators in its steps (the profiled steps have them)", rank)
		}
		var got, want []float64
		for step := int64(1); step <= 7; step++ {
			k := rs{rank, step}
			start, ok := starts[k]
			if !ok {
				t.Errorf("rank %d step %d missing from the step table", rank, step)
				continue
			}
			end := start + durs[k]
			prev, ok1 := scriptEnd[rs{rank, step - 1}]
			this, ok2 := scriptEnd[k]
			if !ok1 || !ok2 {
				t.Fatalf("the script printed no stamped line for rank %d step %d or %d:\n%s", rank, step-1, step, tail(stderr, 3000))
			}
			if !(start < prev && prev < end && end < this) {
				t.Errorf("rank %d step %d: rlktop [%d, %d], the script's step %d ended at %d and step %d at %d (want start < first < end < second)",
					rank, step, start, end, step-1, prev, step, this)
			}
			g := float64(durs[k]) / 1e6
			if next, ok := starts[rs{rank, step + 1}]; ok {
				g = float64(next-start) / 1e6
			}
			got, want = append(got, g), append(want, scriptMs[k])
		}
		if len(got) == 0 {
			continue
		}
		mg, mw := median(got), median(want)
		if math.Abs(mg-mw) > max(3, 0.1*mw) {
			t.Errorf("rank %d: median step %.1f ms in rlktop, %.1f ms by the script (rlktop %.1f, script %.1f)", rank, mg, mw, got, want)
		}
	}
	if len(starts) != 14 {
		t.Errorf("%d step rows, want 7 per rank", len(starts))
	}
}

// median of xs (the mean of the middle two for an even count); xs is sorted
// in place.
func median(xs []float64) float64 {
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// TestDDPLiveRanksTorchrun: the same job started the way users start it,
// `rlktop run -- torchrun --nproc-per-node 2 ddp_gloo.py` (torchrun's own
// launcher and TCP store, env:// rendezvous). Debian's PyTorch is built
// without libuv, which torchrun's store asks for by default, so the test
// puts testdata/nolibuv/sitecustomize.py on PYTHONPATH (after rlktop's
// agent, which chains to it): it makes TCPStore's default use_libuv=False.
// PyTorch from pip needs no shim. torchrun's own agent connects too but
// sends no events: two sources, the ranks.
func TestDDPLiveRanksTorchrun(t *testing.T) {
	r := testutil.NeedTorchRoot(t)
	shim := filepath.Join(r.Dir, strings.TrimPrefix(r.Dst, "/"), "nolibuv")
	if err := os.MkdirAll(shim, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("testdata/nolibuv/sitecustomize.py")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(shim, "sitecustomize.py"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := r.Command("PYTHONPATH="+r.Dst+"/nolibuv", "OMP_NUM_THREADS=1", r.Bin, "run", "--headless", "--steps", "6", "--format", "json", "--",
		"torchrun", "--nproc-per-node", "2", r.Dst+"/ddp_gloo.py", "--steps", "40", "--slow-rank", "1", "--slow-ms", "120")
	assertLiveRanks(t, cmd)
}

// assertLiveRanks runs cmd (`rlktop run --headless --format json` of a
// two-rank job, rank 1 slowed) and checks its sources: ranks 0 and 1 from
// their hellos, world 2, steps on each; where collectives were matched,
// rank 1 arrives last and rank 0 waits longer.
func assertLiveRanks(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("run --headless: %v\n%s", err, tail(stderr.String(), 3000))
	}
	var doc struct {
		Sources []struct {
			Rank         int    `json:"rank"`
			RankFrom     string `json:"rank_from"`
			World        int    `json:"world"`
			Steps        int    `json:"steps"`
			CollWaitNs   int64  `json:"coll_wait_ns"`
			LastArrivals int    `json:"last_arrivals"`
		} `json:"sources"`
		Matched int `json:"collectives_matched"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if len(doc.Sources) != 2 {
		t.Fatalf("%d sources, want the two ranks (the launcher sends no events):\n%s", len(doc.Sources), out)
	}
	for i, s := range doc.Sources {
		if s.Rank != i || s.RankFrom != "trace" || s.World != 2 || s.Steps == 0 {
			t.Errorf("source %d: %+v: want rank %d from its hello, world 2, steps", i, s, i)
		}
	}
	if doc.Matched > 0 {
		r0, r1 := doc.Sources[0], doc.Sources[1]
		if r1.LastArrivals <= r0.LastArrivals || r0.CollWaitNs <= r1.CollWaitNs {
			t.Errorf("collectives %d: rank 0 %+v, rank 1 %+v: want rank 1 (slowed) last and rank 0 waiting", doc.Matched, r0, r1)
		}
	}
	t.Logf("collectives matched over the window: %d", doc.Matched)
}

// TestDDPRecordRanks: `rlktop record` of a two-rank DDP run, reported, has
// the ranks apart as the live session and the ranks' trace files have them
// ("report --by rank" of such a recording showed one source, each
// step N the two ranks' merged, and no straggler). The recording's hellos
// carry each process's rank; tracefile.SplitProcesses makes one source per
// process. Checked against the script's own stderr: each rank has its own
// row with as many steps as it printed step lines less one (rlktop's step
// 1 is the script's step 1: the first step's start is never seen), and
// rank 1, which sleeps 40 ms a step (--slow-rank 1), arrived last at a
// strict majority of the matched collectives.
func TestDDPRecordRanks(t *testing.T) {
	r := testutil.NeedTorchRoot(t)
	rec := r.Dst + "/ddp.rlk"
	cmd := r.Command(r.Bin, "record", "-o", rec, "--steps", "100", "--",
		"python3", r.Dst+"/ddp_gloo.py", "--world", "2", "--steps", "8")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("record: %v\n%s", err, tail(string(out), 3000))
	}
	lines := map[int]int{}
	for _, l := range strings.Split(string(out), "\n") {
		var rank, step int
		if n, _ := fmt.Sscanf(l, "rank %d step %d", &rank, &step); n == 2 {
			lines[rank]++
		}
	}
	// The summary line counts steps per rank, as the report lists them.
	if want := fmt.Sprintf(", %d steps per rank, ", lines[0]-1); !strings.Contains(string(out), want) {
		t.Errorf("record's summary lacks %q:\n%s", want, tail(string(out), 600))
	}
	rep, err := r.Command(r.Bin, "report", "--by", "rank", "--format", "json", rec).Output()
	if err != nil {
		t.Fatalf("report: %v", err)
	}
	var doc struct {
		Sources []struct {
			Rank         int `json:"rank"`
			Steps        int `json:"steps"`
			LastArrivals int `json:"last_arrivals"`
		} `json:"sources"`
		Matched int `json:"collectives_matched"`
	}
	if err := json.Unmarshal(rep, &doc); err != nil {
		t.Fatalf("report JSON: %v\n%s", err, tail(string(rep), 2000))
	}
	if len(doc.Sources) != 2 || doc.Sources[0].Rank != 0 || doc.Sources[1].Rank != 1 {
		t.Fatalf("sources %+v: want ranks 0 and 1 apart", doc.Sources)
	}
	for _, s := range doc.Sources {
		if s.Steps != lines[s.Rank]-1 {
			t.Errorf("rank %d: %d steps, the script printed %d step lines (want one less)", s.Rank, s.Steps, lines[s.Rank])
		}
	}
	if l1 := doc.Sources[1].LastArrivals; doc.Matched == 0 || 2*l1 <= doc.Matched {
		t.Errorf("rank 1 (sleeps 40 ms a step) arrived last at %d of %d collectives: want a strict majority", l1, doc.Matched)
	}
}
