package tracefile

import (
	"bufio"
	"fmt"
	"io"
	"math/big"
	"regexp"
	"strconv"
	"strings"

	"github.com/rlktop/rlktop/tracer"
)

// `nsys stats --format csv` reports. Two shapes, recognised by header names
// (older and newer nsys spell them differently; both are accepted):
//
//   - traces with one row per interval — "Start (ns)" plus "End (ns)" or
//     "Duration (ns)", and "Name" — a real (not summary-only) trace:
//     cuda_gpu_trace (has "Strm" or "GrdX") → KindKernel, or KindMemcpy /
//     KindMemset for "[CUDA memcpy …]" / "[CUDA memset]" rows, with Device
//     from "Device" ("NVIDIA A100 (0)" → 0), Stream from "Strm", Corr from
//     "CorrId" and Value ≈ bytes from the rounded "Bytes (MB)" (MB = 10^6
//     bytes); cuda_api_trace (has "Result" or "CorrID") → KindRuntime with
//     Corr, PID, TID; anything else (nvtx_pushpop_trace with PID, TID, Lvl,
//     RangeId …) → KindRange ("ProfilerStep#N" → KindStep, Value N);
//   - summaries — "Total Time (ns)", "Instances"/"Num Calls"/"Count", and a
//     "Name", "Range" or "Operation" column (cuda_gpu_kern_sum, nvtx_sum,
//     cuda_api_sum, cuda_gpu_mem_time_sum; older gpukernsum/nvtxsum) →
//     SummaryOnly with Summary rows. The row kind comes from the column and
//     the name: "Range" → range; "Operation" → memcpy/memset; "Name" →
//     runtime for CUDA API names (cuda…, cu[A-Z]…), else kernel.
//
// nsys stats may print "Processing [...] with [...]..." and blank lines
// before the header; up to 8 such leading lines are skipped.

func init() {
	Register(Format{Name: "nsys-stats-csv", Sniff: sniffNsysStats, Read: readNsysStats})
}

const nsysStatsMaxPreamble = 8

var (
	nsStart  = []string{"Start (ns)", "Start"}
	nsEnd    = []string{"End (ns)", "End"}
	nsDur    = []string{"Duration (ns)", "Duration"}
	nsTotal  = []string{"Total Time (ns)", "Total Time"}
	nsCount  = []string{"Instances", "Num Calls", "Count", "Calls"}
	nsAvg    = []string{"Avg (ns)", "Average (ns)", "Average"}
	nsMed    = []string{"Med (ns)", "Median (ns)", "Median"}
	nsMin    = []string{"Min (ns)", "Minimum (ns)", "Minimum"}
	nsMax    = []string{"Max (ns)", "Maximum (ns)", "Maximum"}
	nsLabels = []string{"Name", "Range", "Operation"}
)

func nsysStatsTrace(h map[string]bool) bool {
	return h["Start (ns)"] && hasAny(h, "End (ns)", "Duration (ns)") && h["Name"]
}

func nsysStatsSum(h map[string]bool) bool {
	return h["Total Time (ns)"] && hasAny(h, nsCount...) && hasAny(h, nsLabels...)
}

func sniffNsysStats(head []byte) bool {
	_, ok := sniffCSVHeader(head, nsysStatsMaxPreamble, func(h map[string]bool) bool { return nsysStatsTrace(h) || nsysStatsSum(h) })
	return ok
}

var cudaAPIName = regexp.MustCompile(`^(cuda|cu[A-Z]|cudnn|cublas|nccl)`)

func readNsysStats(r io.Reader, path string, opts Options) (*tracer.Trace, error) {
	// Find the header line again in the first 64 KiB (Read sniffed the
	// same), then stream the rows: the file is never held whole.
	br := bufio.NewReaderSize(r, 64<<10)
	b, err := br.Peek(64 << 10)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull && len(b) == 0 {
		return nil, &Error{Path: path, Offset: int64(len(b)), Msg: "cannot read", Err: err}
	}
	var isTrace bool
	skip, ok := sniffCSVHeader(b, nsysStatsMaxPreamble, func(h map[string]bool) bool {
		isTrace = nsysStatsTrace(h)
		return isTrace || nsysStatsSum(h)
	})
	if !ok {
		return nil, &Error{Path: path, Offset: 0, Line: 1, Msg: "no nsys stats CSV header found",
			Hint: "expected a header with \"Start (ns)\" and \"Name\" (a trace report) or \"Total Time (ns)\" and \"Instances\" (a summary report)"}
	}
	tab, err := newCSVTable(br, path, skip, opts)
	if err != nil {
		return nil, err
	}
	t := tracer.NewTrace("nsys-stats-csv", path)
	t.Meta["columns"] = strings.Join(tab.header, ",")
	if isTrace {
		err = tab.readRows(t, func() error { return readNsysStatsTrace(tab, t) })
	} else {
		t.Meta["layout"] = "summary"
		err = tab.readRows(t, func() error { return readNsysStatsSum(tab, t) })
	}
	if err != nil {
		return t, err // the rows before the damage are kept
	}
	return t, nil
}

