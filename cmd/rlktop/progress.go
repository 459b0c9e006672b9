package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/rlktop/rlktop/views"
)

// progressMinBytes: inputs smaller than this (summed, as stored) load in
// a few seconds and get no progress lines.
const progressMinBytes = 256 << 20

// loadProgress returns a tracefile.Options.Progress callback that writes
// "rlktop: reading FILES: 1.2 GiB of 2.6 GiB (45%), 12 s" to w at each
// further 10% of the summed stored size of paths, for report and export
// of long loads (the TUI's loading view shows the same bytes); nil when
// the inputs are under progressMinBytes. Safe for concurrent calls.
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
		fmt.Fprintf(w, "rlktop: reading %s: %s of %s (%d%%), %.0f s\n", what, views.FormatBytes(read), views.FormatBytes(size),
			read*100/size, time.Since(start).Seconds())
	}
}
