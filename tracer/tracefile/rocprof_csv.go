package tracefile

import (
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/rlktop/rlktop/tracer"
)

// rocprof CSV importers.
//
// rocprofv3 (rocprofiler-sdk, `--output-format csv`) writes one CSV per
// domain; rocprof v1/v2 (the older rocprofiler) write results.csv /
// timestamps.csv. Every layout is recognised and read by header names,
// never by column position, because the columns changed across releases
// (DESIGN.md: 2024 Private_Segment_Size/Group_Segment_Size and no Stream_Id;
// 2025+ Stream_Id, LDS_Block_Size, Scratch_Size, VGPR/SGPR counts, agents
// written as "Agent 4"):
//
//   - kernel_trace.csv: Kernel_Name, Start_Timestamp, End_Timestamp and
//     Kind or Agent_Id → KindKernel events ("rocprofv3-csv");
//   - memory_copy_trace.csv: Direction, Start_Timestamp, End_Timestamp →
//     KindMemcpy named after Direction ("MEMORY_COPY_HOST_TO_DEVICE");
//   - marker_api_trace.csv / hip_api_trace.csv / hsa_api_trace.csv: Domain,
//     Function, Start_Timestamp, End_Timestamp → for MARKER domains a
//     KindRange (or KindInstant when start == end) named by Function (the
//     roctx message); for other domains a KindRuntime call; a range named
//     "ProfilerStep#N" becomes KindStep with Value N (as in Kineto);
//   - *_stats.csv (`--stats`): Name, Calls, TotalDurationNs … → a
//     summary-only trace (SummaryOnly, Summary rows);
//   - rocprof v1/v2 timestamps.csv / results.csv: Kernel_Name (KernelName),
//     Start_Timestamp (BeginNs), End_Timestamp (EndNs), GPU_ID (gpu-id)
//     without Kind/Agent_Id → KindKernel events ("rocprof-csv").
//
// Kernel names are kept exactly as written, including rocprof v1/v2's
// " [clone .kd]" / " (.kd)" descriptor suffixes and `--truncate-kernels`
// short names (Event.Name's contract: exactly as the source wrote it); use
// RocprofBaseName to shorten them for display or to match the same kernel
// across rocprof versions.
//
// All timestamps are ns as written (rocprofiler's clock: CLOCK_BOOTTIME for
// rocprofv3); they are not shifted. Device is the agent number or GPU id as
// written ("Agent 4" → 4; v2's GPU_ID such as 60633), not a HIP device
// index. Stream is Stream_Id when present, else the queue id.

func init() {
	Register(Format{Name: "rocprofv3-csv", Sniff: sniffRocprofV3CSV, Read: readRocprofCSV})
	Register(Format{Name: "rocprof-csv", Sniff: sniffRocprofV1CSV, Read: readRocprofCSV})
}

type rocprofLayout int

const (
	rpUnknown rocprofLayout = iota
	rpKernelV3
	rpKernelV1
	rpMemcpy
	rpAPI
	rpStats
)

var (
	rpName  = []string{"Kernel_Name", "KernelName", "Kernel-Name"}
	rpStart = []string{"Start_Timestamp", "BeginNs", "Start_Timestamp_Ns"}
	rpEnd   = []string{"End_Timestamp", "EndNs", "End_Timestamp_Ns"}
)

func rocprofLayoutOf(h map[string]bool) rocprofLayout {
	hasTimes := hasAny(h, rpStart...) && hasAny(h, rpEnd...)
	switch {
	case hasAny(h, rpName...) && hasTimes:
		if h["Kind"] || h["Agent_Id"] {
			return rpKernelV3
		}
		return rpKernelV1
	case h["Direction"] && hasTimes:
		return rpMemcpy
	case h["Domain"] && h["Function"] && hasTimes:
		return rpAPI
	case h["Name"] && h["Calls"] && h["TotalDurationNs"]:
		return rpStats
	}
	return rpUnknown
}