// nsysTraceKind says what a trace report's rows are, from its header.
func nsysTraceKind(tab *csvTable) (tracer.Kind, string) {
	switch {
	case tab.find("Strm", "GrdX") >= 0:
		return tracer.KindKernel, "gpu_trace"
	case tab.find("Result", "CorrID") >= 0:
		return tracer.KindRuntime, "api_trace"
	}
	return tracer.KindRange, "trace"
}

// nsysDevice reads "NVIDIA A100-SXM4-40GB (0)" or "0" as 0.
func nsysDevice(s string) (int32, bool) {
	if i := strings.LastIndexByte(s, '('); i >= 0 && strings.HasSuffix(s, ")") {
		s = s[i+1 : len(s)-1]
	}
	v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
	return int32(v), err == nil
}

func readNsysStatsTrace(tab *csvTable, t *tracer.Trace) error {
	si, ei, di, ni := tab.find(nsStart...), tab.find(nsEnd...), tab.find(nsDur...), tab.find("Name")
	pid, tid := tab.find("PID", "Pid"), tab.find("TID", "Tid")
	corr, dev, strm, mb := tab.find("CorrId", "CorrID"), tab.find("Device"), tab.find("Strm"), tab.find("Bytes (MB)")
	kind, layout := nsysTraceKind(tab)
	t.Meta["layout"] = layout
	for {
		ok, err := tab.next()
		if err != nil || !ok {
			return err
		}
		e := tracer.Event{Kind: kind, Device: -1}
		name, err := tab.need(ni)
		if err != nil {
			return err
		}
		e.Name = t.Strings.Intern(name)
		if kind == tracer.KindKernel {
			e.TID = -1
			switch {
			case strings.HasPrefix(name, "[CUDA memcpy"):
				e.Kind = tracer.KindMemcpy
			case strings.HasPrefix(name, "[CUDA memset"):
				e.Kind = tracer.KindMemset
			}
			if dev >= 0 && tab.field(dev) != "" {
				d, ok := nsysDevice(tab.field(dev))
				if !ok {
					return tab.errAt(dev, fmt.Sprintf("expected a device like \"NVIDIA A100 (0)\", found %q", tab.field(dev)), "", nil)
				}
				e.Device = d
			}
			if e.Stream, err = tab.optInt32At(strm, 0); err != nil {
				return err
			}
			if mb >= 0 && tab.field(mb) != "" && e.Kind != tracer.KindKernel {
				r, ok := new(big.Rat).SetString(tab.field(mb))
				if !ok || !saneNumber(tab.field(mb)) {
					return tab.errAt(mb, fmt.Sprintf("expected a number, found %q", tab.field(mb)), "", nil)
				}
				b, _ := roundDecimal(r.Mul(r, big.NewRat(1000000, 1)).FloatString(0))
				e.Value = b
			}
		}
		c, err := tab.optInt64At(corr, 0)
		if err != nil {
			return err
		}
		e.Corr = uint64(c)
		if e.Start, err = tab.int64At(si); err != nil {
			return err
		}
		if ei >= 0 {
			end, err := tab.int64At(ei)
			if err != nil {
				return err
			}
			var ok bool
			if e.Dur, ok = clampDur(e.Start, end); !ok {
				return tab.errAt(ei, fmt.Sprintf("start %d, end %d: %s", e.Start, end, durWhy(e.Start, end)), "", nil)
			}
			if di >= 0 && tab.field(di) != "" {
				d, err := tab.int64At(di)
				if err != nil {
					return err
				}
				if d != e.Dur {
					t.Warn(fmt.Sprintf("%s:%d: Duration (ns) %d differs from End-Start %d; End-Start used", tab.path, tab.line, d, e.Dur))
				}
			}
		} else if e.Dur, err = tab.int64At(di); err != nil {
			return err
		} else if e.Dur < 0 {
			return tab.errAt(di, "negative duration", "", nil)
		}
		if err := tab.checkTimes(si, e.Start, e.Dur); err != nil {
			return err
		}
		if e.PID, err = tab.optInt32At(pid, 0); err != nil {
			return err
		}
		if !e.Kind.IsGPU() {
			if e.TID, err = tab.optInt32At(tid, 0); err != nil {
				return err
			}
		}
		asStep(&e, name)
		t.Events = append(t.Events, e)
	}
}

func readNsysStatsSum(tab *csvTable, t *tracer.Trace) error {
	cols := summaryCols{name: tab.find(nsLabels...), count: tab.find(nsCount...), total: tab.find(nsTotal...), mean: tab.find(nsAvg...),
		p50: tab.find(nsMed...), min: tab.find(nsMin...), max: tab.find(nsMax...)}
	label := tab.header[cols.name]
	return tab.readSummary(t, cols, func(name string) tracer.Kind {
		switch {
		case label == "Range":
			return tracer.KindRange
		case label == "Operation" && strings.Contains(strings.ToLower(name), "memset"):
			return tracer.KindMemset
		case label == "Operation":
			return tracer.KindMemcpy
		case cudaAPIName.MatchString(name):
			return tracer.KindRuntime
		}
		return tracer.KindKernel
	})
}
