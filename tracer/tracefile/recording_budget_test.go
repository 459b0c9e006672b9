package tracefile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/rlktop/rlktop/tracer/wire"
	"github.com/rlktop/rlktop/tracer/wire/msg"
)

// zeroEventsRecording is a gzip recording of frames Events frames, each
// declaring perFrame events of 4 zero bytes (header 0, name 0, start +0,
// dur 0: the smallest valid event). gzip shrinks the zeros about 1000
// times: an 82 KB file of such 16 MiB frames held
// 4.5 GiB once read.
func zeroEventsRecording(t *testing.T, frames, perFrame int) []byte {
	t.Helper()
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	w := wire.NewWriter(zw)
	w.Flags = wire.FlagRelayed
	if err := w.Hello(&msg.Hello{Source: "crafted", PID: 1}); err != nil {
		t.Fatal(err)
	}
	p := binary.AppendUvarint(nil, uint64(perFrame))
	p = append(p, make([]byte, 4*perFrame)...)
	for range frames {
		if err := w.WriteFrame(wire.TypeEvents, 0, p); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return gz.Bytes()
}

// TestRecordingEventBudget: 5 frames of 500,000 events in a file of a few
// KB. The default budget, MaxRecordingEvents = 1,638,400, counts events
// decoded whatever the stored size: read with a stored size of 1 GiB
// (which the old rule of 32 events per stored byte turned into 34 G), the
// first 3 frames (1,500,000 events) are kept and the 4th (which would make
// 2,000,000) is refused with an error naming the file and
// RLKTOP_MAX_RECORDING_EVENTS; with that variable at 750,000 one frame is
// kept, at 2,500,000 all five.
func TestRecordingEventBudget(t *testing.T) {
	const perFrame = 500_000
	data := zeroEventsRecording(t, 5, perFrame)
	read := func() (int, error) {
		tr, err := Read(bytes.NewReader(data), "crafted.rlk.gz", 1<<30, Options{})
		if tr == nil {
			return -1, err
		}
		return len(tr.Events), err
	}
	n, err := read()
	var fe *Error
	if !errors.As(err, &fe) || fe.Path != "crafted.rlk.gz" {
		t.Fatalf("err = %v, want an *Error naming crafted.rlk.gz", err)
	}
	for _, want := range []string{"1638400", "RLKTOP_MAX_RECORDING_EVENTS", "kept the 1500000", "declaring 500000"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if n != 3*perFrame {
		t.Errorf("kept %d events, want %d", n, 4*perFrame)
	}

	// rlktop's own recording read back (compare, record's summary): no
	// limit (a comparison's recording of 2 M events could not be read).
	if tr, err := Read(bytes.NewReader(data), "own.rlk.gz", 1<<30, Options{Own: true}); err != nil || len(tr.Events) != 5*perFrame {
		t.Errorf("own recording: err %v; want all %d events", err, 5*perFrame)
	}

	t.Setenv(MaxRecordingEventsEnv, "750000")
	n, err = read()
	if err == nil || !strings.Contains(err.Error(), "RLKTOP_MAX_RECORDING_EVENTS=750000") || n != perFrame {
		t.Errorf("with the limit at 750,000: kept %d events, err %v; want %d and an error naming the setting", n, err, perFrame)
	}
	t.Setenv(MaxRecordingEventsEnv, "2500000")
	if n, err = read(); err != nil || n != 5*perFrame {
		t.Errorf("with the limit at 2,500,000: kept %d events, err %v; want all %d", n, err, 5*perFrame)
	}
}
