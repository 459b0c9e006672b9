package nvml

import "strconv"

// Clock event ("throttle") reason bits, from nvml.h
// (nvmlClocksEventReason*, formerly nvmlClocksThrottleReason*), with the
// names rlktop shows.
var throttleBits = []struct {
	bit  uint64
	name string
}{
	{0x1, "gpu_idle"},            // GPU is idle
	{0x2, "applications_clocks"}, // clocks set to application values
	{0x4, "sw_power_cap"},        // software power cap (at the power limit)
	{0x8, "hw_slowdown"},         // hardware slowdown (thermal or power brake)
	{0x10, "sync_boost"},         // clocks synchronised with other GPUs
	{0x20, "sw_thermal"},         // software thermal slowdown
	{0x40, "hw_thermal"},         // hardware thermal slowdown
	{0x80, "hw_power_brake"},     // external power brake assertion
	{0x100, "display_clocks"},    // display clock setting
	{0x200, "board_limit"},       // board limit policy
	{0x400, "reliability"},       // reliability policy
}

// ThrottleNames decodes an NVML clock event reason mask into names, in bit
// order; bits nvml.h does not define come out as "bit_N". 0 gives nil.
func ThrottleNames(mask uint64) []string {
	var out []string
	for _, b := range throttleBits {
		if mask&b.bit != 0 {
			out = append(out, b.name)
			mask &^= b.bit
		}
	}
	for i := 0; mask != 0; i++ {
		if mask&1 != 0 {
			out = append(out, "bit_"+strconv.Itoa(i))
		}
		mask >>= 1
	}
	return out
}