func sniffRocprofV3CSV(head []byte) bool {
	_, ok := sniffCSVHeader(head, 1, func(h map[string]bool) bool {
		l := rocprofLayoutOf(h)
		return l != rpUnknown && l != rpKernelV1
	})
	return ok
}

func sniffRocprofV1CSV(head []byte) bool {
	_, ok := sniffCSVHeader(head, 1, func(h map[string]bool) bool { return rocprofLayoutOf(h) == rpKernelV1 })
	return ok
}

var layoutNames = map[rocprofLayout]string{
	rpKernelV3: "kernel_trace",
	rpKernelV1: "rocprof-v1/v2 kernel timestamps",
	rpMemcpy:   "memory_copy_trace",
	rpAPI:      "api_trace",
	rpStats:    "stats",
}

func readRocprofCSV(r io.Reader, path string, opts Options) (*tracer.Trace, error) {
	tab, err := newCSVTable(r, path, 0, opts)
	if err != nil {
		return nil, err
	}
	h := make(map[string]bool, len(tab.header))
	for _, n := range tab.header {
		h[n] = true
	}
	layout := rocprofLayoutOf(h)
	format := "rocprofv3-csv"
	if layout == rpKernelV1 {
		format = "rocprof-csv"
	}
	t := tracer.NewTrace(format, path)
	t.Meta["layout"] = layoutNames[layout]
	t.Meta["columns"] = strings.Join(tab.header, ",")
	switch layout {
	case rpKernelV3, rpKernelV1:
		err = tab.readRows(t, func() error { return readRocprofKernels(tab, t, layout) })
	case rpMemcpy:
		err = tab.readRows(t, func() error { return readRocprofMemcpy(tab, t) })
	case rpAPI:
		err = tab.readRows(t, func() error { return readRocprofAPI(tab, t) })
	case rpStats:
		err = tab.readRows(t, func() error { return readRocprofStats(tab, t) })
	default:
		return nil, &Error{Path: path, Offset: 0, Line: 1, Msg: "CSV header matches no rocprof layout",
			Hint: "expected kernel_trace.csv (Kernel_Name, Start_Timestamp, End_Timestamp), memory_copy_trace.csv (Direction), " +
				"an API/marker trace (Domain, Function) or a --stats file (Name, Calls, TotalDurationNs)"}
	}
	if err != nil {
		return t, err // the rows before the damage are kept
	}
	return t, nil
}

// parseAgent reads an agent column: "4", "Agent 4", "GPU 0".
func parseAgent(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, ' '); i >= 0 {
		s = s[i+1:]
	}
	v, err := strconv.ParseInt(s, 10, 32)
	return v, err == nil
}

func (t *csvTable) agentAt(i int) (int32, error) {
	if i < 0 || t.field(i) == "" {
		return 0, nil
	}
	v, ok := parseAgent(t.field(i))
	if !ok {
		return 0, t.errAt(i, fmt.Sprintf("expected an agent id (\"4\" or \"Agent 4\"), found %q", t.field(i)), "", nil)
	}
	return int32(v), nil
}

// times reads the start and end columns; a row with end < start is kept
// with Dur 0 and a warning.
func (t *csvTable) times(tr *tracer.Trace, si, ei int) (start, dur int64, err error) {
	start, err = t.int64At(si)
	if err != nil {
		return
	}
	end, err := t.int64At(ei)
	if err != nil {
		return
	}
	dur, ok := clampDur(start, end)
	if !ok {
		tr.Warn(fmt.Sprintf("%s:%d: start %d, end %d: %s; duration set to 0", t.path, t.line, start, end, durWhy(start, end)))
	}
	if err := t.checkTimes(si, start, dur); err != nil {
		return 0, 0, err
	}
	return start, dur, nil
}

// int32Of narrows an id (pid, tid, stream, device) to int32; a value
// outside int32 becomes -1 (unknown) rather than wrapping.
func int32Of(v int64) int32 {
	if v > 1<<31-1 || v < -1<<31 {
		return -1
	}
	return int32(v)
}

