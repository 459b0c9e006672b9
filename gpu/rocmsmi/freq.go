package rocmsmi

import "encoding/binary"

// maxFreqs is RSMI_MAX_NUM_FREQUENCIES.
const maxFreqs = 32

// freqBufSize is larger than rsmi_frequencies_t in every ROCm release (264
// bytes before ROCm 6, 272 with has_deep_sleep), so either layout fits.
const freqBufSize = 512

// decodeFreq reads the current clock, in MHz, from an rsmi_frequencies_t
// filled by whichever librocm_smi64 is installed. The struct changed
// layout in ROCm 6, which put `bool has_deep_sleep` first:
//
//	before: uint32 num_supported @0, uint32 current @4, uint64 frequency[32] @8
//	ROCm 6: bool has_deep_sleep @0, uint32 num_supported @4, uint32 current @8, uint64 frequency[32] @16
//
// The buffer is zeroed before the call; a layout is accepted only when
// 0 < num_supported <= 32, current < num_supported and the frequency is
// 1 MHz..100 GHz (values are Hz). Read as the wrong layout, "current"
// becomes the other layout's num_supported or a frequency's low word and
// fails these checks.
func decodeFreq(b []byte) (mhz int, ok bool) {
	if len(b) < 16+8*maxFreqs {
		return 0, false
	}
	le := binary.LittleEndian
	try := func(numOff, curOff, freqOff int) (int, bool) {
		num, cur := le.Uint32(b[numOff:]), le.Uint32(b[curOff:])
		if num == 0 || num > maxFreqs || cur >= num {
			return 0, false
		}
		hz := le.Uint64(b[freqOff+8*int(cur):])
		if hz < 1e6 || hz > 1e11 {
			return 0, false
		}
		return int(hz / 1e6), true
	}
	if v, ok := try(4, 8, 16); ok && b[0] <= 1 && b[1] == 0 && b[2] == 0 && b[3] == 0 {
		return v, true
	}
	return try(0, 4, 8)
}
