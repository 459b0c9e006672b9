// Package pyagent holds rlktop's in-process agent for Python commands:
// a standard-library-only Python package (py/rlktop) and a sitecustomize
// that starts it, embedded in the rlktop binary. `rlktop run`, `record` and
// `compare` extract them (tracer/cupti/launch.ExtractFiles) and put the
// folder on the child's PYTHONPATH; the agent then speaks the wire protocol
// to RLKTOP_SOCKET: steps (rlktop.step(), else every optimizer step),
// stages (rlktop.stage()), flags flipped in the running process at the
// next step boundary, and torch.profiler ("Kineto") windows handed to
// rlktop as trace files (wire.TypeTraceFile).
//
// The Python side is documented in py/rlktop/__init__.py. Environment the
// launcher sets: RLKTOP_SOCKET (wire address), RLKTOP_FLAGS (flags in force
// at start, "k=v,k=v"), RLKTOP_KINETO ("EVERY:LEN" steps, "1" = 10:2, "0"
// off); RLKTOP_AGENT=0 turns the agent off.
package pyagent

import (
	"embed"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/rlktop/rlktop/tracer/flagtab"
)

//go:embed py/sitecustomize.py py/rlktop/*.py
var files embed.FS

// Source is the agent's msg.Hello Source.
const Source = "pyagent"

// Environment variables the launcher sets for the agent.
const (
	EnvFlags  = "RLKTOP_FLAGS"  // "k=v,k=v": flags in force at start
	EnvKineto = "RLKTOP_KINETO" // "EVERY:LEN": a torch.profiler window of LEN steps every EVERY steps; "0" off
	// EnvKinetoDir is the folder the agent makes its private
	// rlktop-kineto-* folder of windows in: rlktop's socket directory,
	// which rlktop removes however the process ends (os._exit too).
	EnvKinetoDir = "RLKTOP_KINETO_DIR"
	// EnvKinetoShapes "0": the windows record no input shapes
	// (record_shapes=False), so no FLOPs or bytes; default on.
	EnvKinetoShapes = "RLKTOP_KINETO_SHAPES"
	EnvAgent        = "RLKTOP_AGENT" // "0": do not start the agent
	// EnvProfileMemory "0" turns torch.profiler's profile_memory off in
	// the windows (on by default: the memory model's allocations).
	EnvProfileMemory = "RLKTOP_PROFILE_MEMORY"
	// EnvSampleHz: Python stack samples a second (py/rlktop/_sampler.py;
	// unset: DefaultSampleHz; "0": off).
	EnvSampleHz = "RLKTOP_PY_SAMPLE_HZ"
)

// DefaultSampleHz is the Python sampler's default rate, samples a second:
// at 100 Hz its cost stays under 1% of a 50 ms step (BenchmarkPySampler's
// figure, tracer/pyagent/sampler_test.go).
const DefaultSampleHz = 100

// SampleHzEnv renders a sampling rate as EnvSampleHz's value: "0" (off)
// for an untraced run or a rate ≤ 0.
func SampleHzEnv(hz float64, untraced bool) string {
	if untraced || hz <= 0 {
		return "0"
	}
	return strconv.FormatFloat(hz, 'g', -1, 64)
}

// Files returns the agent's files, slash-separated paths relative to the
// folder that goes on PYTHONPATH ("sitecustomize.py", "rlktop/_core.py", …):
// the embedded ones and TablePy, the built-in flags generated from Flags.
func Files() map[string][]byte {
	out := map[string][]byte{}
	fs.WalkDir(files, "py", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := files.ReadFile(p)
		if err == nil {
			out[strings.TrimPrefix(p, "py/")] = b
		}
		return err
	})
	out[TablePy] = tablePy(Flags)
	return out
}

// TablePy is the agent's file of built-in flags (Files): the Python
// module rlktop._table, written from Flags, whose BUILTIN maps each flag's
// name to its choices in Flags' order (py/rlktop/_flags.py imports it), so
// that the agent applies the flags of the one table rlktop offers.
const TablePy = "rlktop/_table.py"

