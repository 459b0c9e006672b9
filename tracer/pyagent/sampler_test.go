package pyagent

import (
	"bytes"
	"encoding/json"
	"io"
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
// pure-Python work below a 24-frame stack beside 3 idle threads, blocks
// with the sampler at 100 Hz and without alternating, and reports the
// median step's ratio (on/off) and the sampler's CPU time per tick and
// as a share of the process's time (its upper bound on the interpreter
// lock it takes from the step).
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
		out, err := exec.Command(py, "testdata/sampler_bench.py", dir, "10", "8", "100", "50").Output()
		if err != nil {
			b.Fatal(err)
		}
		var r struct {
			Ratio float64 `json:"ratio"`
			Tick  float64 `json:"sampler_cpu_us_per_tick"`
			Share float64 `json:"sampler_cpu_share"`
		}
		if err := json.Unmarshal(out, &r); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
		b.ReportMetric(r.Ratio, "step-on/off")
		b.ReportMetric(r.Tick, "µs-cpu/tick")
		b.ReportMetric(100*r.Share, "%-cpu")
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
