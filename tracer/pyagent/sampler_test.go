package pyagent

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/wire"
	"github.com/rlktop/rlktop/tracer/wire/msg"
)

// samplerScript runs the agent's sampler (py/rlktop/_sampler.py) at
// 200 Hz for 1 s over threads whose state the script knows by
// construction: one in time.sleep, one blocked on a threading.Lock, one in
// queue.Queue.get, one in a DataLoader iterator's __next__ (a stand-in
// torch.utils.data.dataloader, as in TestInputWaitPerStep) waiting on a
// queue, one spinning in Python, and the main thread sleeping in a loop
// at module level (time.sleep: on 3.11, once specialised, inside a
// PRECALL) inside stage "collect". It writes a wire stream (preamble, hello, the
// sampler's frames) to stdout and, on stderr, each thread's native id,
// the ticks and whether the sampler's thread ended after stop().
const samplerScript = `
import json, os, queue, sys, threading, time, types
import rlktop
from rlktop import _sampler, _wire
for name in ("torch", "torch.utils", "torch.utils.data", "torch.utils.data.dataloader"):
    sys.modules[name] = types.ModuleType(name)
dl = sys.modules["torch.utils.data.dataloader"]
class It:
    def __init__(self):
        self.q = queue.Queue()
    def __next__(self):
        return self.q.get()
dl._BaseDataLoaderIter = It
class Agent:
    dead = False
    tracing = True
    step_n = 5
    step_ident = threading.get_ident()
stop = threading.Event()
lock = threading.Lock()
lock.acquire()
q = queue.Queue()
def sleeper():
    while not stop.is_set():
        time.sleep(0.02)
def locker():
    lock.acquire()
def getter():
    q.get()
def loader():
    next(It())
def spinner():
    x = 0
    for i in range(10 ** 12):
        x += i
ids = {}
for fn in (sleeper, locker, getter, loader, spinner):
    t = threading.Thread(target=fn, name=fn.__name__, daemon=True)
    t.start()
    ids[fn.__name__] = t.native_id
ids["main"] = threading.get_native_id()
rlktop._open_stages[threading.get_ident()] = ["collect"]
time.sleep(0.1)
s = _sampler.Sampler(Agent(), float(os.environ.get("HZ", "200"))).start()
for _ in range(int(float(os.environ.get("SECS", "1")) * 100)):
    time.sleep(0.01)
ended = s.stop()
stop.set()
out = _wire.preamble() + _wire.hello(os.getpid(), -1, 0, "h", "cpu", 0, time.time_ns(), ["x"]) + s.flush({}, os.getpid(), True)
sys.stdout.buffer.write(out)
sys.stderr.write(json.dumps({"ids": ids, "ticks": s.ticks, "ended": ended and not s.thread.is_alive(), "threads": len(ids)}))
`

type sampleSink struct {
	strs    *tracer.Strings
	stacks  *tracer.PyStacks
	samples []tracer.PySample
	dropped uint64
	period  int64
}

func (s *sampleSink) Hello(*msg.Hello, bool) error          { return nil }
func (s *sampleSink) Intern(b []byte) (tracer.StrID, error) { return s.strs.InternBytes(b), nil }
func (s *sampleSink) Events([]tracer.Event, int) error      { return nil }
func (s *sampleSink) Counters([]tracer.Counter, int) error  { return nil }
func (s *sampleSink) Drops(msg.Drops) error                 { return nil }
func (s *sampleSink) Control(*msg.Control) error            { return nil }
func (s *sampleSink) Meta([]msg.KV) error                   { return nil }
func (s *sampleSink) TraceFile(wire.TraceFile) error        { return nil }
func (s *sampleSink) Bye(msg.Bye) error                     { return nil }
func (s *sampleSink) InternPyStack(p uint32, f tracer.PyFrame) (uint32, error) {
	return s.stacks.Intern(p, f), nil
}
func (s *sampleSink) PySamples(b *wire.PyBatch, u int) error {
	s.samples = append(s.samples, b.Samples...)
	s.dropped, s.period = b.Dropped, b.PeriodNs
	return nil
}