// tablePy renders t as the module TablePy. Names and choices are quoted
// with %q: the table's are ASCII without quotes or backslashes, where Go's
// and Python's string literals agree.
func tablePy(t flagtab.Table) []byte {
	var b strings.Builder
	b.WriteString("# Written by rlktop from its flag table (tracer/pyagent.Flags); not a source file.\n")
	b.WriteString("BUILTIN = {\n")
	for _, f := range t {
		q := make([]string, len(f.Choices))
		for i, c := range f.Choices {
			q[i] = fmt.Sprintf("%q", c)
		}
		if len(q) == 1 {
			q[0] += "," // a one-value tuple
		}
		fmt.Fprintf(&b, "    %q: (%s),\n", f.Name, strings.Join(q, ", "))
	}
	b.WriteString("}\n")
	return []byte(b.String())
}

// Flags are the agent's built-in flags, in display order: each a
// flagtab.Choice flag set in the running process at the next step
// boundary (py/rlktop/_flags.py applies them; the first choice is torch's
// default). The agent reads its table of names and choices from this one
// (TablePy); py/rlktop/_flags.py says what each sets in torch.
var Flags = flagtab.Table{
	{Name: "sdpa", Kind: flagtab.Choice, Choices: []string{"default", "math", "flash", "efficient", "cudnn"}, Live: true,
		Doc: "backends scaled_dot_product_attention may use (torch.backends.cuda.enable_*_sdp)"},
	{Name: "compile", Kind: flagtab.Choice, Choices: []string{"on", "off"}, Live: true,
		Doc: "torch.compile: torch.compiler.set_stance default / force_eager"},
	{Name: "tf32", Kind: flagtab.Choice, Choices: []string{"on", "off"}, Live: true,
		Doc: "TF32 matmuls and convolutions (torch.backends.cuda.matmul.allow_tf32, cudnn.allow_tf32)"},
	{Name: "matmul_precision", Kind: flagtab.Choice, Choices: []string{"highest", "high", "medium"}, Live: true,
		Doc: "torch.set_float32_matmul_precision"},
	{Name: "cudnn_benchmark", Kind: flagtab.Choice, Choices: []string{"on", "off"}, Live: true,
		Doc: "torch.backends.cudnn.benchmark"},
	{Name: "deterministic", Kind: flagtab.Choice, Choices: []string{"on", "off"}, Live: true,
		Doc: "torch.use_deterministic_algorithms"},
}

// ArmKey is the pseudo flag a comparison sets at every switch so that
// each switch is acknowledged with a step number, even between arms with
// the same flags (A and A′); the agent acknowledges it and changes nothing.
const ArmKey = "arm"

// IsLive reports whether key is applied by the agent inside the running
// process: a built-in flag, ArmKey, or one of declared (the flags the
// child listed in its acknowledgements, which include those the script
// declared with rlktop.flag).
func IsLive(key string, declared map[string]string) bool {
	if key == ArmKey {
		return true
	}
	if Flags.IsLive(key) {
		return true
	}
	_, ok := declared[key]
	return ok
}

// MayDeclare reports whether key can be a flag applied by the agent: a
// built-in flag, ArmKey, or a lower-case identifier ([a-z][a-z0-9_]*) that
// the script may declare with rlktop.flag(). Keys in environment-variable
// style (TORCH_…, any upper case) are environment variables, set by
// restarting the command. `rlktop compare` plans live switches for keys
// that may be declared; the agent refuses one the script did not declare,
// and the arm is invalid with that reason.
func MayDeclare(key string) bool {
	if IsLive(key, nil) {
		return true
	}
	if key == "" || key[0] < 'a' || key[0] > 'z' {
		return false
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// FlagsEnv renders flags as RLKTOP_FLAGS ("k=v,k=v", keys sorted).
func FlagsEnv(flags map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(flags)) {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k + "=" + flags[k])
	}
	return b.String()
}
