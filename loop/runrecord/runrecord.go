// Package runrecord collects the facts that make a measurement
// reproducible — what ran, where, with which flags, environment, code,
// toolchain, machine and driver — stores them as string key/value pairs
// (keys prefixed "run.") that travel in wire Meta frames and
// tracer.Trace.Meta, and prints them for `rlktop report --meta`.
package runrecord

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rlktop/rlktop/gpu/reading"
	"github.com/rlktop/rlktop/internal/escape"
	"github.com/rlktop/rlktop/tracer/livestate"
)

// Unknown is the value of a fact that could not be found out.
const Unknown = "unknown"

// EnvPrefixes are the prefixes of environment variables recorded from the
// environment in which rlktop runs (they change what GPU code does).
var EnvPrefixes = []string{"CUDA_", "ROCM_", "HIP_", "TORCH_", "NCCL_", "PYTORCH_"}

// Fingerprint is the SHA-256 of a file named with --fingerprint.
type Fingerprint struct {
	Path   string `json:"path"`             // as given
	SHA256 string `json:"sha256,omitempty"` // lower-case hex; "" when unreadable
	Bytes  int64  `json:"bytes"`
	Err    string `json:"error,omitempty"` // why it could not be read
}

// Git is the state of the repository holding the working directory.
type Git struct {
	Revision string // full commit hash; Unknown without git or a repository
	Dirty    string // "true", "false" or Unknown
	Changed  int    // lines of `git status --porcelain` (changed + untracked files)
	Top      string // repository top-level directory; "" unknown
}

// Record is one run's record. Times are wall-clock; Exit is meaningful
// only when Finished.
type Record struct {
	Command    []string // the traced command; nil for the built-in loop
	RlktopArgs []string // rlktop's own command line (os.Args)
	Dir        string   // working directory of the command
	Arms       []livestate.Arm
	Flags      []string          // the --flag specs as given
	EnvSet     map[string]string // variables rlktop set for the child
	Env        map[string]string // CUDA_*/ROCM_*/HIP_*/TORCH_*/NCCL_*/PYTORCH_* from the environment
	Git        Git
	Files      []Fingerprint
	Version    string // rlktop module version ("(devel)" for a source build)
	VCS        string // revision rlktop was built from, "+dirty" when modified; "" unknown
	GoVersion  string // toolchain that built rlktop
	OS         string // GOOS/GOARCH
	Kernel     string // kernel release and version (uname -r -v)
	CPU        string // CPU model name
	CPUs       int    // logical CPUs
	GPUs       []reading.Info
	Start, End time.Time
	Exit       int
	Finished   bool

	now func() time.Time
}

