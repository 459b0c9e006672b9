package tracer

// Python stack samples: what the Python agent's sampler saw on each thread
// of a traced process (sys._current_frames() from its own thread, at a
// fixed rate), as a table of stacks and one small record per sample.

// PyState says what a sampled thread was doing, as its innermost Python
// frame shows it: running Python code, or executing a call into something
// that is not Python (a torch operator, another C function, a sleep, a
// lock or condition wait, a queue get, a DataLoader iterator's __next__).
// Values are part of the wire protocol (PySamples frames); never renumber.
type PyState uint8

// Sample states.
const (
	// PyRunning: the innermost frame was executing Python bytecode (not
	// inside a call into native code).
	PyRunning PyState = 0
	// PyNative: inside a call into a C function or C slot (a builtin, a C
	// extension) that is none of the below.
	PyNative PyState = 1
	// PyTorch: inside a call into a torch operator (a callable of a torch
	// module, or a method of a torch.Tensor), or a native call made from
	// torch's own Python code.
	PyTorch PyState = 2
	// PySleep: inside time.sleep.
	PySleep PyState = 3
	// PyLock: waiting on a lock, condition, event, semaphore or thread join
	// (threading).
	PyLock PyState = 4
	// PyQueue: waiting inside a queue's get (queue.Queue,
	// multiprocessing queues).
	PyQueue PyState = 5
	// PyLoader: waiting inside a torch DataLoader iterator's __next__ (its
	// workers' batch not ready).
	PyLoader PyState = 6
	// PyStates is the number of states.
	PyStates = 7
)

var pyStateNames = [PyStates]string{"python", "native", "torch", "sleep", "lock", "queue", "dataloader"}

// String names the state as reports and the JSON print it ("python",
// "native", "torch", "sleep", "lock", "queue", "dataloader").
func (s PyState) String() string {
	if int(s) < len(pyStateNames) {
		return pyStateNames[s]
	}
	return "state?"
}

// Waiting reports whether the state is a wait (sleep, lock, queue,
// DataLoader): the thread was not computing.
func (s PyState) Waiting() bool { return s >= PySleep && s < PyStates }

// PyFrame is one Python code location: the function (its qualified name),
// its file, the line its definition starts on and the line executing.
// Func and File are ids in the table the stacks belong to.
type PyFrame struct {
	Func, File StrID
	FirstLine  int32 // co_firstlineno: identifies the function within its file
	Line       int32 // the line being executed (0 unknown)
}

// PyNode is one node of a stack table: a frame called from the stack
// Parent (0: the frame is a thread's outermost).
type PyNode struct {
	Parent uint32
	Frame  uint32 // index into the table's frames
}

// PyStacks is a table of Python stacks as a tree: stack id i > 0 is the
// frame Nodes[i].Frame called from stack Nodes[i].Parent; id 0 is the
// empty stack. Ids are dense and never change; entries are only
// appended. Not safe for concurrent use.
type PyStacks struct {
	frames []PyFrame
	nodes  []PyNode
	fidx   map[PyFrame]uint32
	nidx   map[PyNode]uint32
}

// NewPyStacks returns a table holding only the empty stack.
func NewPyStacks() *PyStacks {
	return &PyStacks{nodes: []PyNode{{}}, fidx: map[PyFrame]uint32{}, nidx: map[PyNode]uint32{}}
}

// Intern returns the id of the stack f called from parent (an id of this
// table), adding it when new.
func (s *PyStacks) Intern(parent uint32, f PyFrame) uint32 {
	fi, ok := s.fidx[f]
	if !ok {
		fi = uint32(len(s.frames))
		s.frames = append(s.frames, f)
		s.fidx[f] = fi
	}
	n := PyNode{Parent: parent, Frame: fi}
	if id, ok := s.nidx[n]; ok {
		return id
	}
	id := uint32(len(s.nodes))
	s.nodes = append(s.nodes, n)
	s.nidx[n] = id
	return id
}

// Len returns the number of stacks, the empty one included.
func (s *PyStacks) Len() int { return len(s.nodes) }

// Frames returns the number of distinct frames.
func (s *PyStacks) Frames() int { return len(s.frames) }

// Node returns stack id's node (the zero node for 0 or an id out of range).
func (s *PyStacks) Node(id uint32) PyNode {
	if int(id) < len(s.nodes) {
		return s.nodes[id]
	}
	return PyNode{}
}

// Frame returns frame i of the table.
func (s *PyStacks) Frame(i uint32) PyFrame {
	if int(i) < len(s.frames) {
		return s.frames[i]
	}
	return PyFrame{}
}

// Walk calls fn for each frame of stack id from the innermost (the leaf)
// to the outermost; it stops early when fn returns false. A malformed
// table (a parent not below its child) ends the walk.
func (s *PyStacks) Walk(id uint32, fn func(f PyFrame) bool) {
	for id != 0 && int(id) < len(s.nodes) {
		n := s.nodes[id]
		if !fn(s.frames[n.Frame]) || n.Parent >= id {
			return
		}
		id = n.Parent
	}
}

// PySample is one thread's Python stack at one instant. 48 bytes.
type PySample struct {
	TS    int64  // host CLOCK_REALTIME ns
	PID   int32  // process
	TID   int32  // OS thread id (as events' TID)
	Stack uint32 // id in the trace's PyStacks; 0: no Python frame
	State PyState
	// StepThread is set on samples of the process's step thread (the
	// thread that ends the steps).
	StepThread bool
	// Step is the step the process was running (its step number; -1
	// before the first step boundary).
	Step int64
	// Stage is the innermost stage (rlktop.stage) open on this thread, 0
	// none; StepStage the one open on the process's step thread (the
	// thread that ends the steps), 0 none.
	Stage, StepStage StrID
	// WeightNs is the time this sample stands for, ns: the Python agent's
	// is one period, and a wake-up of its sampler n periods after the
	// previous one (the interpreter lock came late) gives each thread
	// about n samples (FORMAT.md "pysamples").
	WeightNs int32
}

// StageOf returns the stage a sample counts in: its own thread's, else
// the step thread's (the rule kernels follow: the launching thread's
// innermost range, else the step thread's).
func (p *PySample) StageOf() StrID {
	if p.Stage != 0 {
		return p.Stage
	}
	return p.StepStage
}
