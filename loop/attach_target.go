package loop

import (
	"bytes"
	"cmp"
	"debug/elf"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// ErrAttach is wrapped by every error that stops `rlktop attach` before
// its agent runs in the target: the target was not changed.
var ErrAttach = errors.New("cannot attach")

// AttachError says why rlktop cannot attach to a process and what to do.
type AttachError struct {
	PID    int
	Reason string // what is in the way ("pid 12 runs as user alice (uid 1001) …")
	Hint   string // what to do instead; "" when nothing helps
}

func (e *AttachError) Error() string {
	s := fmt.Sprintf("cannot attach to pid %d: %s", e.PID, e.Reason)
	if e.Hint != "" {
		s += "; " + e.Hint
	}
	return s + " (the process was not changed)"
}

func (e *AttachError) Unwrap() error { return ErrAttach }

// ptraceHint says what to do when the kernel refuses ptrace.
const ptraceHint = "attaching needs the ptrace permission: in a container, run it with CAP_SYS_PTRACE (docker run --cap-add SYS_PTRACE); a process that made itself non-dumpable, or holds capabilities rlktop lacks, cannot be traced; else start the job under `rlktop run`"

// Target is a running process rlktop may attach to, as /proc shows it.
type Target struct {
	PID int
	// StartTime is the process's start in clock ticks since boot
	// (/proc/PID/stat field 22): with PID it names the process, not a
	// later one that reuses the number.
	StartTime uint64
	UID       int    // real uid
	Exe       string // the executable (/proc/PID/exe)
	Cmdline   []string
	// Python is the interpreter's version, major*100+minor (313 for
	// 3.13); 0 when not a Python process.
	Python int
	// Libpython is the shared libpython the process mapped, "" when the
	// executable holds the interpreter (Debian's python3.13).
	Libpython string
	// CUDA is the CUDA library the process mapped (libcupti.so*, else
	// libcuda.so*), "" when it maps neither: CUDA may be in use, so the
	// agent loads rlktop's CUPTI library into it.
	CUDA string
	// ROCm is the rocprofiler-register library the process mapped
	// (librocprofiler-register.so*, which HIP and HSA load), "" when
	// none: the agent may attach rlktop's rocprofiler-sdk tool library
	// through its attach entry.
	ROCm string
	// ROCmAttach reports whether ROCP_TOOL_ATTACH=1 was in the process's
	// environment at its start: rocprofiler-register takes a tool after
	// start only then, or when it was built with default attachment
	// (ROCPROFILER_REGISTER_BUILD_DEFAULT_ATTACHMENT), which /proc cannot
	// show, so the agent tries either way and says why it failed.
	ROCmAttach bool
	// GoLib is a Go shared library the process mapped (an ELF object
	// with a .go.buildinfo section, the executable aside), "" when none:
	// a second Go runtime (rlktop's CUPTI library) must not be loaded.
	GoLib string
}

// PythonVersion is "3.13".
func (t Target) PythonVersion() string { return fmt.Sprintf("%d.%d", t.Python/100, t.Python%100) }

// RemoteExec reports whether the target's Python has sys.remote_exec
// (3.14, PEP 768), the injection route that needs no debugger.
func (t Target) RemoteExec() bool { return t.Python >= 314 }

// procRoot is where InspectTarget reads processes. No test points it
// elsewhere: the tests of attaching read real processes.
const procRoot = "/proc"

var pythonName = regexp.MustCompile(`(?:^|/)(?:lib)?python(\d)\.(\d+)[a-z]*(?:\.so[.\d]*|-config)?$`)

// InspectTarget reads what attaching needs to know about pid and checks,
// in this order, that it exists, runs as this user, in this root, was not
// launched by rlktop, is a CPython, and may be traced (ptrace). Every
// refusal is an *AttachError (ErrAttach); nothing is written to the
// process.
func InspectTarget(pid int) (Target, error) {
	t := Target{PID: pid}
	dir := filepath.Join(procRoot, strconv.Itoa(pid))
	stat, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil || pid <= 0 {
		return t, &AttachError{PID: pid, Reason: "no such process", Hint: "give the pid of the running Python (ps -C python3 -o pid,args; a shell's `cmd &` in a subshell is not the Python's pid)"}
	}
	if t.StartTime, err = statStartTime(stat); err != nil {
		return t, &AttachError{PID: pid, Reason: err.Error()}
	}
	if st := statState(stat); st == "Z" || st == "X" {
		return t, &AttachError{PID: pid, Reason: "the process has exited (state " + st + ")"}
	}
	if t.UID, err = statusUID(dir); err != nil {
		return t, &AttachError{PID: pid, Reason: err.Error()}
	}
	if me := os.Geteuid(); t.UID != me {
		return t, &AttachError{PID: pid,
			Reason: fmt.Sprintf("it runs as %s, rlktop as %s", userName(t.UID), userName(me)),
			Hint:   fmt.Sprintf("run rlktop attach as %s (the agent's files and socket must be that user's)", userName(t.UID))}
	}
	if same, err := sameRoot(dir); err == nil && !same {
		return t, &AttachError{PID: pid, Reason: "it runs in another root or mount namespace (a container or chroot), where rlktop's files and socket are not visible",
			Hint: "run rlktop inside it (docker exec, or nsenter -t PID -m -p)"}
	}
	// /proc/PID/exe, maps and environ need the ptrace read permission:
	// refused here, attaching is refused too.
	exe, err := os.Readlink(filepath.Join(dir, "exe"))
	if errors.Is(err, fs.ErrPermission) {
		return t, &AttachError{PID: pid, Reason: "the kernel does not let rlktop inspect it (ptrace access denied: " + err.Error() + ")",
			Hint: ptraceHint}
	}
	t.Exe = exe
	if env, err := os.ReadFile(filepath.Join(dir, "environ")); err == nil {
		for _, kv := range bytes.Split(env, []byte{0}) {
			if string(kv) == "ROCP_TOOL_ATTACH=1" {
				t.ROCmAttach = true
			}
			if bytes.HasPrefix(kv, []byte("RLKTOP_SOCKET=")) {
				return t, &AttachError{PID: pid, Reason: "it was launched by rlktop (RLKTOP_SOCKET is in its environment): its agent reports to that rlktop",
					Hint: "use that rlktop's TUI, or start the job without rlktop to attach to it"}
			}
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "cmdline")); err == nil {
		for _, a := range bytes.Split(bytes.TrimRight(b, "\x00"), []byte{0}) {
			t.Cmdline = append(t.Cmdline, string(a))
		}
	}
	t.Python, t.Libpython = pythonOf(dir, t.Exe)
	t.CUDA, t.ROCm = gpuLibsOf(dir)
	if t.CUDA != "" || t.ROCm != "" {
		t.GoLib = goLibOf(dir, t.Exe)
	}
	if t.Python == 0 {
		prog := t.Exe
		if prog == "" && len(t.Cmdline) > 0 {
			prog = t.Cmdline[0]
		}
		return t, &AttachError{PID: pid, Reason: fmt.Sprintf("it is not a Python process (its program is %s, and it maps no libpython)", prog),
			Hint: "rlktop attach injects a Python agent; launch other programs under `rlktop run -- CMD`, where the GPU tracers attach at start"}
	}
	if t.Python < 300 {
		return t, &AttachError{PID: pid, Reason: "its Python is " + t.PythonVersion(), Hint: "the agent needs Python 3"}
	}
	if err := ptraceAllowed(pid); err != nil {
		return t, err
	}
	return t, nil
}

// statStartTime is field 22 of /proc/PID/stat (after the parenthesised
// command name, which may hold spaces and parentheses).
func statStartTime(stat []byte) (uint64, error) {
	f := statFields(stat)
	if len(f) < 20 {
		return 0, fmt.Errorf("/proc stat has %d fields after the name", len(f))
	}
	return strconv.ParseUint(f[19], 10, 64) // field 22 is the 20th after "pid (comm)"
}

func statState(stat []byte) string {
	if f := statFields(stat); len(f) > 0 {
		return f[0]
	}
	return ""
}

func statFields(stat []byte) []string {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(string(stat[i+1:]))
}

// statusUID is the real uid of /proc/PID/status's "Uid:" line.
func statusUID(dir string) (int, error) {
	b, err := os.ReadFile(filepath.Join(dir, "status"))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "Uid:" {
			return strconv.Atoi(f[1])
		}
	}
	return 0, errors.New("no Uid line in /proc status")
}

