package tracefile

import (
	"os"
	"runtime"
	"sync"

	"github.com/rlktop/rlktop/tracer"
)

// OpenAll opens every path with Open, runtime.GOMAXPROCS(0) files at once
// (at most len(paths) workers; each file is read, its steps cut and linked
// by one worker). traces[i] and errs[i] belong to paths[i]: the results are
// in input order whatever order the workers finish in, so a caller that
// combines them in slice order gets the same output on every run and on any
// number of cores.
//
// errs[i] is Open's error for paths[i] (a *Error); as with Open,
// traces[i] may be non-nil with errs[i] != nil (a file damaged part way:
// the events before the damage), and is nil when nothing was read. One
// file's error never stops the others.
//
// opts.Progress, when set, is called (never concurrently: under a lock) with
// the bytes read so far summed over all files and the summed size of the
// files as stored (bytes; compressed for a .gz), about every 8 MiB a file
// reads. Peak memory is that of the files being read at once plus the
// traces already returned.
func OpenAll(paths []string, opts Options) (traces []*tracer.Trace, errs []error) {
	traces = make([]*tracer.Trace, len(paths))
	errs = make([]error, len(paths))
	workers := min(runtime.GOMAXPROCS(0), len(paths))
	if workers < 1 {
		return traces, errs
	}
	var total int64
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil {
			total += st.Size()
		}
	}
	var (
		mu   sync.Mutex
		read = make([]int64, len(paths)) // bytes read per file, under mu
		sum  int64
	)
	progress := func(i int) func(int64, int64) {
		if opts.Progress == nil {
			return nil
		}
		return func(n, _ int64) {
			mu.Lock()
			defer mu.Unlock()
			sum += n - read[i]
			read[i] = n
			opts.Progress(sum, total)
		}
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				o := opts
				o.Progress = progress(i)
				traces[i], errs[i] = Open(paths[i], o)
			}
		})
	}
	for i := range paths {
		next <- i
	}
	close(next)
	wg.Wait()
	return traces, errs
}
