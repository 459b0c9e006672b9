package launch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/tracer/internal/envlist"
)

func touch(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestDetect(t *testing.T) {
	root := t.TempDir()
	if r := detect(root, "", ""); r.Present || !strings.Contains(r.Why, "no ROCm found") {
		t.Errorf("empty machine: %+v", r)
	}
	touch(t, filepath.Join(root, "opt/rocm-6.3.1/lib/librocprofiler-sdk.so"))
	touch(t, filepath.Join(root, "opt/rocm-6.4.0/lib/librocprofiler-sdk.so.1"))
	touch(t, filepath.Join(root, "opt/rocm-6.4.0/lib/librocprofiler-sdk-roctx.so"))
	if r := detect(root, "", ""); r.Present || !strings.Contains(r.Why, "/dev/kfd") {
		t.Errorf("no kfd: %+v", r)
	}
	touch(t, filepath.Join(root, "dev/kfd"))
	r := detect(root, "", "")
	if !r.Present || r.SDK != "/opt/rocm-6.4.0/lib/librocprofiler-sdk.so.1" || r.Roctx != "/opt/rocm-6.4.0/lib/librocprofiler-sdk-roctx.so" {
		t.Errorf("newest versioned ROCm: %+v", r)
	}
	touch(t, filepath.Join(root, "custom/lib/librocprofiler-sdk.so"))
	if r := detect(root, "/custom", ""); r.SDK != "/custom/lib/librocprofiler-sdk.so" {
		t.Errorf("ROCM_PATH first: %+v", r)
	}
}

func TestPrepare(t *testing.T) {
	lib := filepath.Join(t.TempDir(), LibraryName)
	touch(t, lib)
	rt := &Runtime{Present: true, KFD: true, SDK: "/opt/rocm/lib/librocprofiler-sdk.so", Roctx: "/opt/rocm/lib/librocprofiler-sdk-roctx.so"}
	env := []string{"PATH=/bin", "LD_PRELOAD=/usr/lib/libjemalloc.so", EnvToolLibraries + "=/other/tool.so"}
	p, err := Prepare(Options{Socket: "/tmp/s.sock", Trace: true, Library: lib, Runtime: rt, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	get := func(k string) string { v, _ := envlist.Lookup(p.Env, k); return v }
	if !p.Traced || get(EnvToolLibraries) != lib || get(EnvSocket) != "/tmp/s.sock" ||
		get(EnvPreload) != "/opt/rocm/lib/librocprofiler-sdk.so:/opt/rocm/lib/librocprofiler-sdk-roctx.so:/usr/lib/libjemalloc.so" ||
		!strings.Contains(p.Banner, "/other/tool.so") {
		t.Errorf("plan %+v", p)
	}
	// Untraced arm: no tool.
	p, _ = Prepare(Options{Trace: false, Library: lib, Runtime: rt, Env: env})
	if _, ok := envlist.Lookup(p.Env, EnvToolLibraries); ok || p.Traced {
		t.Errorf("untraced plan %+v", p)
	}
	// No ROCm: untraced, saying why.
	p, _ = Prepare(Options{Trace: true, Runtime: &Runtime{Why: "no ROCm found (test)"}, Env: env})
	if p.Traced || !strings.Contains(p.Banner, "no ROCm found (test)") {
		t.Errorf("no-ROCm plan %+v", p)
	}
	// No library anywhere.
	p, _ = Prepare(Options{Trace: true, Library: filepath.Join(t.TempDir(), "missing.so"), Runtime: rt, Env: env})
	if p.Traced || !strings.Contains(p.Banner, "not found") {
		t.Errorf("missing library plan %+v", p)
	}
}

func TestPrepareTorchRanges(t *testing.T) {
	cache := t.TempDir()
	p, err := Prepare(Options{Trace: false, TorchRanges: true, CacheDir: cache, Runtime: &Runtime{}, Env: []string{"PYTHONPATH=/app"}})
	if err != nil {
		t.Fatal(err)
	}
	v, _ := envlist.Lookup(p.Env, "PYTHONPATH")
	dir, _, _ := strings.Cut(v, ":")
	if !strings.HasSuffix(v, ":/app") || !strings.HasPrefix(dir, cache) {
		t.Errorf("PYTHONPATH %q", v)
	}
	if _, err := os.Stat(filepath.Join(dir, "sitecustomize.py")); err != nil {
		t.Error(err)
	}
}
