package tracefile

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rlktop/rlktop/internal/units"
	"github.com/rlktop/rlktop/tracer"
)

// noGPUWarn is the fixed part of the warning an input that yields no GPU
// work gets, so that Read does not add a second one and Merge can drop it
// when another file of the same run holds the GPU work.
const noGPUWarn = "no GPU kernel, memcpy or memset read"

// hasGPUWork reports whether t holds a kernel, copy or memset event.
func hasGPUWork(t *tracer.Trace) bool {
	for i := range t.Events {
		switch t.Events[i].Kind {
		case tracer.KindKernel, tracer.KindMemcpy, tracer.KindMemset:
			return true
		}
	}
	return false
}

// warnNoGPU adds the no-GPU-work warning to t: which importer read the
// file (t.Format) and what it found there (found, importer's words:
// counts by table, category or phase), so that a user can tell a CPU-only
// trace from a file whose variant rlktop misreads.
func warnNoGPU(t *tracer.Trace, found string) {
	if advice := hostOnlyAdvice(t); advice != "" {
		t.Warn(fmt.Sprintf("%s: %s by the %s importer; it found %s. %s", t.Path, noGPUWarn, t.Format, found, advice))
		return
	}
	t.Warn(fmt.Sprintf("%s: %s by the %s importer; it found %s. A CPU-only trace looks like this; "+
		"if the run did use a GPU, this file may be a variant of the format rlktop does not read: report it with the file",
		t.Path, noGPUWarn, t.Format, found))
}

// hostOnlyAdvice names the GPU-free table t is and the file of the same
// run that holds its GPU work, for the tables a profiler writes about the
// host only: nsys stats' NVTX range and CUDA API reports, rocprofv3's
// --stats of HIP/HSA API calls; "" for anything else.
func hostOnlyAdvice(t *tracer.Trace) string {
	only := func(kinds ...tracer.Kind) bool {
		n := 0
		for i := range t.Events {
			if !slices.Contains(kinds, t.Events[i].Kind) {
				return false
			}
			n++
		}
		for i := range t.Summary {
			if !slices.Contains(kinds, t.Summary[i].Kind) {
				return false
			}
			n++
		}
		return n > 0
	}
	switch {
	case t.Format == "nsys-stats-csv" && only(tracer.KindRange, tracer.KindStep):
		return "It is a table of NVTX ranges (nsys stats -r nvtx_pushpop_trace or nvtx_sum), host ranges without GPU work: " +
			"the same run's kernels are in `nsys stats -r cuda_gpu_trace --format csv`, or give rlktop its SQLite export " +
			"(nsys export --type sqlite), which holds kernels and NVTX ranges together"
	case t.Format == "nsys-stats-csv" && only(tracer.KindRuntime):
		return "It is a table of CUDA API calls (nsys stats -r cuda_api_trace or cuda_api_sum), host time without GPU work: " +
			"the same run's kernels are in `nsys stats -r cuda_gpu_trace --format csv` or its SQLite export"
	case t.Format == "rocprofv3-csv" && only(tracer.KindRange, tracer.KindInstant):
		return "It is a table of roctx markers and ranges (rocprofv3 marker_api_trace.csv), host ranges without GPU work: " +
			"the same run's kernel_trace.csv holds its kernels"
	case t.Format == "rocprofv3-csv" && only(tracer.KindRuntime, tracer.KindRange):
		return "It is a table of host API calls (rocprofv3 --stats hip_api_stats.csv or hsa_api_stats.csv, or an API trace), " +
			"host time without GPU work: the same run's kernel_stats.csv and memory_copy_stats.csv hold its GPU sums, " +
			"kernel_trace.csv and memory_copy_trace.csv its GPU events"
	}
	return ""
}

// checkGPUWork is run by Read on every imported trace: when t has no GPU
// work and its importer said nothing about it, it warns with t's events
// counted by kind (and the phases the importer skipped, from
// Meta["skipped_events"]). Summary-only inputs with rows are left alone:
// their rows are the GPU work.
func checkGPUWork(t *tracer.Trace) {
	if t == nil || hasGPUWork(t) || (t.SummaryOnly && len(t.Summary) > 0 && hostOnlyAdvice(t) == "") || expectedCPUOnly(t) {
		return
	}
	for _, w := range t.Warnings {
		if strings.Contains(w, noGPUWarn) {
			return
		}
	}
	warnNoGPU(t, eventsByKind(t))
}

// expectedCPUOnly reports whether t, a trace without GPU work, says
// itself that it is a CPU run, so that no warning is due (a gloo
// DDP job's rank files are CPU runs, and a warning asking the user to
// report them would be wrong): a Kineto trace whose deviceProperties list no
// GPU (Kineto lists every GPU the process could use), or that lists none
// at all and whose distributedInfo backend is gloo (torch.distributed's CPU
// backend). A trace that lists GPUs but holds no GPU work still warns: the
// profiler may have left CUDA out, or rlktop misread a variant.
func expectedCPUOnly(t *tracer.Trace) bool {
	if t.Format != "kineto" {
		return false
	}
	n, listed := t.Meta["deviceProperties.count"]
	return (listed && n == "0") || (!listed && t.Meta["distributedInfo.backend"] == "gloo")
}

// eventsByKind describes t's events as "N events (cpu_op 12, range 3)",
// largest first, with counters and skipped phases when there are any.
func eventsByKind(t *tracer.Trace) string {
	var n [256]int
	for i := range t.Events {
		n[t.Events[i].Kind]++
	}
	type kc struct {
		k tracer.Kind
		c int
	}
	var ks []kc
	for k, c := range n {
		if c > 0 {
			ks = append(ks, kc{tracer.Kind(k), c})
		}
	}
	slices.SortFunc(ks, func(a, b kc) int {
		if a.c != b.c {
			return b.c - a.c
		}
		return int(a.k) - int(b.k)
	})
	var b strings.Builder
	if len(t.Events) == 0 && len(t.Summary) > 0 {
		var byKind [256]int
		for i := range t.Summary {
			byKind[t.Summary[i].Kind]++
		}
		fmt.Fprintf(&b, "%d summary rows, no events (", len(t.Summary))
		sep := ""
		for k, c := range byKind {
			if c > 0 {
				fmt.Fprintf(&b, "%s%s %d", sep, tracer.Kind(k), c)
				sep = ", "
			}
		}
		b.WriteString(")")
	} else if len(t.Events) == 0 {
		b.WriteString("no events")
	} else {
		fmt.Fprintf(&b, "%s (", units.Plural(int64(len(t.Events)), "event"))
		for i, x := range ks {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s %d", x.k, x.c)
		}
		b.WriteString(")")
	}
	if len(t.Counters) > 0 {
		fmt.Fprintf(&b, ", %s", units.Plural(int64(len(t.Counters)), "counter sample"))
	}
	if s := t.Meta["skipped_events"]; s != "" {
		fmt.Fprintf(&b, "; skipped by phase: %s", s)
	}
	return b.String()
}