// path is a stack's functions, outermost first, joined by ";".
func (s *sampleSink) path(id uint32) string {
	var fr []string
	s.stacks.Walk(id, func(f tracer.PyFrame) bool { fr = append([]string{s.strs.Get(f.Func)}, fr...); return true })
	return strings.Join(fr, ";")
}

type samplerRun struct {
	sink  *sampleSink
	ids   map[string]int32
	ticks int
	ended bool
	nthr  int
}

func runSampler(t *testing.T, env ...string) samplerRun {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed: the agent's sampler cannot run")
	}
	cmd := exec.Command(py, "-c", samplerScript)
	cmd.Env = append(append(cmd.Environ(), "PYTHONPATH="+agentDir(t), "RLKTOP_SOCKET="), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	var info struct {
		IDs     map[string]int32 `json:"ids"`
		Ticks   int              `json:"ticks"`
		Ended   bool             `json:"ended"`
		Threads int              `json:"threads"`
	}
	if err := json.Unmarshal(stderr.Bytes(), &info); err != nil {
		t.Fatalf("stderr %q: %v", stderr.String(), err)
	}
	sink := &sampleSink{strs: tracer.NewStrings(), stacks: tracer.NewPyStacks()}
	d := wire.NewDecoder(bytes.NewReader(out))
	for {
		err := d.Next(sink)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("decoding the sampler's frames: %v", err)
		}
	}
	return samplerRun{sink: sink, ids: info.IDs, ticks: info.Ticks, ended: info.Ended, nthr: info.Threads}
}

// TestSamplerStates: each thread's samples carry the state the script
// put it in, read from its frame (sleep, lock, queue, dataloader, python;
// the main thread sleeps), its innermost function, the
// step and stage tags, the step-thread bit on the main thread only; the
// samples decode in Go (the agent's encoder, the Go decoder); the
// sampler's thread ends on stop().
func TestSamplerStates(t *testing.T) {
	r := runSampler(t)
	if !r.ended {
		t.Errorf("the sampler's thread did not end on stop()")
	}
	if r.sink.period != 5e6 {
		t.Errorf("period %d ns, want 5e6 (200 Hz)", r.sink.period)
	}
	want := map[string]struct {
		state tracer.PyState
		leaf  string
		min   float64 // share of the thread's samples in that state and leaf
	}{
		// The sleeper wakes every 20 ms and then waits for the
		// interpreter lock with the spinner: a few samples find it
		// between bytecodes.
		"sleeper": {tracer.PySleep, "sleeper", 0.5},
		"locker":  {tracer.PyLock, "locker", 1},
		"getter":  {tracer.PyQueue, "Condition.wait", 1},
		"loader":  {tracer.PyLoader, "Condition.wait", 1},
		"spinner": {tracer.PyRunning, "spinner", 0.9},
		"main":    {tracer.PySleep, "<module>", 0.8}, // between sleeps it waits for the lock with the spinner
	}
	byTID := map[int32]string{}
	for name, id := range r.ids {
		byTID[id] = name
	}
	n, ok := map[string]int{}, map[string]int{}
	collect, _ := r.sink.strs.Lookup("collect")
	for _, s := range r.sink.samples {
		name := byTID[s.TID]
		if name == "" {
			t.Errorf("a sample of thread %d, none of the script's (the sampler's own?)", s.TID)
			continue
		}
		n[name]++
		p := r.sink.path(s.Stack)
		w := want[name]
		if s.State == w.state && (strings.HasSuffix(p, ";"+w.leaf) || p == w.leaf) {
			ok[name]++
		}
		if name == "loader" && !strings.Contains(p, "It.__next__") {
			t.Errorf("loader sample stack %q: no It.__next__", p)
		}
		if s.Step != 5 || s.StepStage != collect || (s.Stage == collect) != (name == "main") || s.StepThread != (name == "main") {
			t.Errorf("%s: sample %+v: want step 5, step stage collect, own stage and step-thread bit on main only", name, s)
		}
	}
	for name, w := range want {
		if n[name] < r.ticks/2 || float64(ok[name]) < w.min*float64(n[name]) {
			t.Errorf("%s: %d of %d samples in state %s at %s (%d ticks), want at least %.0f%%", name, ok[name], n[name], w.state, w.leaf, r.ticks, 100*w.min)
		}
	}
	if len(r.sink.samples) > r.ticks*r.nthr {
		t.Errorf("%d samples from %d ticks of %d threads", len(r.sink.samples), r.ticks, r.nthr)
	}
}

