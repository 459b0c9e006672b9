package main

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"github.com/rlktop/rlktop/internal/units"
)

// progressMinBytes: inputs smaller than this (summed, as stored) load in
// a few seconds and get no progress lines.
const progressMinBytes = 256 << 20

// progressQuiet: no progress line is written in a load's first second (a
// 281 MB Kineto file is read in about half a second, which printed nine
// lines marked "0 s").
const progressQuiet = time.Second

// loadGCPercent is the garbage collector's headroom (GOGC) for long loads:
// a trace's events are one pointer-free array, live until the end, so with
// Go's default 100 the heap grew to about twice the events before the
// garbage of linking and aggregation was collected; marking never scans
// the array, so collecting more often costs little. Measured on a 2.8 GB
// Kineto trace (100 copies of hta_diff_control_a100): report's peak RSS
// 1,219,456 KB at 100, 971,876 KB at 50, 923,336 KB at 25, the same
// output; 25 cost more time on a 0.3 GB trace. At 10 GB
// it saves only 1.3% (3,589,284 → 3,544,200 KB): there the peak is live
// events and linking state, not garbage; memory still grows with the file.
const loadGCPercent = 50

// loadProgress returns a tracefile.Options.Progress callback that writes
// "rlktop: reading FILES: 1.2 GiB of 2.6 GiB (45%), 12 s" to w at each
// further 10% of the summed stored size of paths after the first second
// (progressQuiet), for report and export
// of long loads (the TUI's loading view shows the same bytes); nil when
// the inputs are under progressMinBytes. For such loads it also sets the
// collector's headroom to loadGCPercent, unless the user set GOGC.
// Safe for concurrent calls.
func loadProgress(w io.Writer, paths []string) func(read, size int64) {
	var total int64
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil {
			total += st.Size()
		}
	}
	if total < progressMinBytes {
		return nil
	}
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(loadGCPercent)
	}
	what := paths[0]
	if len(paths) > 1 {
		what = fmt.Sprintf("%d files", len(paths))
	}
	var (
		mu    sync.Mutex
		next  = total / 10
		start = time.Now()
	)
	return func(read, size int64) {
		mu.Lock()
		defer mu.Unlock()
		if size <= 0 || read < next {
			return
		}
		for next <= read {
			next += size / 10
		}
		if time.Since(start) < progressQuiet {
			return // a read this fast needs no news of itself
		}
		fmt.Fprintf(w, "rlktop: reading %s: %s of %s (%d%%), %.0f s\n", what, units.Bytes(read), units.Bytes(size),
			read*100/size, time.Since(start).Seconds())
	}
}
