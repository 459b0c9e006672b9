// Package launch prepares the environment that attaches rlktop's CUPTI
// injection library to a command: where the library is (embedded in the
// rlktop binary and extracted to a private directory, or given), whether an
// NVIDIA driver is present, and the variables the child needs
// (CUDA_INJECTION64_PATH, NVTX_INJECTION64_PATH, RLKTOP_SOCKET, and for
// --torch-ranges a PYTHONPATH entry holding a sitecustomize shim). The
// child's own children (torchrun ranks, DataLoader workers) inherit them.
//
// Pure Go, no cgo: rlktop itself builds with CGO_ENABLED=0. The library is
// embedded only when rlktop is built with the tag embedcupti after
// scripts/build-cupti.sh put it in this directory; otherwise Prepare says
// the build has no CUPTI tracer and the command runs untraced.
package launch

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"

	"github.com/rlktop/rlktop/tracer/internal/envlist"
)

// Environment variables set for the child.
const (
	EnvCUDAInjection = "CUDA_INJECTION64_PATH" // the CUDA driver loads this library at cuInit
	EnvNVTXInjection = "NVTX_INJECTION64_PATH" // NVTX loads it at the first NVTX call
	EnvSocket        = "RLKTOP_SOCKET"         // wire address (tracer/wire.EnvSocket)
	EnvPythonPath    = "PYTHONPATH"
	EnvStepRange     = "RLKTOP_STEP_RANGE" // regex of step ranges (tracer/cupti.EnvStepRange)
	// EnvLibrary names an injection library to use instead of the embedded
	// one (for a library built separately and carried to a GPU machine).
	EnvLibrary = "RLKTOP_CUPTI_INJECTION"
)

// LibraryName is the injection library's file name.
const LibraryName = "librlktop_cupti.so"

// ErrNoTracer says this rlktop binary carries no CUPTI injection library.
var ErrNoTracer = errors.New("this build has no CUPTI tracer (rebuild rlktop after scripts/build-cupti.sh, " +
	"put " + LibraryName + " next to the rlktop binary, or set " + EnvLibrary + ")")

// Embedded reports whether this binary carries the injection library.
func Embedded() bool { return len(embeddedLib) > 0 }

// Options say how to launch.
type Options struct {
	// Socket is the wire address for RLKTOP_SOCKET (tracer/wire.Listen).
	Socket string
	// Trace false prepares an untraced run (the timing arm of a
	// comparison): no injection variables at all, so CUDA pays nothing.
	Trace bool
	// TorchRanges puts the NVTX shim for nn.Module.forward and
	// scaled_dot_product_attention on the child's PYTHONPATH.
	TorchRanges bool
	// StepRange is `--step-range REGEX`: the NVTX ranges that are training
	// steps ("" = ranges named like step/iteration, else ProfilerStep#N).
	StepRange string
	// Library is an explicit injection library path; "" searches (see
	// FindLibrary).
	Library string
	// CacheDir is where embedded files are extracted; "" uses
	// os.UserCacheDir()/rlktop, else a 0700 folder in os.TempDir().
	CacheDir string
	// Driver, when non-nil, replaces DetectDriver (tests).
	Driver *Driver
	// Env is the environment to start from; nil means os.Environ().
	Env []string
}

// Plan is what Prepare decided.
type Plan struct {
	// Env is the child's complete environment.
	Env []string
	// Traced is true when the injection library will be loaded.
	Traced bool
	// Library is the injection library's path ("" when untraced).
	Library string
	// Banner, when not "", is a line to show the user before the command
	// runs: why it runs untraced, or what overrides what.
	Banner string
	// Driver is what DetectDriver found.
	Driver Driver
}

// Prepare returns the child's environment. It fails only when files
// cannot be written (the cache directory); a missing driver or a build
// without the tracer gives an untraced Plan with a Banner.
func Prepare(o Options) (*Plan, error) {
	env := envlist.Clone(o.Env)
	p := &Plan{}
	if o.Driver != nil {
		p.Driver = *o.Driver
	} else {
		p.Driver = DetectDriver()
	}
	var notes []string
	if o.TorchRanges {
		dir, err := ShimDir(o.CacheDir)
		if err != nil {
			return nil, err
		}
		env = prependPath(env, EnvPythonPath, dir)
		env = envlist.Set(env, EnvTorchRanges, "1")
	}
	if o.Socket != "" {
		env = envlist.Set(env, EnvSocket, o.Socket)
	}
	if o.StepRange != "" {
		if _, err := regexp.Compile(o.StepRange); err != nil {
			return nil, fmt.Errorf("--step-range %q: %w", o.StepRange, err)
		}
		env = envlist.Set(env, EnvStepRange, o.StepRange)
	}
	switch {
	case !o.Trace:
		env = envlist.Unset(env, EnvCUDAInjection, EnvNVTXInjection)
	case !p.Driver.Present:
		p.Banner = p.Driver.Why + " — running the command untraced"
		env = envlist.Unset(env, EnvCUDAInjection, EnvNVTXInjection)
	default:
		lib, err := FindLibrary(o.Library, o.CacheDir)
		if err != nil {
			if errors.Is(err, ErrNoTracer) {
				p.Banner = err.Error() + " — running the command untraced"
				env = envlist.Unset(env, EnvCUDAInjection, EnvNVTXInjection)
				break
			}
			return nil, err
		}
		for _, k := range []string{EnvCUDAInjection, EnvNVTXInjection} {
			if v, ok := envlist.Lookup(env, k); ok && v != "" && v != lib {
				notes = append(notes, fmt.Sprintf("%s was %s; rlktop replaces it", k, v))
			}
		}
		env = envlist.Set(env, EnvCUDAInjection, lib)
		env = envlist.Set(env, EnvNVTXInjection, lib)
		p.Traced, p.Library = true, lib
		if len(notes) > 0 {
			p.Banner = strings.Join(notes, "; ")
		}
	}
	p.Env = env
	return p, nil
}

