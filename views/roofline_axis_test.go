package views

import "testing"

// Decades on the roofline's log x axis are named exactly: 10^-3 read
// "0.00" (a value a log axis cannot hold) and 10^3 "1.00 k".
func TestDecadeLabel(t *testing.T) {
	for d, want := range map[int]string{-3: "0.001", -1: "0.1", 0: "1", 2: "100", 3: "1k", 4: "10k", 7: "10M"} {
		if got := decadeLabel(d); got != want {
			t.Errorf("decadeLabel(%d) = %q, want %q", d, got, want)
		}
	}
}