// TestSamplerDrops: with room for 20 samples, the rest of every tick's
// samples (6 threads each) are dropped and counted.
func TestSamplerDrops(t *testing.T) {
	r := runSampler(t, "RLKTOP_PY_SAMPLE_QUEUE=20", "SECS=0.3")
	if len(r.sink.samples) != 20 || r.sink.dropped != uint64(r.ticks*r.nthr-20) {
		t.Errorf("%d samples, %d dropped of %d ticks × %d threads: want 20 kept, the rest dropped", len(r.sink.samples), r.sink.dropped, r.ticks, r.nthr)
	}
}

// BenchmarkPySampler runs testdata/sampler_bench.py: steps of 50 ms of
// pure-Python work below a 24-frame stack beside 3 idle threads, 30
// blocks of 4 steps with the sampler at 100 Hz (and a sender flushing it)
// alternating with 30 without, and reports the median of the paired
// blocks' step ratio (on/off), the step's time off the CPU that the
// sampler adds (stall-%, of the step), the sampler's and flush's CPU time
// per wake-up, and their CPU time as a share of the on arm's wall time
// (what they hold the interpreter lock for, at most).
func BenchmarkPySampler(b *testing.B) {
	py, err := exec.LookPath("python3")
	if err != nil {
		b.Skip("python3 not installed")
	}
	dir := b.TempDir()
	for name, data := range Files() {
		if err := writeFile(dir+"/"+name, data); err != nil {
			b.Fatal(err)
		}
	}
	for range b.N {
		out, err := exec.Command(py, "testdata/sampler_bench.py", dir, "4", "30", "100", "50").Output()
		if err != nil {
			b.Fatal(err)
		}
		var r struct {
			Ratio float64 `json:"pair_ratio"`
			Stall float64 `json:"stall_share"`
			Tick  float64 `json:"sampler_us_per_tick"`
			Flush float64 `json:"flush_us_per_tick"`
			Held  float64 `json:"held_share"`
		}
		if err := json.Unmarshal(out, &r); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
		b.ReportMetric(r.Ratio, "step-on/off")
		b.ReportMetric(100*r.Stall, "stall-%")
		b.ReportMetric(r.Tick, "µs-cpu/wake")
		b.ReportMetric(r.Flush, "µs-flush/wake")
		b.ReportMetric(100*r.Held, "%-cpu")
	}
	_ = os.Stdout
}

// TestSamplerRanges: with a stand-in torch.autograd.profiler.record_function
// (the class's __enter__/__exit__ as torch writes them, minus the
// profiler op), a sample taken inside `with record_function("forward")`
// inside rlktop.stage("collect") is tagged forward, one inside
// ProfilerStep#3 alone is not, and unwatch_ranges puts the class back.
func TestSamplerRanges(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	script := `
import sys, threading, types
import rlktop
from rlktop import _sampler
torch = types.ModuleType("torch")
torch.autograd = types.ModuleType("torch.autograd")
torch.autograd.profiler = types.ModuleType("torch.autograd.profiler")
class record_function:
    def __init__(self, name):
        self.name = name
    def __enter__(self):
        return self
    def __exit__(self, *a):
        return None
torch.autograd.profiler.record_function = record_function
orig = record_function.__enter__
_sampler.watch_ranges(torch)
_sampler.watch_ranges(torch)  # twice: wrapped once
me = threading.get_ident()
got = []
rlktop._open_stages[me] = ["collect"]
with record_function("forward"):
    got.append(list(rlktop._open_stages[me]))
    with record_function("ProfilerStep#3"):
        got.append(list(rlktop._open_stages[me]))
got.append(list(rlktop._open_stages[me]))
_sampler.unwatch_ranges(torch)
print(got, record_function.__enter__ is orig)
`
	cmd := exec.Command(py, "-c", script)
	cmd.Env = append(cmd.Environ(), "PYTHONPATH="+agentDir(t), "RLKTOP_SOCKET=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "[['collect', 'forward'], ['collect', 'forward'], ['collect']] True" {
		t.Errorf("stage stacks %s", got)
	}
}