// Options say what Collect records. Zero values fall back to the process's
// own state where one exists.
type Options struct {
	Command    []string
	RlktopArgs []string // nil: os.Args
	Dir        string   // "": os.Getwd
	Arms       []livestate.Arm
	Flags      []string
	EnvSet     map[string]string
	Environ    []string // nil: os.Environ()
	// Fingerprint names files to hash (relative paths are taken from Dir).
	Fingerprint []string
	// GPUs are the device infos to record, e.g. gpu.Monitor.Infos().
	GPUs []reading.Info
	// GitTimeout bounds each git command; 0 means 5 s.
	GitTimeout time.Duration
	// ProcRoot is the proc file system (CPU model, kernel); "" is /proc.
	ProcRoot string
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// Collect builds a record, starting now. It fails only on an unusable
// working directory; facts it cannot learn become Unknown, and an
// unreadable fingerprint file is recorded with its error (rlktop warns).
func Collect(opts Options) (*Record, error) {
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	procRoot := opts.ProcRoot
	if procRoot == "" {
		procRoot = "/proc"
	}
	r := &Record{
		Command:    append([]string(nil), opts.Command...),
		RlktopArgs: opts.RlktopArgs,
		Dir:        opts.Dir,
		Arms:       opts.Arms,
		Flags:      opts.Flags,
		EnvSet:     map[string]string{},
		Env:        map[string]string{},
		GPUs:       opts.GPUs,
		Start:      now(),
		OS:         runtime.GOOS + "/" + runtime.GOARCH,
		CPUs:       runtime.NumCPU(),
		GoVersion:  runtime.Version(),
		Version:    Unknown,
		now:        now,
	}
	if r.RlktopArgs == nil {
		r.RlktopArgs = append([]string(nil), os.Args...)
	}
	if r.Dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("run record: cannot find the working directory: %w", err)
		}
		r.Dir = wd
	}
	if st, err := os.Stat(r.Dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("run record: working directory %s is not a directory: %v", r.Dir, err)
	}
	for k, v := range opts.EnvSet {
		r.EnvSet[k] = v
	}
	env := opts.Environ
	if env == nil {
		env = os.Environ()
	}
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		for _, p := range EnvPrefixes {
			if strings.HasPrefix(k, p) {
				r.Env[k] = v
				break
			}
		}
	}
	timeout := opts.GitTimeout
	if timeout == 0 {
		timeout = 5 * time.Second
	}
	r.Git = gitState(r.Dir, timeout)
	for _, p := range opts.Fingerprint {
		r.Files = append(r.Files, fingerprint(r.Dir, p))
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		r.Version = bi.Main.Version
		if bi.GoVersion != "" {
			r.GoVersion = bi.GoVersion
		}
		var rev string
		var modified bool
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if rev != "" {
			r.VCS = rev
			if modified {
				r.VCS += "+dirty"
			}
		}
	}
	r.Kernel = kernel(procRoot)
	r.CPU = cpuModel(procRoot)
	return r, nil
}

// Finish records the end time and the command's exit status (0 success;
// a signal-killed child by convention 128+signal).
func (r *Record) Finish(exit int) {
	now := r.now
	if now == nil {
		now = time.Now
	}
	r.End = now()
	r.Exit = exit
	r.Finished = true
}

// gitState runs `git rev-parse HEAD`, `git rev-parse --show-toplevel` and
// `git status --porcelain` in dir, each bounded by timeout.
func gitState(dir string, timeout time.Duration) Git {
	g := Git{Revision: Unknown, Dirty: Unknown}
	run := func(args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0", "LC_ALL=C")
		out, err := cmd.Output()
		return string(out), err
	}
	rev, err := run("rev-parse", "HEAD")
	if err != nil {
		return g
	}
	g.Revision = strings.TrimSpace(rev)
	if top, err := run("rev-parse", "--show-toplevel"); err == nil {
		g.Top = strings.TrimSpace(top)
	}
	st, err := run("status", "--porcelain")
	if err != nil {
		return g
	}
	for _, l := range strings.Split(st, "\n") {
		if strings.TrimSpace(l) != "" {
			g.Changed++
		}
	}
	g.Dirty = strconv.FormatBool(g.Changed > 0)
	return g
}

func fingerprint(dir, p string) Fingerprint {
	fp := Fingerprint{Path: p}
	path := p
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	f, err := os.Open(path)
	if err != nil {
		fp.Err = err.Error()
		return fp
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		fp.Err = fmt.Sprintf("read %s: %v", path, err)
		return fp
	}
	fp.SHA256, fp.Bytes = hex.EncodeToString(h.Sum(nil)), n
	return fp
}

// kernel reads the release and version uname reports, from
// /proc/sys/kernel/{osrelease,version}.
func kernel(procRoot string) string {
	rel, err1 := os.ReadFile(filepath.Join(procRoot, "sys/kernel/osrelease"))
	ver, err2 := os.ReadFile(filepath.Join(procRoot, "sys/kernel/version"))
	if err1 != nil {
		return Unknown
	}
	s := strings.TrimSpace(string(rel))
	if err2 == nil {
		s += " " + strings.TrimSpace(string(ver))
	}
	return s
}

