// Package launch prepares the environment that attaches rlktop's
// rocprofiler-sdk tool library to a command on a ROCm machine: whether a
// ROCm runtime with rocprofiler-sdk is present (DetectROCm), where the tool
// library is, and the variables the child needs. As rocprofv3 does, it
// names the tool in ROCP_TOOL_LIBRARIES and preloads librocprofiler-sdk.so
// and librocprofiler-sdk-roctx.so (LD_PRELOAD), the latter so that the
// legacy roctx calls PyTorch on ROCm makes reach the SDK's marker tracing.
// The child's own children inherit them.
//
// Pure Go, no cgo: rlktop itself builds with CGO_ENABLED=0.
package launch

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	cuptilaunch "github.com/rlktop/rlktop/tracer/cupti/launch"
	"github.com/rlktop/rlktop/tracer/internal/envlist"
)

// Environment variables set for the child.
const (
	EnvToolLibraries = "ROCP_TOOL_LIBRARIES" // rocprofiler-sdk loads these tools
	EnvPreload       = "LD_PRELOAD"
	EnvSocket        = "RLKTOP_SOCKET" // wire address (tracer/wire.EnvSocket)
	// EnvLibrary names a tool library to use instead of searching.
	EnvLibrary = "RLKTOP_ROCPROF_TOOL"
	// EnvAOTriton is PyTorch's switch for AOTriton's experimental GPUs
	// (the fused-attention flag; loop/presets.toml flips it).
	EnvAOTriton = "TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL"
)

// LibraryName is the tool library's file name (scripts/build-rocprof.sh).
const LibraryName = "librlktop_rocprof.so"

// ErrNoTracer says no tool library was found.
var ErrNoTracer = errors.New("no rocprofiler-sdk tool library (build it with scripts/build-rocprof.sh and put " +
	LibraryName + " next to the rlktop binary, or set " + EnvLibrary + ")")

// Runtime says whether ROCm, and rocprofiler-sdk in it, is usable here.
type Runtime struct {
	Present bool
	// KFD is true when /dev/kfd (the amdgpu compute interface) exists.
	KFD bool
	// SDK and Roctx are the paths of librocprofiler-sdk.so and
	// librocprofiler-sdk-roctx.so, "" when not found.
	SDK, Roctx string
	// Why explains Present == false in words.
	Why string
}

// DetectROCm looks for ROCm without loading it: /dev/kfd, and
// rocprofiler-sdk's libraries in $ROCM_PATH/lib, $LD_LIBRARY_PATH,
// /opt/rocm/lib and /opt/rocm-*/lib (newest first).
func DetectROCm() Runtime {
	return detect("/", os.Getenv("ROCM_PATH"), os.Getenv("LD_LIBRARY_PATH"))
}

func detect(root, rocmPath, ldPath string) Runtime {
	var r Runtime
	if _, err := os.Stat(filepath.Join(root, "dev/kfd")); err == nil {
		r.KFD = true
	}
	var dirs []string
	if rocmPath != "" {
		dirs = append(dirs, filepath.Join(rocmPath, "lib"))
	}
	dirs = append(dirs, filepath.SplitList(ldPath)...)
	dirs = append(dirs, "/opt/rocm/lib")
	versioned, _ := filepath.Glob(filepath.Join(root, "opt/rocm-*/lib"))
	sort.Sort(sort.Reverse(sort.StringSlice(versioned)))
	for _, v := range versioned {
		rel, _ := filepath.Rel(root, v)
		dirs = append(dirs, "/"+rel)
	}
	find := func(base string) string {
		for _, d := range dirs {
			if d == "" {
				continue
			}
			for _, name := range []string{base, base + ".1", base + ".0"} {
				if _, err := os.Stat(filepath.Join(root, d, name)); err == nil {
					return filepath.Join(d, name)
				}
			}
		}
		return ""
	}
	r.SDK = find("librocprofiler-sdk.so")
	r.Roctx = find("librocprofiler-sdk-roctx.so")
	switch {
	case !r.KFD && r.SDK == "":
		r.Why = "no ROCm found (no /dev/kfd, no librocprofiler-sdk.so in $ROCM_PATH/lib, $LD_LIBRARY_PATH or /opt/rocm*/lib)"
	case !r.KFD:
		r.Why = "no AMD GPU compute driver (no /dev/kfd; rocprofiler-sdk is at " + r.SDK + ")"
	case r.SDK == "":
		r.Why = "ROCm's /dev/kfd is present but rocprofiler-sdk was not found (ROCm 6.2 or newer ships it; set ROCM_PATH)"
	default:
		r.Present = true
	}
	return r
}

