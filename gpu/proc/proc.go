// Package proc samples the CPU use and resident memory of a process and
// all its descendants from Linux /proc, in pure Go. It is the telemetry
// that always works: for the built-in loop (no GPU) and next to a GPU
// backend for the traced child.
//
// Sources: /proc/<pid>/stat (fields 4 ppid, 14 utime, 15 stime, in clock
// ticks of USER_HZ = 100 per second, the fixed unit /proc reports on
// Linux), /proc/<pid>/status (VmRSS in KiB), see proc(5).
package proc

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/rlktop/rlktop/gpu/reading"
)

// UserHZ is the unit of utime/stime in /proc/<pid>/stat: clock ticks per
// second. Linux exports these fields in USER_HZ, which is 100 on every
// architecture Go supports.
const UserHZ = 100

// ErrNoProcess is returned (wrapped) when the root process is gone.
var ErrNoProcess = errors.New("process not found")

// Sampler samples one process tree. Safe for concurrent use.
type Sampler struct {
	mu    sync.Mutex
	proc  string // /proc
	root  int
	prev  map[int]uint64 // pid → ticks at the previous sample
	prevT time.Time
}

// New returns a sampler for the tree rooted at pid (0: none yet; Sample
// then returns ErrNoProcess). procRoot is the proc file system's mount
// point; "" means /proc.
func New(pid int, procRoot string) *Sampler {
	if procRoot == "" {
		procRoot = "/proc"
	}
	return &Sampler{proc: procRoot, root: pid}
}

// SetRoot switches the sampler to another tree (a relaunched child) and
// forgets the previous sample.
func (s *Sampler) SetRoot(pid int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.root, s.prev = pid, nil
}

// Root returns the watched pid (0 none).
func (s *Sampler) Root() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.root
}

// Sample reads the tree now. CPU time of a process that exited since the
// previous sample is lost (its parent's cutime is not counted, since that
// would also count children reaped before the watch began); a process
// first seen now counts all its CPU time so far. The error wraps
// ErrNoProcess when the root is gone or not set.
func (s *Sampler) Sample() (reading.ProcStat, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.root <= 0 {
		return reading.ProcStat{CPUPct: -1}, fmt.Errorf("proc: no process to watch: %w", ErrNoProcess)
	}
	now := time.Now()
	procs, err := Scan(s.proc)
	if err != nil {
		return reading.ProcStat{Root: s.root, CPUPct: -1}, err
	}
	tree := Descendants(procs, s.root)
	if !tree[s.root] {
		return reading.ProcStat{Root: s.root, CPUPct: -1}, fmt.Errorf("proc: pid %d: %w (it exited)", s.root, ErrNoProcess)
	}
	st := reading.ProcStat{Root: s.root, At: now, CPUPct: -1}
	cur := make(map[int]uint64, len(tree))
	var delta uint64
	for pid := range tree {
		p := procs[pid]
		cur[pid] = p.Ticks
		st.CPUTicks += p.Ticks
		st.PIDs = append(st.PIDs, pid)
		if rss, err := ReadRSS(s.proc, pid); err == nil {
			st.RSSBytes += rss
		}
		if s.prev != nil {
			if old, ok := s.prev[pid]; ok {
				if p.Ticks > old {
					delta += p.Ticks - old
				}
			} else {
				delta += p.Ticks
			}
		}
	}
	slices.Sort(st.PIDs)
	if s.prev != nil {
		if wall := now.Sub(s.prevT).Seconds(); wall > 0 {
			st.CPUPct = float64(delta) / UserHZ / wall * 100
		}
	}
	s.prev, s.prevT = cur, now
	return st, nil
}

// Proc is one line of the process table.
type Proc struct {
	PID, PPID int
	Ticks     uint64 // utime+stime, 1/UserHZ s
}

// Scan reads /proc/<pid>/stat of every process. Processes that vanish
// while being read are skipped.
func Scan(procRoot string) (map[int]Proc, error) {
	ents, err := os.ReadDir(procRoot)
	if err != nil {
		return nil, fmt.Errorf("proc: cannot list %s: %w", procRoot, err)
	}
	out := make(map[int]Proc, len(ents))
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		p, err := ReadStat(procRoot, pid)
		if err != nil {
			continue
		}
		out[pid] = p
	}
	return out, nil
}

// ReadStat parses /proc/<pid>/stat.
func ReadStat(procRoot string, pid int) (Proc, error) {
	path := filepath.Join(procRoot, strconv.Itoa(pid), "stat")
	b, err := os.ReadFile(path)
	if err != nil {
		return Proc{}, err
	}
	p, err := ParseStat(b)
	if err != nil {
		return Proc{}, fmt.Errorf("%s: %w", path, err)
	}
	p.PID = pid
	return p, nil
}

// ParseStat parses the text of a /proc/<pid>/stat file (PID is left 0).
// The command name (field 2) may hold spaces and parentheses, so fields
// are counted after its last ')'.
func ParseStat(b []byte) (Proc, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return Proc{}, errors.New("no ')' closing the command name")
	}
	f := bytes.Fields(b[i+1:])
	// f[0] is field 3 (state); ppid is field 4, utime 14, stime 15.
	if len(f) < 13 {
		return Proc{}, fmt.Errorf("%d fields after the command name, want at least 13", len(f))
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	ut, err2 := strconv.ParseUint(string(f[11]), 10, 64)
	stime, err3 := strconv.ParseUint(string(f[12]), 10, 64)
	if err := errors.Join(err1, err2, err3); err != nil {
		return Proc{}, err
	}
	return Proc{PPID: ppid, Ticks: ut + stime}, nil
}

// ReadRSS returns VmRSS of /proc/<pid>/status in bytes (0 for kernel
// threads and zombies, which have no VmRSS line).
func ReadRSS(procRoot string, pid int) (int64, error) {
	path := filepath.Join(procRoot, strconv.Itoa(pid), "status")
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	for line := range bytes.SplitSeq(b, []byte{'\n'}) {
		v, ok := bytes.CutPrefix(line, []byte("VmRSS:"))
		if !ok {
			continue
		}
		f := bytes.Fields(v)
		if len(f) < 1 {
			return 0, fmt.Errorf("%s: empty VmRSS", path)
		}
		kb, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: VmRSS: %w", path, err)
		}
		return kb * 1024, nil
	}
	return 0, nil
}

// Descendants returns root and every process whose parent chain reaches
// root, as a set. root is absent from the set when it is not in procs.
func Descendants(procs map[int]Proc, root int) map[int]bool {
	children := make(map[int][]int, len(procs))
	for pid, p := range procs {
		children[p.PPID] = append(children[p.PPID], pid)
	}
	set := map[int]bool{}
	if _, ok := procs[root]; !ok {
		return set
	}
	stack := []int{root}
	for len(stack) > 0 {
		pid := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if set[pid] {
			continue
		}
		set[pid] = true
		stack = append(stack, children[pid]...)
	}
	return set
}
