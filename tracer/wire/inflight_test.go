package wire

import (
	"encoding/binary"
	"errors"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"
)

// TestHalfSentFramesBounded: 20 connections each start a 16 MiB frame,
// send 12 MiB of it and stall. Together they hold at most MaxInFlight
// (here 64 MiB; 20 such frames pinned 20 × 16 MiB and more): the frames
// past the bound fail with ErrInFlight, the heap grows less than 3 times
// the bound, and once the senders close nothing is held.
func TestHalfSentFramesBounded(t *testing.T) {
	const bound = 64 << 20
	old := MaxInFlight
	MaxInFlight = bound
	defer func() { MaxInFlight = old }()
	const conns, sent = 20, 12 << 20
	runtime.GC()
	var m0 runtime.MemStats
	runtime.ReadMemStats(&m0)
	zeros := make([]byte, 1<<20) // the senders' one buffer, read only
	var peers []net.Conn
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	for range conns {
		a, b := net.Pipe()
		peers = append(peers, b)
		wg.Add(1)
		go func() { // rlktop's end
			defer wg.Done()
			_, err := NewReader(a).Next()
			errs <- err
			a.Close()
		}()
		go func() { // the sender: preamble, a header of 16 MiB, 12 MiB, then nothing
			hdr := make([]byte, HeaderSize)
			hdr[0] = byte(TypeEvents)
			hdr[2], hdr[3] = headerSync[0], headerSync[1]
			binary.LittleEndian.PutUint32(hdr[4:], MaxPayload)
			pre := append(Magic[:], 1, 0, 1, 0)
			b.Write(append(pre[:PreambleSize], hdr...))
			for i := 0; i < sent; i += len(zeros) {
				if _, err := b.Write(zeros); err != nil {
					return
				}
			}
		}()
	}
	// Wait until the readers have what they will get: the count steady.
	deadline := time.Now().Add(20 * time.Second)
	refused := 0
	last, steady := int64(-1), 0
	for time.Now().Before(deadline) && steady < 6 {
		select {
		case err := <-errs:
			if errors.Is(err, ErrInFlight) {
				refused++
			}
		case <-time.After(50 * time.Millisecond):
		}
		if n := InFlight(); n == last && n > 0 {
			steady++
		} else {
			last, steady = n, 0
		}
	}
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	if n := InFlight(); n > MaxInFlight {
		t.Errorf("%d bytes in flight, over the %d bound", n, MaxInFlight)
	}
	// Without the bound the frames hold 20 × 16 MiB (325 MiB measured);
	// other tests of the package running alongside leave some noise.
	if grown := int64(m.HeapAlloc) - int64(m0.HeapAlloc); grown > 3*bound {
		t.Errorf("heap grew %d MiB with 20 half-sent frames, want under %d", grown>>20, 3*bound>>20)
	}
	for _, p := range peers {
		p.Close()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if errors.Is(err, ErrInFlight) {
			refused++
		}
	}
	if refused == 0 {
		t.Error("no frame refused: the bound was never reached")
	}
	if n := InFlight(); n != 0 {
		t.Errorf("%d bytes still counted after every connection closed", n)
	}
}
