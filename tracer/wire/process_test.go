package wire

import (
	"os"
	"testing"
)

func TestProcessHello(t *testing.T) {
	t.Setenv("RANK", "")
	t.Setenv("OMPI_COMM_WORLD_RANK", "3")
	t.Setenv("WORLD_SIZE", "8")
	h := ProcessHello("cupti", "NVIDIA GPU")
	if h.Source != "cupti" || h.Device != "NVIDIA GPU" || h.PID != int64(os.Getpid()) {
		t.Fatalf("hello %+v", h)
	}
	// RANK is set but empty, so Open MPI's variable is used; WORLD_SIZE wins over the rest.
	if h.Rank != 3 || h.World != 8 {
		t.Fatalf("rank %d world %d, want 3 and 8", h.Rank, h.World)
	}
	if len(h.Cmdline) == 0 || h.Cmdline[0] != os.Args[0] {
		t.Fatalf("cmdline %q, want it to start with %q", h.Cmdline, os.Args[0])
	}
	t.Setenv("OMPI_COMM_WORLD_RANK", "")
	t.Setenv("WORLD_SIZE", "")
	if h := ProcessHello("x", ""); h.Rank != -1 || h.World != 0 {
		t.Fatalf("no launcher: rank %d world %d, want -1 and 0", h.Rank, h.World)
	}
}
