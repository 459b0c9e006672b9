package main

// pySampleOption turns --py-sample-hz into loop.LiveOptions.PySampleHz:
// a rate > 0 as it is, 0 (off) as -1.
func pySampleOption(hz float64) float64 {
	if hz > 0 {
		return hz
	}
	return -1
}