// FindLibrary returns the injection library to use: explicit (an
// argument, else $RLKTOP_CUPTI_INJECTION), else LibraryName next to the
// running executable, else the embedded copy extracted into cacheDir. It
// returns an error wrapping ErrNoTracer when there is none, and an error
// naming the file when a given one is not a readable ELF shared object.
func FindLibrary(explicit, cacheDir string) (string, error) {
	if explicit == "" {
		explicit = os.Getenv(EnvLibrary)
	}
	if explicit != "" {
		abs, err := filepath.Abs(explicit)
		if err != nil {
			return "", err
		}
		return abs, checkELF(abs)
	}
	if exe, err := os.Executable(); err == nil {
		beside := filepath.Join(filepath.Dir(exe), LibraryName)
		if checkELF(beside) == nil {
			return beside, nil
		}
	}
	if !Embedded() {
		return "", ErrNoTracer
	}
	dir, err := extractDir(cacheDir, "cupti", embeddedLib)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, LibraryName)
	if err := writeOnce(path, embeddedLib, 0o755); err != nil {
		return "", err
	}
	return path, nil
}

func checkELF(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("CUPTI injection library %s: %w", path, err)
	}
	defer f.Close()
	var magic [4]byte
	if _, err := f.Read(magic[:]); err != nil || !bytes.Equal(magic[:], []byte("\x7fELF")) {
		return fmt.Errorf("CUPTI injection library %s is not an ELF shared object (build it with scripts/build-cupti.sh)", path)
	}
	return nil
}

// extractDir returns a private (0700, owned by us) directory for content,
// named by its hash so that a binary upgrade never reuses a stale copy.
func extractDir(cacheDir, what string, content ...[]byte) (string, error) {
	h := sha256.New()
	for _, c := range content {
		h.Write(c)
	}
	sum := hex.EncodeToString(h.Sum(nil))[:16]
	base := cacheDir
	if base == "" {
		if c, err := os.UserCacheDir(); err == nil {
			base = filepath.Join(c, "rlktop")
		} else {
			base = filepath.Join(os.TempDir(), fmt.Sprintf("rlktop-%d", os.Getuid()))
		}
	}
	dir := filepath.Join(base, what+"-"+sum)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("cannot create %s for rlktop's tracer files: %w (set XDG_CACHE_HOME to a writable folder)", dir, err)
	}
	if err := private(base); err != nil {
		return "", err
	}
	if err := private(dir); err != nil {
		return "", err
	}
	return dir, nil
}

// private makes dir mode 0700 and checks that we own it, so that no other
// user can swap the library a traced process will load.
func private(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("%s belongs to uid %d, not to you: refusing to extract the CUPTI tracer there (set XDG_CACHE_HOME)", dir, st.Uid)
	}
	if fi.Mode().Perm() != 0o700 {
		return os.Chmod(dir, 0o700)
	}
	return nil
}

// writeOnce writes data to path unless an identical file is there,
// atomically (temp file + rename), so concurrent rlktops never see a half
// written library.
func writeOnce(path string, data []byte, mode fs.FileMode) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return nil
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(f.Name(), mode)
	}
	if werr == nil {
		werr = os.Rename(f.Name(), path)
	}
	if werr != nil {
		os.Remove(f.Name())
		return fmt.Errorf("writing %s: %w", path, werr)
	}
	return nil
}

// prependPath puts dir first in the path list key (os.PathListSeparator
// between entries), keeping the old value whole after it.
func prependPath(env []string, key, dir string) []string {
	if old, ok := envlist.Lookup(env, key); ok && old != "" {
		return envlist.Set(env, key, dir+string(os.PathListSeparator)+old)
	}
	return envlist.Set(env, key, dir)
}
