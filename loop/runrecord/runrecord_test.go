package runrecord

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rlktop/rlktop/gpu/reading"
	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/livestate"
)

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestCollectInGitRepo(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	os.WriteFile(filepath.Join(dir, "train.py"), []byte("hello\n"), 0o644)
	git(t, dir, "add", "train.py")
	git(t, dir, "commit", "-q", "-m", "one")
	head := git(t, dir, "log", "-1", "--format=%H")

	clock := time.Date(2026, 11, 29, 12, 0, 0, 123456789, time.UTC)
	r, err := Collect(Options{
		Command:     []string{"python", "train.py", "--lr", "1e-3"},
		RlktopArgs:  []string{"rlktop", "record", "-o", "x.rlk", "--", "python", "train.py"},
		Dir:         dir,
		Arms:        []livestate.Arm{{Name: "attention=fused", Flags: map[string]string{"attention": "fused"}}},
		Flags:       []string{"attention=math,fused"},
		EnvSet:      map[string]string{"CUDA_INJECTION64_PATH": "/opt/rlktop/lib.so"},
		Environ:     []string{"HOME=/root", "CUDA_VISIBLE_DEVICES=0", "NCCL_DEBUG=INFO", "TORCHINDUCTOR_CACHE_DIR=/x", "TORCH_LOGS=+dynamo", "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "HIP_VISIBLE_DEVICES=1", "ROCM_PATH=/opt/rocm", "PATH=/bin"},
		Fingerprint: []string{"train.py", "missing.cfg"},
		GPUs:        []reading.Info{{Vendor: "nvidia", Driver: "550.54.14", CUDA: "12.4", Devices: []tracer.Device{{ID: 0, Name: "NVIDIA H200", TotalMemory: 150 << 30, ComputeCap: "9.0", Props: map[string]string{"uuid": "GPU-1"}}}}},
		Now:         func() time.Time { return clock },
	})
	if err != nil {
		t.Fatal(err)
	}
	if r.Git.Revision != head || r.Git.Dirty != "false" || r.Git.Changed != 0 {
		t.Errorf("clean repo: git %+v, want revision %s clean", r.Git, head)
	}
	// Two untracked files and one modified: three porcelain lines.
	os.WriteFile(filepath.Join(dir, "a"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "b"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "train.py"), []byte("changed\n"), 0o644)
	if g := gitState(dir, 5*time.Second); g.Dirty != "true" || g.Changed != 3 || g.Revision != head {
		t.Errorf("dirty repo: %+v, want 3 changes", g)
	}
	wantEnv := map[string]string{"CUDA_VISIBLE_DEVICES": "0", "NCCL_DEBUG": "INFO", "TORCH_LOGS": "+dynamo",
		"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True", "HIP_VISIBLE_DEVICES": "1", "ROCM_PATH": "/opt/rocm"}
	if !reflect.DeepEqual(r.Env, wantEnv) {
		t.Errorf("env %v, want %v", r.Env, wantEnv)
	}
	// sha256 of "hello\n", from sha256sum.
	if f := r.Files[0]; f.SHA256 != "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03" || f.Bytes != 6 {
		t.Errorf("fingerprint %+v", f)
	}
	if f := r.Files[1]; f.Err == "" || f.SHA256 != "" {
		t.Errorf("missing file fingerprint %+v, want an error", f)
	}
	if !r.Start.Equal(clock) {
		t.Errorf("start %v", r.Start)
	}
	r.Finish(3)

	m := r.Meta()
	for k := range m {
		if !strings.HasPrefix(k, "run.") {
			t.Errorf("key %q lacks the run. prefix", k)
		}
	}
	back, err := FromMeta(m)
	if err != nil {
		t.Fatal(err)
	}
	r.now, back.now = nil, nil
	if !reflect.DeepEqual(r, back) {
		t.Errorf("round trip through Meta:\n got %+v\nwant %+v", back, r)
	}

	var b bytes.Buffer
	if err := PrintMeta(&b, mergeMeta(m, map[string]string{"schemaVersion": "1"})); err != nil {
		t.Fatal(err)
	}
	squeeze := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	out := squeeze(b.String())
	for _, want := range []string{
		"command:        python train.py --lr 1e-3",
		"exit status:    3",
		"git revision:   " + head,
		"git state:      clean",
		"fingerprint:    train.py sha256:5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03 (6 bytes)",
		"set by rlktop:  CUDA_INJECTION64_PATH=/opt/rlktop/lib.so",
		"inherited:      NCCL_DEBUG=INFO",
		"arm:            attention=fused attention=fused",
		"nvidia:         driver 550.54.14, CUDA 12.4",
		"device:         0: NVIDIA H200, 150.0 GiB, compute 9.0, GPU-1",
		"source metadata\n  schemaVersion: 1",
	} {
		if !strings.Contains(out, squeeze(want)) {
			t.Errorf("printed record lacks %q:\n%s", want, b.String())
		}
	}
}

func mergeMeta(a, b map[string]string) map[string]string {
	m := map[string]string{}
	for k, v := range a {
		m[k] = v
	}
	for k, v := range b {
		m[k] = v
	}
	return m
}

func TestNoGit(t *testing.T) {
	t.Setenv("PATH", "")
	r, err := Collect(Options{Dir: t.TempDir(), Environ: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Git.Revision != Unknown || r.Git.Dirty != Unknown {
		t.Errorf("git %+v without git, want unknown", r.Git)
	}
	if r.Command != nil || r.Finished {
		t.Errorf("record %+v", r)
	}
	m := r.Meta()
	if _, ok := m[KeyExit]; ok {
		t.Error("unfinished record has an exit status")
	}
	var b bytes.Buffer
	r.WriteText(&b)
	if !strings.Contains(b.String(), "(built-in training loop)") || !strings.Contains(b.String(), "not finished") {
		t.Errorf("text:\n%s", b.String())
	}
}

func TestMachineFacts(t *testing.T) {
	r, err := Collect(Options{Dir: t.TempDir(), Environ: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("uname", "-r").Output(); err == nil {
		if rel := strings.TrimSpace(string(out)); !strings.HasPrefix(r.Kernel, rel+" ") {
			t.Errorf("kernel %q, uname -r %q", r.Kernel, rel)
		}
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "model name") {
				if want := strings.TrimSpace(l[strings.Index(l, ":")+1:]); r.CPU != want {
					t.Errorf("cpu %q, cpuinfo %q", r.CPU, want)
				}
				break
			}
		}
	}
	if r.GoVersion == "" || r.Version == "" || r.OS == "" || r.CPUs <= 0 {
		t.Errorf("record %+v", r)
	}
}

func TestFromMetaErrors(t *testing.T) {
	if _, err := FromMeta(map[string]string{"schemaVersion": "1"}); !errors.Is(err, ErrNoRecord) {
		t.Errorf("err %v, want ErrNoRecord", err)
	}
	_, err := FromMeta(map[string]string{KeyFormat: "1", KeyCommand: "[not json", KeyCPUs: "many"})
	if err == nil || !strings.Contains(err.Error(), KeyCommand) || !strings.Contains(err.Error(), KeyCPUs) {
		t.Errorf("err %v, want both bad keys named", err)
	}
	if _, err := Collect(Options{Dir: "/nonexistent/rlktop"}); err == nil {
		t.Error("bad directory accepted")
	}
}

// TestPrintMetaOneLinePerKey: a source value with a newline and a log
// line after it stays on its key's line, escaped.
func TestPrintMetaOneLinePerKey(t *testing.T) {
	var b strings.Builder
	if err := PrintMeta(&b, map[string]string{"source": "gotrace\nstep 0: 646.0 ms, legal 26"}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, "  source: gotrace\\nstep 0: 646.0 ms, legal 26\n") {
		t.Errorf("source line not escaped:\n%s", out)
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "step 0") {
			t.Errorf("a log line printed as its own line: %q", l)
		}
	}
}
