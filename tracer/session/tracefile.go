package session

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/tracefile"
	"github.com/rlktop/rlktop/tracer/wire"
)

// MaxTraceFileBytes bounds a trace file a child hands over (wire
// TraceFile); larger ones are skipped with a warning. A torch.profiler
// window of a few steps of a CPU loop is 5–50 MB.
const MaxTraceFileBytes = 512 << 20

// importTraceFile reads a trace file a child announced (the Python agent's
// torch.profiler window), merges its events into that child's stream and
// removes the file. It runs in its own goroutine: importing takes tens of
// ms per window and must not hold up the child's frames.
//
// Times: torch.profiler (2.x) writes ts in µs relative to the top-level
// "baseTimeNanoseconds" (host CLOCK_REALTIME ns); older versions write
// epoch µs and no base. Step events of the window are dropped: the agent
// sends its own. The window's CPU operators arrive as kernels by self time
// when it holds no GPU work (tracer.Trace.CPUOpKernels).
func (s *Session) importTraceFile(c *conn, tf wire.TraceFile) {
	defer s.wg.Done()
	if ok, why := agentCapturePath(tf.Path); !ok {
		s.mu.Lock()
		s.warn(fmt.Sprintf("child pid %d: trace file %s not imported: %s", c.info.Hello.PID, tf.Path, why))
		s.mu.Unlock()
		return
	}
	f, fi, err := openAgentCapture(tf.Path)
	if err != nil {
		s.mu.Lock()
		s.warn(fmt.Sprintf("child pid %d: trace file %s not imported: %v", c.info.Hello.PID, tf.Path, err))
		s.mu.Unlock()
		return
	}
	defer f.Close()
	// Taken once open (it is read through f): the agent starts no new
	// window while earlier ones wait on disk, and reading and ingesting
	// (under the session's lock) take tens of ms.
	os.Remove(tf.Path)
	if fi.Size() > MaxTraceFileBytes {
		s.mu.Lock()
		s.warn(fmt.Sprintf("child pid %d: trace window %s is %d MB, over the %d MB limit: steps %d–%d have no operators", c.info.Hello.PID, tf.Path, fi.Size()>>20, MaxTraceFileBytes>>20, tf.FirstStep, tf.LastStep))
		s.mu.Unlock()
		return
	}
	tr, err := tracefile.Read(f, tf.Path, fi.Size(), tracefile.Options{})
	if err != nil || tr == nil {
		s.mu.Lock()
		s.warn(fmt.Sprintf("child pid %d: trace window of steps %d–%d not imported: %v", c.info.Hello.PID, tf.FirstStep, tf.LastStep, err))
		s.mu.Unlock()
		return
	}
	var base int64
	if len(tr.Warnings) > 0 {
		s.mu.Lock()
		vendor := s.vendorTracedLocked(c.pid)
		for _, w := range tr.Warnings {
			if vendor && strings.Contains(w, "no GPU work") {
				continue // the GPU work comes from the vendor tracer
			}
			// The window's path changes window after window; the message
			// is said once.
			s.warnOnce(fmt.Sprintf("child pid %d: torch.profiler window: %s", c.info.Hello.PID, strings.ReplaceAll(w, tf.Path, filepath.Base(filepath.Dir(tf.Path))+"/window")))
		}
		s.mu.Unlock()
	}
	if v, ok := tr.Meta["baseTimeNanoseconds"]; ok {
		base, _ = strconv.ParseInt(strings.TrimSuffix(v, ".0"), 10, 64)
		if base == 0 {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				base = int64(f)
			}
		}
	}
	// A GPU tracer of the same process (CUPTI or rocprofiler, loaded by
	// an attached agent) brings the GPU work: the window's CPU operators
	// are not shown as kernels then.
	s.mu.Lock()
	vendor := s.vendorTracedLocked(c.pid)
	s.mu.Unlock()
	evs := make([]tracer.Event, 0, len(tr.Events))
	for _, e := range tr.Events {
		switch e.Kind {
		case tracer.KindStep, tracer.KindInstant, tracer.KindUnknown, tracer.KindGPURange:
			continue
		}
		if vendor && e.IsCPUOpKernel() {
			continue
		}
		e.Start += base
		e.Ctx = 0
		evs = append(evs, e)
	}
	// Intervals before the GPU work they enclose, each group by start.
	slices.SortStableFunc(evs, func(a, b tracer.Event) int {
		ga, gb := a.Kind.IsGPU(), b.Kind.IsGPU()
		switch {
		case ga != gb && gb:
			return -1
		case ga != gb:
			return 1
		}
		return cmp.Compare(a.Start, b.Start)
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make(map[tracer.StrID]tracer.StrID)
	for i := range evs {
		e := &evs[i]
		id, ok := ids[e.Name]
		if !ok {
			id = s.strs.Intern(tr.Strings.Get(e.Name))
			ids[e.Name] = id
		}
		e.Name = id
		e.PID = c.pid
	}
	s.ingest(c, evs)
	if vendor {
		// The GPU tracer's kernels launched in this window take its
		// operators' work (work.go).
		s.windowArrived(c.pid, newModelWindow(tr, evs, s.opts.Now().UnixNano()))
	}
	mem := tr.Memory
	for i := range mem {
		mem[i].TS += base
		mem[i].PID = c.pid
	}
	s.addMemory(mem) // memory.go
	if !c.info.Connected {
		s.link.flush(c.pid) // the child is gone: nothing more will come to link against
	}
	s.windows++
	s.version++
}

// vendorTracedLocked reports whether a GPU tracer's library (source cupti
// or rocprof) of process pid is connected. s.mu is held.
func (s *Session) vendorTracedLocked(pid int32) bool {
	for _, c := range s.children {
		if c.info.Connected && c.pid == pid && (c.info.Hello.Source == "cupti" || c.info.Hello.Source == "rocprof") {
			return true
		}
	}
	return false
}

// agentCapturePath reports whether path is a file the Python agent writes
// (a window-N.json in a folder rlktop-kineto-*), the only files rlktop
// removes after importing them.
func agentCapturePath(path string) (bool, string) {
	if !filepath.IsAbs(path) {
		return false, "not an absolute path"
	}
	dir, base := filepath.Split(path)
	if !strings.HasPrefix(filepath.Base(dir), "rlktop-kineto-") || !strings.HasPrefix(base, "window-") || !strings.HasSuffix(base, ".json") {
		return false, "not a torch.profiler window written by rlktop's Python agent (rlktop-kineto-*/window-N.json)"
	}
	return true, ""
}

// openAgentCapture opens a window file the way only the agent's own files
// pass: its folder a real directory (not a link) that only its owner can
// enter (mkdtemp's 0700) and owned by rlktop's user, the file itself a
// regular file of that user, opened without following a link and without
// blocking (a FIFO or device named by a client would hang the import).
// The caller reads f and closes it.
func openAgentCapture(path string) (*os.File, os.FileInfo, error) {
	dir := filepath.Dir(path)
	di, err := os.Lstat(dir)
	if err != nil {
		return nil, nil, err
	}
	uid := uint32(os.Geteuid())
	if !di.IsDir() || di.Mode().Perm()&0o077 != 0 || ownerOf(di) != uid {
		return nil, nil, fmt.Errorf("its folder is not the agent's private directory (a directory of uid %d with mode 0700; it is %v, uid %d)", uid, di.Mode(), ownerOf(di))
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil && (!fi.Mode().IsRegular() || ownerOf(fi) != uid) {
		err = fmt.Errorf("not a regular file of uid %d (%v, uid %d)", uid, fi.Mode(), ownerOf(fi))
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// ownerOf returns the uid owning fi's file (MaxUint32 when unknown).
func ownerOf(fi os.FileInfo) uint32 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Uid
	}
	return ^uint32(0)
}