func userName(uid int) string {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		return fmt.Sprintf("user %s (uid %d)", u.Username, uid)
	}
	return fmt.Sprintf("uid %d", uid)
}

// sameRoot reports whether the process's root directory is this one's.
func sameRoot(dir string) (bool, error) {
	a, err := os.Stat(filepath.Join(dir, "root"))
	if err != nil {
		return false, err
	}
	b, err := os.Stat("/")
	if err != nil {
		return false, err
	}
	return os.SameFile(a, b), nil
}

// gpuLibsOf reads the libraries the process at dir maps: cuda is the
// first libcupti.so*, else its libcuda.so*, else ""; rocm the first
// librocprofiler-register.so*, else "".
func gpuLibsOf(dir string) (cuda, rocm string) {
	maps, err := os.ReadFile(filepath.Join(dir, "maps"))
	if err != nil {
		return "", ""
	}
	cupti, driver := "", ""
	for _, line := range strings.Split(string(maps), "\n") {
		f := strings.Fields(line)
		if len(f) < 6 {
			continue
		}
		switch base := filepath.Base(f[5]); {
		case cupti == "" && strings.HasPrefix(base, "libcupti.so"):
			cupti = f[5]
		case driver == "" && strings.HasPrefix(base, "libcuda.so"):
			driver = f[5]
		case rocm == "" && strings.HasPrefix(base, "librocprofiler-register.so"):
			rocm = f[5]
		}
	}
	return cmp.Or(cupti, driver), rocm
}