// optInt32At is optInt64At (def for a missing column or empty value) for a
// 32-bit id, narrowed by int32Of.
func (t *csvTable) optInt32At(i int, def int64) (int32, error) {
	v, err := t.optInt64At(i, def)
	return int32Of(v), err
}

// rpOpCols are the column indexes (-1: not in the file) of what a
// rocprofv3 kernel row and memory-copy row share (rocprofOp).
type rpOpCols struct {
	start, end int // Start_Timestamp, End_Timestamp (ns; required)
	device     int // the agent of the op ("4", "Agent 4", "GPU 0"; 0 when absent)
	stream     int // Stream_Id, else Queue_Id (0 when absent)
	corr       int // Correlation_Id (0 when absent)
	pid        int // Process_Id (0 when absent; memory copies have none)
	bytes      int // Bytes of a memory copy, into Event.Value (0 when absent); -1 for kernels
	tid        int // Thread_Id (-1 when absent)
}

// rocprofOp reads the current row's GPU-op fields into e, in this order:
// times (csvTable.times: ns, end before start kept as Dur 0 with a
// warning), device, stream, correlation id, pid, bytes, tid; the first bad
// value is the error (a row error: readRows skips the row). Stream, pid
// and tid outside int32 become -1 (int32Of); a column of c that is -1 is
// not read and its field keeps the default above.
func (tab *csvTable) rocprofOp(t *tracer.Trace, e *tracer.Event, c rpOpCols) error {
	var err error
	if e.Start, e.Dur, err = tab.times(t, c.start, c.end); err != nil {
		return err
	}
	if e.Device, err = tab.agentAt(c.device); err != nil {
		return err
	}
	if e.Stream, err = tab.optInt32At(c.stream, 0); err != nil {
		return err
	}
	corr, err := tab.optInt64At(c.corr, 0)
	if err != nil {
		return err
	}
	e.Corr = uint64(corr)
	if e.PID, err = tab.optInt32At(c.pid, 0); err != nil {
		return err
	}
	if c.bytes >= 0 {
		if e.Value, err = tab.optInt64At(c.bytes, 0); err != nil {
			return err
		}
	}
	e.TID, err = tab.optInt32At(c.tid, -1)
	return err
}

func readRocprofKernels(tab *csvTable, t *tracer.Trace, layout rocprofLayout) error {
	ni := tab.find(rpName...)
	c := rpOpCols{start: tab.find(rpStart...), end: tab.find(rpEnd...), device: tab.find("Agent_Id", "GPU_ID", "gpu-id"),
		stream: tab.find("Stream_Id"), corr: tab.find("Correlation_Id", "Correlation_ID"),
		pid: tab.find("Process_Id", "PID", "pid"), bytes: -1, tid: tab.find("Thread_Id", "TID", "tid")}
	if c.stream < 0 {
		c.stream = tab.find("Queue_Id", "Queue_ID", "queue-id")
	}
	devs := map[int32]bool{}
	for {
		ok, err := tab.next()
		if err != nil || !ok {
			return err
		}
		var e tracer.Event
		e.Kind = tracer.KindKernel
		name, err := tab.need(ni)
		if err != nil {
			return err
		}
		if name == "" {
			return tab.errAt(ni, "empty kernel name", "", nil)
		}
		e.Name = t.Strings.Intern(name)
		if err := tab.rocprofOp(t, &e, c); err != nil {
			return err
		}
		t.Events = append(t.Events, e)
		if !devs[e.Device] {
			devs[e.Device] = true
			name := fmt.Sprintf("AMD GPU, rocprofv3 agent %d (the CSV names no device)", e.Device)
			if layout == rpKernelV1 {
				name = fmt.Sprintf("AMD GPU, GPU_ID %d of the CSV (it names no device)", e.Device)
			}
			t.Devices = append(t.Devices, tracer.Device{ID: e.Device, Name: name, Vendor: "amd"})
		}
	}
}

