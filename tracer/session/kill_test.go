package session

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/tracefile"
	"github.com/rlktop/rlktop/tracer/wire"
)

const envRecorder = "RLKTOP_TEST_RECORDER_OUT"

// TestHelperRecorder is the child of TestRecordingSurvivesSIGKILL: a
// session recording an endless synthetic loop to $RLKTOP_TEST_RECORDER_OUT.
func TestHelperRecorder(t *testing.T) {
	out := os.Getenv(envRecorder)
	if out == "" {
		t.Skip("helper process for TestRecordingSurvivesSIGKILL")
	}
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	sess := New(Options{})
	if err := sess.Record(f); err != nil {
		t.Fatal(err)
	}
	a, b := net.Pipe()
	sess.AddConn(a)
	s := wire.NewAsyncSender(b, 1<<14)
	sendSteps(s, -1, func() { time.Sleep(200 * time.Microsecond) })
}

// TestRecordingSurvivesSIGKILL records in a child process, kills it with
// SIGKILL mid-recording, and reads the file: no error, and every kernel
// read back has the duration the synthetic loop gives it (so no torn
// event got in).
func TestRecordingSurvivesSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a child process")
	}
	out := filepath.Join(t.TempDir(), "killed.rlk")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperRecorder$")
	cmd.Env = append(os.Environ(), envRecorder+"="+out)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if st, err := os.Stat(out); err == nil && st.Size() > 16<<10 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("recording never grew past 16 KiB")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	st, _ := os.Stat(out)
	tr, err := tracefile.Open(out, tracefile.Options{})
	if err != nil {
		t.Fatalf("reading the killed recording (%d bytes): %v", st.Size(), err)
	}
	t.Logf("killed recording: %d bytes, %d events, warnings %v", st.Size(), len(tr.Events), tr.Warnings)
	if len(tr.Events) < 500 {
		t.Fatalf("only %d events", len(tr.Events))
	}
	durs := map[string]int64{"gemm": 100_000, "attn_fused_fwd": 200_000, "topp_scan": 50_000, "gpu_kernel": 30_000, "outside_kernel": 10_000}
	a := attrib.NewAggregator(nil)
	a.AddTrace(tr)
	snap := a.Snapshot()
	if len(snap.Kernels) != len(durs) {
		t.Fatalf("kernels %v", snap.Kernels)
	}
	for _, k := range snap.Kernels {
		if k.TotalNs != k.Count*durs[k.Name] || k.MinNs != durs[k.Name] || k.MaxNs != durs[k.Name] {
			t.Errorf("%s: %d × %d ns = %d ns, want %d ns each", k.Name, k.Count, k.MeanNs, k.TotalNs, durs[k.Name])
		}
	}
}