// encoderScript encodes samples chosen here twice: through Sampler.flush
// (stage names turned into string ids by the sender's table) and through
// _wire.pysamples with string ids given. The samples repeat a thread's
// fields from tick to tick and share ts and weight within a tick, which
// the encoder writes once per frame; one goes back in time (a negative
// delta) and one is at ts 0.
const encoderScript = `
import os, sys
from rlktop import _sampler, _wire
class Agent:
    dead = False
    tracing = True
    step_n = 0
S = [(0, 7, 1, -1, "", "", 0, 0),
     (1000, 7, 2, 5, "three", "three", 0x81, 4000000),
     (1000, 8, 1, 5, "", "three", 3, 4000000),
     (5000, 7, 2, 5, "three", "three", 0x81, 4000000),
     (5000, 8, 1, 5, "", "three", 3, 4000000),
     (5000, 7, 2, 6, "one", "one", 0x80, 4000001),
     (4000, 8, 2, 6, "one", "one", 4, 300),
     (9000, 7, 2, 6, "one", "one", 0x80, 300)]
s = _sampler.Sampler(Agent(), 250)
s.new_frames = [(1, "main", "x.py", 1, 3), (2, "work", "x.py", 10, 12)]
s.new_stacks = [(1, 0, 1), (2, 1, 2)]
s.samples = list(S)
out = _wire.preamble() + _wire.hello(os.getpid(), -1, 0, "h", "cpu", 0, 0, ["x"]) + s.flush({}, 42, True)
ids = {"main": 1, "x.py": 2, "work": 3, "three": 4, "one": 5}
sid = lambda n: ids[n] if n else 0
out += _wire.strings(sorted((i, n) for n, i in ids.items()))
out += _wire.pysamples(43, 4000000, 0, [(1, 1, 2, 1, 3), (2, 3, 2, 10, 12)], [(1, 0, 1), (2, 1, 2)],
                       [(ts, tid, st, step, sid(a), sid(b), state, w) for ts, tid, st, step, a, b, state, w in S])
sys.stdout.buffer.write(out)
`

// TestPySamplesEncoder: both encodings decode in Go to the samples the
// script chose, field by field, in order.
func TestPySamplesEncoder(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	cmd := exec.Command(py, "-c", encoderScript)
	cmd.Env = append(cmd.Environ(), "PYTHONPATH="+agentDir(t), "RLKTOP_SOCKET=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	sink := &sampleSink{strs: tracer.NewStrings(), stacks: tracer.NewPyStacks()}
	d := wire.NewDecoder(bytes.NewReader(out))
	for {
		err := d.Next(sink)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("decoding: %v", err)
		}
	}
	type want struct {
		ts               int64
		tid              int32
		path             string
		step             int64
		stage, stepStage string
		state            tracer.PyState
		stepThread       bool
		weight           int32
	}
	ws := []want{
		{0, 7, "main", -1, "", "", 0, false, 0},
		{1000, 7, "main;work", 5, "three", "three", 1, true, 4000000},
		{1000, 8, "main", 5, "", "three", 3, false, 4000000},
		{5000, 7, "main;work", 5, "three", "three", 1, true, 4000000},
		{5000, 8, "main", 5, "", "three", 3, false, 4000000},
		{5000, 7, "main;work", 6, "one", "one", 0, true, 4000001},
		{4000, 8, "main;work", 6, "one", "one", 4, false, 300},
		{9000, 7, "main;work", 6, "one", "one", 0, true, 300},
	}
	if len(sink.samples) != 2*len(ws) {
		t.Fatalf("%d samples decoded, want %d (two encodings of %d)", len(sink.samples), 2*len(ws), len(ws))
	}
	for i, s := range sink.samples {
		w := ws[i%len(ws)]
		got := want{s.TS, s.TID, sink.path(s.Stack), s.Step, sink.strs.Get(s.Stage), sink.strs.Get(s.StepStage), s.State, s.StepThread, s.WeightNs}
		if got != w {
			t.Errorf("sample %d: %+v, want %+v", i, got, w)
		}
	}
}

