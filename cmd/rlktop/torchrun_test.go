package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/internal/testutil"
)

// TestTorchRunScript: scripts/torch-run.sh, the README's way to run its
// Python commands on a machine without PyTorch, runs a command inside the
// PyTorch root in /opt/rlktop with this checkout's rlktop on PATH as
// bin/rlktop and the examples beside it: the root's Python imports torch
// 2.6 (Debian trixie's), rlktop answers --version, and an example script
// is where the README's commands expect it.
func TestTorchRunScript(t *testing.T) {
	testutil.NeedTorchRoot(t)
	out, err := exec.Command("../../scripts/torch-run.sh", "sh", "-c",
		`pwd && bin/rlktop --version && python3 -c "import torch; print('torch', torch.__version__)" && test -f examples/ddp_gloo.py && echo example`).CombinedOutput()
	if err != nil {
		t.Fatalf("torch-run.sh: %v\n%s", err, out)
	}
	got := string(out)
	for _, want := range []string{"/opt/rlktop\n", "rlktop ", "torch 2.6", "example\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("torch-run.sh output lacks %q:\n%s", want, got)
		}
	}
	// A command that mentions torchrun gets the no-libuv shim on
	// PYTHONPATH (Debian's PyTorch lacks libuv, so the
	// README's torchrun line would not run); others get no PYTHONPATH.
	for cmd, want := range map[string]string{
		`echo torchrun; echo "[$PYTHONPATH]"; test -f "$PYTHONPATH/sitecustomize.py" && echo shim`: "[/opt/rlktop/nolibuv]\nshim\n",
		`echo "[$PYTHONPATH]"`: "[]\n",
	} {
		out, err := exec.Command("../../scripts/torch-run.sh", "sh", "-c", cmd).CombinedOutput()
		if err != nil || !strings.HasSuffix(string(out), want) {
			t.Errorf("torch-run.sh sh -c %q: %v\n%s\nwant it to end in %q", cmd, err, out, want)
		}
	}
}