// Options say how to launch.
type Options struct {
	// Socket is the wire address for RLKTOP_SOCKET.
	Socket string
	// Trace false prepares an untraced run: no tool, nothing preloaded.
	Trace bool
	// Library is an explicit tool library path; "" searches (FindLibrary).
	Library string
	// TorchRanges puts rlktop's --torch-ranges shim (module and
	// scaled_dot_product_attention ranges through torch.cuda.nvtx, which is
	// roctx on ROCm builds of PyTorch) first on the child's PYTHONPATH; the
	// shim is tracer/cupti/launch's, extracted under CacheDir.
	TorchRanges bool
	CacheDir    string
	// Runtime, when non-nil, replaces DetectROCm (tests).
	Runtime *Runtime
	// Env is the environment to start from; nil means os.Environ().
	Env []string
}

// Plan is what Prepare decided.
type Plan struct {
	Env     []string // the child's complete environment
	Traced  bool     // the tool will be loaded
	Library string   // the tool library ("" untraced)
	Banner  string   // a line for the user: why untraced, what was replaced
	Runtime Runtime
}

// Prepare returns the child's environment. A machine without ROCm or a
// missing tool library gives an untraced Plan with a Banner saying why; it
// fails only when the --torch-ranges shim cannot be written.
func Prepare(o Options) (*Plan, error) {
	env := envlist.Clone(o.Env)
	p := &Plan{}
	if o.Runtime != nil {
		p.Runtime = *o.Runtime
	} else {
		p.Runtime = DetectROCm()
	}
	if o.Socket != "" {
		env = envlist.Set(env, EnvSocket, o.Socket)
	}
	if o.TorchRanges {
		dir, err := cuptilaunch.ShimDir(o.CacheDir)
		if err != nil {
			return nil, err
		}
		env = prependList(env, "PYTHONPATH", dir)
		env = envlist.Set(env, cuptilaunch.EnvTorchRanges, "1")
	}
	untraced := func(why string) {
		if why != "" {
			p.Banner = "rlktop: " + why + " — running the command untraced"
		}
		env = envlist.Unset(env, EnvToolLibraries)
	}
	switch {
	case !o.Trace:
		untraced("")
	case !p.Runtime.Present:
		untraced(p.Runtime.Why)
	default:
		lib, err := FindLibrary(o.Library, env)
		if err != nil {
			untraced(err.Error())
			break
		}
		if v, ok := envlist.Lookup(env, EnvToolLibraries); ok && v != "" && v != lib {
			p.Banner = fmt.Sprintf("rlktop: %s was %s; rlktop replaces it", EnvToolLibraries, v)
		}
		env = envlist.Set(env, EnvToolLibraries, lib)
		pre := []string{p.Runtime.SDK}
		if p.Runtime.Roctx != "" {
			pre = append(pre, p.Runtime.Roctx)
		}
		env = prependList(env, EnvPreload, pre...)
		p.Traced, p.Library = true, lib
	}
	p.Env = env
	return p, nil
}

// FindLibrary returns the tool library: explicit, else $RLKTOP_ROCPROF_TOOL
// (from env), else LibraryName next to the running executable, else
// build/LibraryName under the current directory.
func FindLibrary(explicit string, env []string) (string, error) {
	var cands []string
	if explicit != "" {
		cands = append(cands, explicit)
	} else {
		if v, ok := envlist.Lookup(env, EnvLibrary); ok && v != "" {
			cands = append(cands, v)
		}
		if exe, err := os.Executable(); err == nil {
			cands = append(cands, filepath.Join(filepath.Dir(exe), LibraryName))
		}
		cands = append(cands, filepath.Join("build", LibraryName))
	}
	for _, c := range cands {
		if st, err := os.Stat(c); err == nil && st.Mode().IsRegular() {
			abs, err := filepath.Abs(c)
			if err != nil {
				return "", err
			}
			return abs, nil
		}
	}
	if explicit != "" {
		return "", fmt.Errorf("rocprofiler-sdk tool library %s not found", explicit)
	}
	return "", ErrNoTracer
}

// prependList puts items first in a colon-separated variable, keeping the
// existing entries (once each) after them.
func prependList(env []string, key string, items ...string) []string {
	seen := map[string]bool{}
	var out []string
	for _, it := range items {
		if it != "" && !seen[it] {
			seen[it] = true
			out = append(out, it)
		}
	}
	if v, ok := envlist.Lookup(env, key); ok {
		for _, it := range strings.FieldsFunc(v, func(r rune) bool { return r == ':' || r == ' ' }) {
			if !seen[it] {
				seen[it] = true
				out = append(out, it)
			}
		}
	}
	return envlist.Set(env, key, strings.Join(out, ":"))
}