// cpuModel returns the first "model name" of /proc/cpuinfo (x86), else
// the first "Model"/"CPU part" line (ARM).
func cpuModel(procRoot string) string {
	b, err := os.ReadFile(filepath.Join(procRoot, "cpuinfo"))
	if err != nil {
		return Unknown
	}
	var fallback string
	for _, l := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "model name":
			return v
		case "Model", "Hardware":
			if fallback == "" {
				fallback = v
			}
		}
	}
	if fallback != "" {
		return fallback
	}
	return Unknown
}

// Meta key prefix.
const Prefix = "run."

// Keys of the record in Meta. Lists and maps are JSON text; times are
// RFC 3339 with nanoseconds.
const (
	KeyFormat     = "run.record"      // record format version, "1"
	KeyCommand    = "run.command"     // JSON array; absent for the built-in loop
	KeyArgs       = "run.rlktop_args" // JSON array
	KeyDir        = "run.dir"
	KeyArms       = "run.arms"    // JSON [{"name","flags"}]
	KeyFlags      = "run.flags"   // JSON array
	KeyEnvSet     = "run.env_set" // JSON object
	KeyEnv        = "run.env"     // JSON object
	KeyGitRev     = "run.git.revision"
	KeyGitDirty   = "run.git.dirty"
	KeyGitChanged = "run.git.changed"
	KeyGitTop     = "run.git.top"
	KeyFiles      = "run.fingerprints" // JSON [{"path","sha256","bytes","error"}]
	KeyVersion    = "run.rlktop.version"
	KeyVCS        = "run.rlktop.vcs"
	KeyGo         = "run.go"
	KeyOS         = "run.os"
	KeyKernel     = "run.kernel"
	KeyCPU        = "run.cpu"
	KeyCPUs       = "run.cpus"
	KeyGPUs       = "run.gpus" // JSON [reading.Info]
	KeyStart      = "run.start"
	KeyEnd        = "run.end"
	KeyExit       = "run.exit"
)

// FormatVersion is the value of KeyFormat this package writes.
const FormatVersion = "1"

// Meta returns the record as key/value pairs, every key starting with
// "run.". End and exit are present only once Finish was called.
func (r *Record) Meta() map[string]string {
	m := map[string]string{KeyFormat: FormatVersion}
	js := func(k string, v any) {
		b, err := json.Marshal(v)
		if err == nil {
			m[k] = string(b)
		}
	}
	if r.Command != nil {
		js(KeyCommand, r.Command)
	}
	js(KeyArgs, r.RlktopArgs)
	m[KeyDir] = r.Dir
	if len(r.Arms) > 0 {
		js(KeyArms, r.Arms)
	}
	if len(r.Flags) > 0 {
		js(KeyFlags, r.Flags)
	}
	js(KeyEnvSet, r.EnvSet)
	js(KeyEnv, r.Env)
	m[KeyGitRev] = r.Git.Revision
	m[KeyGitDirty] = r.Git.Dirty
	m[KeyGitChanged] = strconv.Itoa(r.Git.Changed)
	if r.Git.Top != "" {
		m[KeyGitTop] = r.Git.Top
	}
	if len(r.Files) > 0 {
		js(KeyFiles, r.Files)
	}
	m[KeyVersion] = r.Version
	if r.VCS != "" {
		m[KeyVCS] = r.VCS
	}
	m[KeyGo] = r.GoVersion
	m[KeyOS] = r.OS
	m[KeyKernel] = r.Kernel
	m[KeyCPU] = r.CPU
	m[KeyCPUs] = strconv.Itoa(r.CPUs)
	if len(r.GPUs) > 0 {
		js(KeyGPUs, r.GPUs)
	}
	m[KeyStart] = r.Start.Format(time.RFC3339Nano)
	if r.Finished {
		m[KeyEnd] = r.End.Format(time.RFC3339Nano)
		m[KeyExit] = strconv.Itoa(r.Exit)
	}
	return m
}