func readRocprofMemcpy(tab *csvTable, t *tracer.Trace) error {
	di := tab.find("Direction")
	src, dst := tab.find("Source_Agent_Id"), tab.find("Destination_Agent_Id")
	c := rpOpCols{start: tab.find(rpStart...), end: tab.find(rpEnd...), stream: tab.find("Stream_Id", "Queue_Id"),
		corr: tab.find("Correlation_Id"), pid: -1, bytes: tab.find("Bytes", "Size", "Copy_Bytes"), tid: tab.find("Thread_Id")}
	for {
		ok, err := tab.next()
		if err != nil || !ok {
			return err
		}
		e := tracer.Event{Kind: tracer.KindMemcpy}
		dir, err := tab.need(di)
		if err != nil {
			return err
		}
		e.Name = t.Strings.Intern(dir)
		// The device side of the copy: the destination for host-to-device,
		// else the source.
		c.device = dst
		if strings.Contains(dir, "DEVICE_TO_HOST") {
			c.device = src
		}
		if err := tab.rocprofOp(t, &e, c); err != nil {
			return err
		}
		t.Events = append(t.Events, e)
	}
}

func readRocprofAPI(tab *csvTable, t *tracer.Trace) error {
	doi, fi, si, ei := tab.find("Domain"), tab.find("Function"), tab.find(rpStart...), tab.find(rpEnd...)
	pid, tid, corr := tab.find("Process_Id"), tab.find("Thread_Id"), tab.find("Correlation_Id")
	for {
		ok, err := tab.next()
		if err != nil || !ok {
			return err
		}
		var e tracer.Event
		e.Device = -1
		domain, err := tab.need(doi)
		if err != nil {
			return err
		}
		fn, err := tab.need(fi)
		if err != nil {
			return err
		}
		e.Name = t.Strings.Intern(fn)
		if e.Start, e.Dur, err = tab.times(t, si, ei); err != nil {
			return err
		}
		switch {
		case strings.Contains(domain, "MARKER") && e.Dur == 0:
			e.Kind = tracer.KindInstant
		case strings.Contains(domain, "MARKER"):
			e.Kind = tracer.KindRange
		default:
			e.Kind = tracer.KindRuntime
		}
		if e.PID, err = tab.optInt32At(pid, 0); err != nil {
			return err
		}
		if e.TID, err = tab.optInt32At(tid, 0); err != nil {
			return err
		}
		c, err := tab.optInt64At(corr, 0)
		if err != nil {
			return err
		}
		if e.Kind == tracer.KindRuntime {
			e.Corr = uint64(c)
		}
		asStep(&e, fn)
		t.Events = append(t.Events, e)
	}
}

// apiName matches HIP/HSA/roctx API function names in --stats files, which
// otherwise look exactly like kernel stats.
var apiName = regexp.MustCompile(`^(__)?(hip|hsa|roctx|rccl|nccl|amd_comgr|hsaKmt)[A-Z_a-z]`)

func readRocprofStats(tab *csvTable, t *tracer.Trace) error {
	cols := summaryCols{name: tab.find("Name"), count: tab.find("Calls"), total: tab.find("TotalDurationNs"), mean: tab.find("AverageNs"),
		p50: -1, min: tab.find("MinNs"), max: tab.find("MaxNs")}
	return tab.readSummary(t, cols, func(name string) tracer.Kind {
		switch {
		case strings.HasPrefix(name, "MEMORY_COPY"):
			return tracer.KindMemcpy
		case apiName.MatchString(name):
			return tracer.KindRuntime
		}
		return tracer.KindKernel
	})
}

var kdSuffix = regexp.MustCompile(`\s*(\[clone \.kd\]|\(\.kd\)|\.kd)$`)

// RocprofBaseName strips the kernel-descriptor suffix that rocprof v1/v2
// append to kernel names (" [clone .kd]", " (.kd)", ".kd"), so that the same
// kernel matches across rocprof versions and displays short. Other names are
// returned unchanged.
func RocprofBaseName(name string) string {
	return kdSuffix.ReplaceAllString(name, "")
}
