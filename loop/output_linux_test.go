package loop

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// The output files stay small on disk while rlktop reads: 8 MB written to
// stderr occupy at most OutputPunchBytes plus a block once read (their
// apparent size stays 8 MB; the read bytes are holes).
func TestOutputFilesPunchedAfterRead(t *testing.T) {
	// 2,000 lines of 4,000 x's: 8,002,000 bytes, then wait to be killed.
	script := `s=$(printf '%4000s' '' | tr ' ' x); i=0; while [ $i -lt 2000 ]; do i=$((i+1)); printf '%s\n' "$s" >&2; done; exec sleep 30`
	s := NewSupervisor(Spec{Argv: []string{"/bin/sh", "-c", script}, Env: os.Environ()})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Stop(time.Second)
	path := filepath.Join(s.Status().OutputDir, "stderr")
	const total = 2000 * 4001
	deadline := time.Now().Add(30 * time.Second)
	for {
		var st syscall.Stat_t
		if err := syscall.Stat(path, &st); err != nil {
			t.Fatal(err)
		}
		if st.Size == total {
			// The last read and release come within a few OutputPoll; a
			// loaded machine delays them, so wait up to 10 s for the
			// bytes on disk to fall below the bound.
			var disk int64
			for end := time.Now().Add(10 * time.Second); ; time.Sleep(OutputPoll) {
				if err := syscall.Stat(path, &st); err != nil {
					t.Fatal(err)
				}
				if disk = st.Blocks * 512; disk <= OutputPunchBytes+64<<10 || time.Now().After(end) {
					break
				}
			}
			t.Logf("apparent size %d bytes, on disk %d bytes", st.Size, disk)
			if disk > OutputPunchBytes+64<<10 {
				t.Fatalf("%s holds %d bytes on disk 10 s after rlktop could read all %d: read bytes not released", path, disk, total)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("child wrote %d of %d bytes in 30 s", st.Size, total)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