// ErrNoRecord is returned by FromMeta when meta holds no run record.
var ErrNoRecord = errors.New("no run record in this trace")

// FromMeta rebuilds a record from key/value pairs written by Meta (other
// keys are ignored). Errors name the malformed key; a trace without the
// record gives ErrNoRecord.
func FromMeta(meta map[string]string) (*Record, error) {
	if _, ok := meta[KeyFormat]; !ok {
		return nil, ErrNoRecord
	}
	r := &Record{}
	var errs []error
	js := func(k string, v any) {
		s, ok := meta[k]
		if !ok {
			return
		}
		if err := json.Unmarshal([]byte(s), v); err != nil {
			errs = append(errs, fmt.Errorf("run record: key %s: %w", k, err))
		}
	}
	num := func(k string) int {
		s, ok := meta[k]
		if !ok {
			return 0
		}
		n, err := strconv.Atoi(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("run record: key %s: %q is not an integer", k, s))
		}
		return n
	}
	tm := func(k string) time.Time {
		s, ok := meta[k]
		if !ok {
			return time.Time{}
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			errs = append(errs, fmt.Errorf("run record: key %s: %q is not an RFC 3339 time", k, s))
		}
		return t
	}
	js(KeyCommand, &r.Command)
	js(KeyArgs, &r.RlktopArgs)
	r.Dir = meta[KeyDir]
	js(KeyArms, &r.Arms)
	js(KeyFlags, &r.Flags)
	js(KeyEnvSet, &r.EnvSet)
	js(KeyEnv, &r.Env)
	r.Git = Git{Revision: meta[KeyGitRev], Dirty: meta[KeyGitDirty], Changed: num(KeyGitChanged), Top: meta[KeyGitTop]}
	js(KeyFiles, &r.Files)
	r.Version, r.VCS, r.GoVersion = meta[KeyVersion], meta[KeyVCS], meta[KeyGo]
	r.OS, r.Kernel, r.CPU, r.CPUs = meta[KeyOS], meta[KeyKernel], meta[KeyCPU], num(KeyCPUs)
	js(KeyGPUs, &r.GPUs)
	r.Start = tm(KeyStart)
	if _, ok := meta[KeyEnd]; ok {
		r.End, r.Exit, r.Finished = tm(KeyEnd), num(KeyExit), true
	}
	return r, errors.Join(errs...)
}

