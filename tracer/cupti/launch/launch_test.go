package launch

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func envMap(env []string) map[string]string {
	m := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

func fakeLib(t *testing.T) string {
	p := filepath.Join(t.TempDir(), LibraryName)
	if err := os.WriteFile(p, []byte("\x7fELF\x02\x01\x01"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

var present = &Driver{Present: true, Version: "NVRM version: 580.0", LibCUDA: "/usr/lib/x86_64-linux-gnu/libcuda.so.1"}

func TestPrepareTraced(t *testing.T) {
	lib := fakeLib(t)
	p, err := Prepare(Options{Socket: "/tmp/x/wire.sock", Trace: true, Library: lib, Driver: present, CacheDir: t.TempDir(),
		Env: []string{"PATH=/bin", "NVTX_INJECTION64_PATH=/opt/nsight/libnvtx.so"}})
	if err != nil {
		t.Fatal(err)
	}
	e := envMap(p.Env)
	if !p.Traced || e[EnvCUDAInjection] != lib || e[EnvNVTXInjection] != lib || e[EnvSocket] != "/tmp/x/wire.sock" || e["PATH"] != "/bin" {
		t.Errorf("plan %+v env %v", p, e)
	}
	if !strings.Contains(p.Banner, "NVTX_INJECTION64_PATH was /opt/nsight/libnvtx.so") {
		t.Errorf("banner %q should say what was replaced", p.Banner)
	}
	if _, ok := e[EnvPythonPath]; ok {
		t.Error("PYTHONPATH set without --torch-ranges")
	}
}

func TestPrepareNoDriver(t *testing.T) {
	d := detectDriver(t.TempDir(), "")
	p, err := Prepare(Options{Socket: "s", Trace: true, Library: fakeLib(t), Driver: &d,
		Env: []string{"CUDA_INJECTION64_PATH=/old.so"}})
	if err != nil {
		t.Fatal(err)
	}
	e := envMap(p.Env)
	if p.Traced || e[EnvCUDAInjection] != "" || !strings.Contains(p.Banner, "no NVIDIA driver found") || !strings.Contains(p.Banner, "untraced") {
		t.Errorf("plan %+v", p)
	}
	if e[EnvSocket] != "s" {
		t.Error("the socket is still passed (the command may report steps by other means)")
	}
}

func TestPrepareNoTracer(t *testing.T) {
	if Embedded() {
		t.Skip("this test binary embeds the library (tag embedcupti)")
	}
	t.Setenv(EnvLibrary, "")
	p, err := Prepare(Options{Trace: true, Driver: present, Env: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Traced || !strings.Contains(p.Banner, "this build has no CUPTI tracer") {
		t.Errorf("plan %+v", p)
	}
	if _, err := FindLibrary(filepath.Join(t.TempDir(), "missing.so"), ""); err == nil || !strings.Contains(err.Error(), "missing.so") {
		t.Errorf("a missing explicit library: %v", err)
	}
	notELF := filepath.Join(t.TempDir(), "x.so")
	os.WriteFile(notELF, []byte("#!/bin/sh"), 0o755)
	if _, err := FindLibrary(notELF, ""); err == nil || !strings.Contains(err.Error(), "not an ELF") {
		t.Errorf("a non-ELF library: %v", err)
	}
}

func TestPrepareUntracedArm(t *testing.T) {
	p, err := Prepare(Options{Trace: false, Driver: present, Env: []string{"CUDA_INJECTION64_PATH=/x.so", "NVTX_INJECTION64_PATH=/x.so"}})
	if err != nil {
		t.Fatal(err)
	}
	e := envMap(p.Env)
	if p.Traced || p.Banner != "" || e[EnvCUDAInjection] != "" || e[EnvNVTXInjection] != "" {
		t.Errorf("untraced arm must load nothing: %+v", p)
	}
}

func TestDetectDriver(t *testing.T) {
	root := t.TempDir()
	if d := detectDriver(root, ""); d.Present || !strings.Contains(d.Why, "no NVIDIA driver found") {
		t.Errorf("empty root: %+v", d)
	}
	os.MkdirAll(filepath.Join(root, "proc/driver/nvidia"), 0o755)
	os.WriteFile(filepath.Join(root, "proc/driver/nvidia/version"), []byte("NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06\nGCC version: 12\n"), 0o644)
	if d := detectDriver(root, ""); d.Present || !strings.Contains(d.Why, "libcuda.so.1 was not found") {
		t.Errorf("module only: %+v", d)
	}
	os.MkdirAll(filepath.Join(root, "opt/drv"), 0o755)
	os.WriteFile(filepath.Join(root, "opt/drv/libcuda.so.1"), nil, 0o644)
	d := detectDriver(root, "/nowhere:/opt/drv")
	if !d.Present || d.LibCUDA != "/opt/drv/libcuda.so.1" || d.Version != "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06" {
		t.Errorf("driver: %+v", d)
	}
}

func TestEmbeddedExtraction(t *testing.T) {
	cache := t.TempDir()
	dir, err := extractDir(cache, "cupti", []byte("abc"))
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(dir)
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("%s mode %v", dir, fi.Mode())
	}
	p := filepath.Join(dir, LibraryName)
	for i := 0; i < 2; i++ { // the second write finds the identical file
		if err := writeOnce(p, []byte("\x7fELF1"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if b, _ := os.ReadFile(p); string(b) != "\x7fELF1" {
		t.Errorf("content %q", b)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("left-over temp files: %v", entries)
	}
}

// TestTorchRangesShim runs the shim in Python against a stand-in torch
// (testdata/faketorch) and checks the NVTX calls a small model makes.
// Expected sequences are worked out by hand from model.py.
func TestTorchRangesShim(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found")
	}
	shim, err := ShimDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	fake, _ := filepath.Abs("testdata/faketorch")
	chained, _ := filepath.Abs("testdata/chained")
	run := func(extra ...string) ([]string, string) {
		cmd := exec.Command(py, filepath.Join(fake, "model.py"))
		env := prependPath(append(append(os.Environ(), EnvTorchRanges+"=1"), extra...), EnvPythonPath, shim+string(os.PathListSeparator)+fake+string(os.PathListSeparator)+chained)
		cmd.Env = env
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("python: %v\n%s", err, out)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		var calls []string
		if err := json.Unmarshal([]byte(lines[len(lines)-1]), &calls); err != nil {
			t.Fatalf("output %q: %v", out, err)
		}
		return calls, string(out)
	}
	calls, out := run()
	want := []string{"push GPT", "push GPT.block", "push GPT.block.attn", "push scaled_dot_product_attention", "sdpa", "pop", "pop", "pop",
		"push GPT.boom", "pop", "push scaled_dot_product_attention", "sdpa", "pop", "pop"}
	if !slices.Equal(calls, want) {
		t.Errorf("calls\n got  %q\n want %q", calls, want)
	}
	if !strings.Contains(out, "chained sitecustomize ran") {
		t.Errorf("the environment's own sitecustomize did not run: %q", out)
	}
	calls, _ = run("RLKTOP_TORCH_RANGES_DEPTH=1")
	want = []string{"push GPT", "push GPT.block", "push scaled_dot_product_attention", "sdpa", "pop", "pop",
		"push GPT.boom", "pop", "push scaled_dot_product_attention", "sdpa", "pop", "pop"}
	if !slices.Equal(calls, want) {
		t.Errorf("depth 1\n got  %q\n want %q", calls, want)
	}
	calls, _ = run("RLKTOP_TORCH_RANGES_MODULES=0")
	want = []string{"push scaled_dot_product_attention", "sdpa", "pop", "push scaled_dot_product_attention", "sdpa", "pop"}
	if !slices.Equal(calls, want) {
		t.Errorf("SDPA only\n got  %q\n want %q", calls, want)
	}
	calls, _ = run("RLKTOP_TORCH_RANGES=0")
	if want := []string{"sdpa", "sdpa"}; !slices.Equal(calls, want) {
		t.Errorf("disabled: %q", calls)
	}
}

func TestPrepareStepRange(t *testing.T) {
	p, err := Prepare(Options{Trace: false, StepRange: `^train_iter`, Env: []string{}})
	if err != nil || envMap(p.Env)[EnvStepRange] != `^train_iter` {
		t.Errorf("plan %+v err %v", p, err)
	}
	if _, err := Prepare(Options{StepRange: `(`, Env: []string{}}); err == nil || !strings.Contains(err.Error(), "--step-range") {
		t.Errorf("bad regex: %v", err)
	}
}
