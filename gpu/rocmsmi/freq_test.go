package rocmsmi

import (
	"encoding/binary"
	"testing"
)

func TestDecodeFreqBothLayouts(t *testing.T) {
	le := binary.LittleEndian
	freqs := []uint64{500e6, 800e6, 1200e6, 2100e6}
	// Pre-ROCm-6 layout, current = 2 → 1200 MHz.
	old := make([]byte, freqBufSize)
	le.PutUint32(old[0:], uint32(len(freqs)))
	le.PutUint32(old[4:], 2)
	for i, f := range freqs {
		le.PutUint64(old[8+8*i:], f)
	}
	if v, ok := decodeFreq(old); !ok || v != 1200 {
		t.Errorf("old layout: %d %v, want 1200", v, ok)
	}
	// ROCm 6 layout with has_deep_sleep = true, current = 3 → 2100 MHz.
	for _, deep := range []byte{0, 1} {
		nb := make([]byte, freqBufSize)
		nb[0] = deep
		le.PutUint32(nb[4:], uint32(len(freqs)))
		le.PutUint32(nb[8:], 3)
		for i, f := range freqs {
			le.PutUint64(nb[16+8*i:], f)
		}
		if v, ok := decodeFreq(nb); !ok || v != 2100 {
			t.Errorf("ROCm 6 layout (deep sleep %d): %d %v, want 2100", deep, v, ok)
		}
	}
	// Old layout with num 1, current 0 must not be taken for the new one.
	one := make([]byte, freqBufSize)
	le.PutUint32(one[0:], 1)
	le.PutUint64(one[8:], 96e6)
	if v, ok := decodeFreq(one); !ok || v != 96 {
		t.Errorf("single-level old layout: %d %v, want 96", v, ok)
	}
	if _, ok := decodeFreq(make([]byte, freqBufSize)); ok {
		t.Error("zero buffer decoded")
	}
}
