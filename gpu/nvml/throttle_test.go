package nvml

import (
	"slices"
	"testing"
)

func TestThrottleNames(t *testing.T) {
	// Bits from nvml.h: SwPowerCap 0x4, HwThermalSlowdown 0x40,
	// GpuIdle 0x1, plus an undefined bit 12.
	got := ThrottleNames(0x4 | 0x40 | 0x1 | 1<<12)
	want := []string{"gpu_idle", "sw_power_cap", "hw_thermal", "bit_12"}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if ThrottleNames(0) != nil {
		t.Error("0 → want nil")
	}
}