// goLibOf is the first shared object the process at dir maps, other than
// its executable exe, that holds Go code (a .go.buildinfo section, which
// every Go binary and c-shared library carries), else "".
func goLibOf(dir, exe string) string {
	maps, err := os.ReadFile(filepath.Join(dir, "maps"))
	if err != nil {
		return ""
	}
	seen := map[string]bool{exe: true}
	for _, line := range strings.Split(string(maps), "\n") {
		f := strings.Fields(line)
		if len(f) < 6 || !strings.HasPrefix(f[5], "/") || seen[f[5]] || !strings.Contains(filepath.Base(f[5]), ".so") {
			continue
		}
		seen[f[5]] = true
		// Through the process's root: the path is as the process sees it.
		e, err := elf.Open(filepath.Join(dir, "root", f[5]))
		if err != nil {
			continue
		}
		goCode := e.Section(".go.buildinfo") != nil
		e.Close()
		if goCode {
			return f[5]
		}
	}
	return ""
}

// pythonOf finds the CPython version from the executable's name
// (python3.13) or a mapped libpython3.13.so, else by asking the
// executable itself when its name says python. It returns 0 for a
// process that is not a Python.
func pythonOf(dir, exe string) (int, string) {
	if maps, err := os.ReadFile(filepath.Join(dir, "maps")); err == nil {
		for _, line := range strings.Split(string(maps), "\n") {
			f := strings.Fields(line)
			if len(f) < 6 || !strings.Contains(f[5], "libpython") {
				continue
			}
			if v := versionOf(f[5]); v > 0 {
				return v, f[5]
			}
		}
	}
	if v := versionOf(exe); v > 0 {
		return v, ""
	}
	base := filepath.Base(exe)
	if strings.HasPrefix(base, "python") {
		// python3 built without a version suffix: ask it.
		out, err := exec.Command(exe, "-c", "import sys; print(sys.version_info[0] * 100 + sys.version_info[1])").Output()
		if err == nil {
			if v, err := strconv.Atoi(strings.TrimSpace(string(out))); err == nil {
				return v, ""
			}
		}
	}
	return 0, ""
}

func versionOf(path string) int {
	m := pythonName.FindStringSubmatch(path)
	if m == nil {
		return 0
	}
	maj, _ := strconv.Atoi(m[1])
	min, _ := strconv.Atoi(m[2])
	return maj*100 + min
}

// ptraceAllowed checks what the kernel lets this process do to pid
// before anything touches it: Yama's kernel.yama.ptrace_scope (1: only
// descendants without CAP_SYS_PTRACE; 2: CAP_SYS_PTRACE only; 3: never)
// and the target's dumpable flag is found by the debugger itself (its
// "Operation not permitted" becomes an AttachError too).
func ptraceAllowed(pid int) error {
	b, err := os.ReadFile(filepath.Join(procRoot, "sys/kernel/yama/ptrace_scope"))
	if err != nil {
		return nil // no Yama: the usual same-user rule, checked above
	}
	scope, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	capPtrace := hasCapSysPtrace()
	switch {
	case scope >= 3:
		return &AttachError{PID: pid, Reason: "kernel.yama.ptrace_scope is 3: this kernel lets no process trace another until reboot",
			Hint: "start the job under `rlktop run` instead"}
	case scope == 2 && !capPtrace:
		return &AttachError{PID: pid, Reason: "kernel.yama.ptrace_scope is 2: only a process with CAP_SYS_PTRACE may trace another",
			Hint: "run rlktop attach as root (sudo), or start the job under `rlktop run`"}
	case scope == 1 && !capPtrace:
		return &AttachError{PID: pid, Reason: "kernel.yama.ptrace_scope is 1: a process may trace only its own descendants",
			Hint: "run rlktop attach with CAP_SYS_PTRACE (sudo), or allow it with `sudo sysctl kernel.yama.ptrace_scope=0`, or start the job under `rlktop run`"}
	}
	return nil
}

// hasCapSysPtrace reports whether this process's effective capabilities
// hold CAP_SYS_PTRACE (bit 19 of /proc/self/status CapEff).
func hasCapSysPtrace() bool {
	b, err := os.ReadFile(filepath.Join(procRoot, "self/status"))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "CapEff:"); ok {
			c, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return err == nil && c&(1<<19) != 0
		}
	}
	return false
}

// procStartTime is pid's start time (StartTime), or ok false when no
// process has that pid.
func procStartTime(pid int) (uint64, bool) {
	b, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, false
	}
	if st := statState(b); st == "Z" || st == "X" {
		return 0, false
	}
	v, err := statStartTime(b)
	return v, err == nil
}