// wallScript alternates the main thread between spin (pure Python, which
// gives the interpreter lock up only every switch interval) and nap
// (time.sleep, which gives it up at once), 20 ms each, timed by the
// script with time.perf_counter, under the sampler at 100 Hz for SECS s;
// the wire stream goes to stdout, the script's seconds in each to stderr.
const wallScript = `
import json, os, sys, threading, time
from rlktop import _sampler, _wire
class Agent:
    dead = False
    tracing = True
    step_n = 0
    step_ident = threading.get_ident()
def spin(t):
    t0 = time.perf_counter()
    x = 0
    while time.perf_counter() - t0 < t:
        x += 1
def nap(t):
    time.sleep(t)
s = _sampler.Sampler(Agent(), 100).start()
ts = {"spin": 0.0, "nap": 0.0}
end = time.perf_counter() + float(os.environ.get("SECS", "6"))
while time.perf_counter() < end:
    for fn in (spin, nap):
        t0 = time.perf_counter()
        fn(0.02)
        ts[fn.__name__] += time.perf_counter() - t0
s.stop()
sys.stdout.buffer.write(_wire.preamble() + _wire.hello(os.getpid(), -1, 0, "h", "cpu", 0, 0, ["x"]) + s.flush({}, os.getpid(), True))
sys.stderr.write(json.dumps(ts))
`

// TestSamplerWallTime: the main thread's samples in spin and in nap are
// in the ratio of the script's own timings, within three binomial
// standard errors plus 2 points. A sampler that counts one sample a
// wake-up read spin 37% of the 50% (the wake-ups that find a thread in
// Python come a switch interval late, those in a sleep at once).
func TestSamplerWallTime(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	cmd := exec.Command(py, "-c", wallScript)
	cmd.Env = append(cmd.Environ(), "PYTHONPATH="+agentDir(t), "RLKTOP_SOCKET=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	var ts struct{ Spin, Nap float64 }
	if err := json.Unmarshal(stderr.Bytes(), &ts); err != nil {
		t.Fatalf("stderr %q: %v", stderr.String(), err)
	}
	sink := &sampleSink{strs: tracer.NewStrings(), stacks: tracer.NewPyStacks()}
	d := wire.NewDecoder(bytes.NewReader(out))
	for {
		err := d.Next(sink)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("decoding: %v", err)
		}
	}
	var spin, nap int64
	for _, s := range sink.samples {
		if !s.StepThread {
			continue
		}
		switch p := sink.path(s.Stack); {
		case strings.HasSuffix(p, ";spin"):
			spin++
		case strings.HasSuffix(p, ";nap"):
			nap++
		}
	}
	n := spin + nap
	if n < 300 {
		t.Fatalf("%d samples in spin and nap: too few", n)
	}
	got, want := float64(spin)/float64(n), ts.Spin/(ts.Spin+ts.Nap)
	tol := 3*math.Sqrt(want*(1-want)/float64(n)) + 0.02
	t.Logf("spin %d, nap %d samples: %.1f%% (the script's perf_counter: %.1f%%)", spin, nap, 100*got, 100*want)
	if math.Abs(got-want) > tol {
		t.Errorf("spin has %.1f%% of the samples, the script timed %.1f%%: want within %.1f points", 100*got, 100*want, 100*tol)
	}
}
