package tracefile

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/wire"
	"github.com/rlktop/rlktop/tracer/wire/msg"
)

// recorderLike writes a recording as the session's recorder does (gzip,
// flushed after every frame): a hello, then frames events frames of one
// kernel each, kernel i starting at 1000·i ns, then a Bye.
func recorderLike(t *testing.T, frames int) []byte {
	t.Helper()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	w := wire.NewWriter(zw)
	w.Flags = wire.FlagRelayed
	w.Hello(&msg.Hello{Source: "gotrace", PID: 9})
	k := w.Name("kernel")
	w.Flush()
	zw.Flush()
	for i := range frames {
		w.Events([]tracer.Event{{Kind: tracer.KindKernel, Name: k, Start: int64(1000 * i), Dur: 500, PID: 9, TID: 1, Device: 0}})
		w.Flush()
		zw.Flush()
	}
	w.Bye(msg.Bye{Reason: "exit"})
	w.Flush()
	zw.Close()
	return gz.Bytes()
}

// TestRecordingDamageCostsItsFrames: one byte of a recording's compressed
// data changed at 16 places in its first 64 KiB (the recorder flushes
// after every frame). Every damaged file still gives a trace with an
// error (a deflate error there kept nothing: a file lost all 3,872
// intact kernels); at least 13 of the 15 keep all but at most 5 of the
// 3,000 kernels: the reading went on past the damage (deflate restarted at the next flush marker, frames resynced by
// their CRC-32C). Where the restarted stream refers back into damaged
// bytes for long, more frames are lost: the rest of those files.
func TestRecordingDamageCostsItsFrames(t *testing.T) {
	const frames = 3000
	good := recorderLike(t, frames)
	recovered := 0
	for off := 4000; off < 64<<10 && off < len(good); off += 4099 {
		bad := bytes.Clone(good)
		bad[off] ^= 0x10
		p := filepath.Join(t.TempDir(), "damaged.rlk")
		os.WriteFile(p, bad, 0o644)
		tr, err := Open(p, Options{})
		if err == nil {
			continue // the change fell where it changes no frame's bytes
		}
		var fe *Error
		if !errors.As(err, &fe) || tr == nil {
			t.Errorf("byte %d changed: %v, no trace kept", off, err)
			continue
		}
		starts := map[int64]bool{}
		for _, e := range tr.Events {
			if e.Kind == tracer.KindKernel {
				starts[e.Start] = true
			}
		}
		if len(starts) >= frames-5 {
			recovered++
		}
		t.Logf("byte %d changed: %d of %d kernels kept", off, len(starts), frames)
	}
	// 11 of the 15 did before headers were repaired by their payload's
	// CRC-32C and the restart could stand the block before in for the
	// damaged one; 14 do with both.
	if recovered < 13 {
		t.Errorf("%d damaged files kept all but 5 kernels, want at least 13", recovered)
	}
}