// WriteText prints the record for people, one fact per line, grouped.
func (r *Record) WriteText(w io.Writer) error {
	var b bytes.Buffer
	line := func(k, v string) { fmt.Fprintf(&b, "  %-14s %s\n", k+":", v) }
	b.WriteString("run\n")
	if r.Command != nil {
		line("command", ShellJoin(r.Command))
	} else {
		line("command", "(built-in training loop)")
	}
	line("rlktop args", ShellJoin(r.RlktopArgs))
	line("directory", r.Dir)
	line("started", fmtTime(r.Start))
	if r.Finished {
		line("ended", fmt.Sprintf("%s (%s)", fmtTime(r.End), r.End.Sub(r.Start).Round(time.Millisecond)))
		line("exit status", strconv.Itoa(r.Exit))
	} else {
		line("ended", "(not finished: the recorder stopped before the command ended)")
	}
	if len(r.Flags) > 0 {
		line("flags", strings.Join(r.Flags, " "))
	}
	for _, a := range r.Arms {
		line("arm", a.Name+" "+kvs(a.Flags))
	}
	b.WriteString("code\n")
	dirty := r.Git.Dirty
	if dirty == "true" {
		dirty = fmt.Sprintf("dirty (%d changed or untracked files)", r.Git.Changed)
	} else if dirty == "false" {
		dirty = "clean"
	}
	line("git revision", r.Git.Revision)
	line("git state", dirty)
	if r.Git.Top != "" {
		line("repository", r.Git.Top)
	}
	for _, f := range r.Files {
		if f.Err != "" {
			line("fingerprint", f.Path+": unreadable: "+f.Err)
		} else {
			line("fingerprint", fmt.Sprintf("%s sha256:%s (%d bytes)", f.Path, f.SHA256, f.Bytes))
		}
	}
	b.WriteString("environment\n")
	if len(r.EnvSet) == 0 && len(r.Env) == 0 {
		line("variables", "(none recorded)")
	}
	for _, k := range slices.Sorted(maps.Keys(r.EnvSet)) {
		line("set by rlktop", k+"="+r.EnvSet[k])
	}
	for _, k := range slices.Sorted(maps.Keys(r.Env)) {
		line("inherited", k+"="+r.Env[k])
	}
	b.WriteString("software\n")
	v := r.Version
	if r.VCS != "" {
		v += " (" + r.VCS + ")"
	}
	line("rlktop", v)
	line("go", r.GoVersion)
	line("os", r.OS)
	line("kernel", r.Kernel)
	b.WriteString("machine\n")
	line("cpu", fmt.Sprintf("%s (%d logical CPUs)", r.CPU, r.CPUs))
	if len(r.GPUs) == 0 {
		line("gpu", "(none recorded)")
	}
	for _, g := range r.GPUs {
		var parts []string
		for _, p := range [][2]string{{"driver", g.Driver}, {"CUDA", g.CUDA}, {"ROCm", g.ROCm}, {"library", g.Library}} {
			if p[1] != "" {
				parts = append(parts, p[0]+" "+p[1])
			}
		}
		line(g.Vendor, strings.Join(parts, ", "))
		for _, d := range g.Devices {
			desc := fmt.Sprintf("%d: %s", d.ID, d.Name)
			if d.TotalMemory > 0 {
				desc += fmt.Sprintf(", %.1f GiB", float64(d.TotalMemory)/(1<<30))
			}
			if d.ComputeCap != "" {
				desc += ", compute " + d.ComputeCap
			}
			if d.SMs > 0 {
				desc += fmt.Sprintf(", %d SMs", d.SMs)
			}
			if u := d.Props["uuid"]; u != "" {
				desc += ", " + u
			}
			line("device", desc)
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// PrintMeta prints a trace's metadata for `rlktop report --meta`: the run
// record when present (WriteText), then every other key sorted, as
// "key: value". A malformed record is reported and the raw keys printed.
func PrintMeta(w io.Writer, meta map[string]string) error {
	r, err := FromMeta(meta)
	switch {
	case errors.Is(err, ErrNoRecord):
		fmt.Fprintln(w, "run record: none (this trace was not recorded by rlktop)")
	case err != nil:
		fmt.Fprintf(w, "run record: malformed: %v\n", err)
	default:
		if err := r.WriteText(w); err != nil {
			return err
		}
	}
	var other []string
	for k := range meta {
		if err != nil || !strings.HasPrefix(k, Prefix) {
			other = append(other, k)
		}
	}
	if len(other) == 0 {
		return nil
	}
	sort.Strings(other)
	fmt.Fprintln(w, "source metadata")
	for _, k := range other {
		// A value is one line: control characters (a newline the source
		// left at its end, a log line glued to it) are escaped, never
		// printed raw where they would look like another key's text.
		if _, err := fmt.Fprintf(w, "  %s: %s\n", escape.Control(k), escape.Control(meta[k])); err != nil {
			return err
		}
	}
	return nil
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return Unknown
	}
	return t.Format("2006-01-02 15:04:05.000 MST")
}

func kvs(m map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, " ")
}

// ShellJoin quotes args so that a POSIX shell would split them back
// (run records, rlktop run's messages about the command).
func ShellJoin(args []string) string {
	var parts []string
	for _, a := range args {
		if a != "" && strings.IndexFunc(a, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r))
		}) < 0 {
			parts = append(parts, a)
			continue
		}
		parts = append(parts, "'"+strings.ReplaceAll(a, "'", `'\''`)+"'")
	}
	return strings.Join(parts, " ")
}
