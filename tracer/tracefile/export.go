package tracefile

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/klauspost/compress/gzip"
	"github.com/rlktop/rlktop/internal/fileout"
	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/steps"
)

// ExportOptions tune WriteChrome.
type ExportOptions struct {
	// NoFlows leaves out the launch→GPU flow arrows (ph "s"/"f", cat
	// "ac2g"). They are written by default.
	NoFlows bool
	// NoCounters leaves out the counter tracks (ph "C").
	NoCounters bool
	// ProcessName names the CPU processes (process_name metadata); ""
	// uses Trace.Meta["process_name"], else "rlktop".
	ProcessName string
}

// ErrNothingToExport is returned (wrapped) by WriteChrome for traces that
// hold per-kernel sums only (Trace.SummaryOnly): there is no timeline to
// write.
var ErrNothingToExport = errors.New("trace holds no individual events")

// hostDevicePID is the Chrome pid used for GPU-kind events whose Device is
// negative (the built-in loop's CPU "kernels"), so that they get their own
// process instead of colliding with GPU 0.
const hostDevicePID = 1 << 30

// cpuPIDOffset is added to a CPU process id that equals a device id, so that
// CPU threads never share a Chrome process with a GPU's streams.
const cpuPIDOffset = 1 << 29

// WriteChrome writes t as Chrome trace-event JSON (the "JSON Object Format"
// with a traceEvents array, as PyTorch's Kineto writes it), which Perfetto
// UI, chrome://tracing and Holistic Trace Analysis open.
//
// Layout, following Kineto:
//   - one process per device (pid = device id, process_name "GPU N"), one
//     track per stream (tid = stream, thread_name "stream N"): kernels
//     (cat "kernel"), copies ("gpu_memcpy", args.bytes), sets
//     ("gpu_memset"), GPU annotations ("gpu_user_annotation");
//   - CPU events on their process and thread (pid = Event.PID, tid =
//     Event.TID): "cuda_runtime", "cuda_driver", "cpu_op",
//     "user_annotation" (ranges; steps as "ProfilerStep#N", or under their
//     own names when step-like ranges cut them, Trace.StepRule), "cuda_sync",
//     "overhead", "python_function", instants ("i");
//   - flow arrows from each launch call to the GPU work it launched (ph
//     "s" at the call, ph "f" with bp "e" at the GPU event, cat "ac2g",
//     id = correlation id);
//   - GPU work launched on a known CPU thread with no launch call in the
//     trace (the built-in loop's ops: tracer.Trace.Link's second launch
//     rule) gets one written for it: a zero-length "cuda_runtime" event
//     "rlktop launch" on that thread at the op's start, with a correlation
//     id no event uses and its flow, so that `rlktop report` of the export
//     equals the report of the recording in every view and HTA
//     or Perfetto see the same launch;
//   - counters as ph "C" events on the device's process (host-wide ones on
//     the first CPU process), one series named "value";
//   - "deviceProperties" from Trace.Devices and "distributedInfo" when the
//     rank or world size is known; Trace.Meta under "rlktopMeta".
//
// ts and dur are microseconds written as exact decimals from the integer
// nanoseconds ("1712195495519689.047"); no float64 is involved, so no
// nanosecond is lost at epoch magnitudes. args carry "correlation",
// "device", "stream" and "External id" (the innermost CPU operator or
// range open on the launching thread at launch, numbered in trace order,
// as Kineto links kernels to operators).
//
// Events are written in Trace.Events order through a bufio.Writer; the
// document is never held in memory. Counters that are NaN or infinite have
// no JSON form and are skipped. A summary-only trace returns an error
// wrapping ErrNothingToExport. Write errors are returned as they come.
func WriteChrome(w io.Writer, t *tracer.Trace, opts ExportOptions) error {
	if t.SummaryOnly {
		return fmt.Errorf("%s: %w: it holds per-kernel sums only (%d rows), so there is no timeline to export; export the trace the sums came from instead",
			t.Path, ErrNothingToExport, len(t.Summary))
	}
	x := &exporter{t: t, opts: opts}
	x.w = bufio.NewWriterSize(w, 256<<10)
	x.plan()
	x.writeHeader()
	x.writeMetadataEvents()
	for i := range t.Events {
		x.writeEvent(i)
	}
	for i := range t.Memory {
		x.writeMemory(&t.Memory[i]) // kineto_memory.go
	}
	if !opts.NoCounters {
		for i := range t.Counters {
			x.writeCounter(&t.Counters[i])
		}
	}
	x.writeTrailer()
	return x.w.Flush()
}

// ExportFile writes t to path as Chrome trace JSON, gzip-compressed when
// path ends in ".gz", whole or not at all (internal/fileout: a temporary
// file beside path, renamed into place; mode 0644). Errors name the file.
func ExportFile(path string, t *tracer.Trace, opts ExportOptions) error {
	err := fileout.Write(path, func(w io.Writer) error {
		if !strings.HasSuffix(path, ".gz") {
			return WriteChrome(w, t, opts)
		}
		zw := gzip.NewWriter(w)
		if err := WriteChrome(zw, t, opts); err != nil {
			return err
		}
		if err := zw.Close(); err != nil {
			return fmt.Errorf("gzip: %w", err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	return nil
}

type exporter struct {
	t    *tracer.Trace
	opts ExportOptions
	w    *bufio.Writer
	buf  []byte
	// extID[i] is the "External id" of event i; 0 none.
	extID []int64
	// launchOf maps a correlation id to the index of its launch call.
	launchOf map[uint64]int32
	// hasGPU marks correlation ids that some GPU event carries.
	hasGPU map[uint64]bool
	// synth[i] is the correlation id given to GPU event i, launched on its
	// own thread with no launch call (the built-in loop's ops): a launch
	// call is written for it so the attribution survives (0: none).
	synth map[int32]uint64
	// stepNames: steps keep their own names (they were cut by the
	// step-like range rule, which reads the number back from the name).
	stepNames bool
	// pidMap remaps CPU pids that collide with device pids.
	pidMap  map[int32]int64
	hostPID int64 // pid for host-wide counters
	first   bool  // no event written yet
}

// plan computes External ids, the launch map and pid remapping.
func (x *exporter) plan() {
	t := x.t
	devs := map[int64]bool{}
	for _, d := range t.Devices {
		devs[int64(d.ID)] = true
	}
	x.launchOf = map[uint64]int32{}
	x.hasGPU = map[uint64]bool{}
	for i := range t.Events {
		e := &t.Events[i]
		switch {
		case e.Kind.IsGPU():
			devs[x.gpuPID(e)] = true
			if e.Corr != 0 && e.Kind != tracer.KindGPURange {
				x.hasGPU[e.Corr] = true
			}
		case e.Kind.IsLaunch() && e.Corr != 0:
			if _, dup := x.launchOf[e.Corr]; !dup {
				x.launchOf[e.Corr] = int32(i)
			}
		}
	}
	for _, c := range t.Counters {
		if c.Device >= 0 {
			devs[int64(c.Device)] = true
		}
	}
	// GPU ops launched on a known thread without a launch call get one,
	// with a correlation id no event uses.
	var maxCorr uint64
	for i := range t.Events {
		maxCorr = max(maxCorr, t.Events[i].Corr)
	}
	x.synth = map[int32]uint64{}
	for i := range t.Events {
		e := &t.Events[i]
		if !e.Kind.IsGPU() || e.Kind == tracer.KindGPURange || e.TID < 0 {
			continue
		}
		if _, ok := x.launchOf[e.Corr]; ok && e.Corr != 0 {
			continue
		}
		maxCorr++
		x.synth[int32(i)] = maxCorr
	}
	x.stepNames = t.StepRule == steps.RuleStepRanges
	x.pidMap = map[int32]int64{}
	x.hostPID = -1
	for i := range t.Events {
		e := &t.Events[i]
		if x.isGPUPlaced(e) {
			continue
		}
		if _, ok := x.pidMap[e.PID]; ok {
			continue
		}
		p := int64(e.PID)
		for devs[p] {
			p += cpuPIDOffset
		}
		x.pidMap[e.PID] = p
		if x.hostPID < 0 {
			x.hostPID = p
		}
	}
	if x.hostPID < 0 {
		x.hostPID = hostDevicePID + 1
	}

	// External ids: ops, ranges and steps get 1, 2, … in trace order; a
	// launch gets the id of the innermost one open on its thread at its
	// start; GPU work gets its launch's id.
	x.extID = make([]int64, len(t.Events))
	type tkey struct{ pid, tid int32 }
	ops := map[tkey][]int32{}
	launches := map[tkey][]int32{}
	var next int64
	for i := range t.Events {
		e := &t.Events[i]
		k := tkey{e.PID, e.TID}
		switch {
		case e.Kind == tracer.KindCPUOp || e.Kind == tracer.KindRange || e.Kind == tracer.KindStep:
			next++
			x.extID[i] = next
			ops[k] = append(ops[k], int32(i))
		case e.Kind.IsLaunch():
			launches[k] = append(launches[k], int32(i))
		}
	}
	// A synthesized launch (at the op's start on its thread) takes the
	// innermost operator or range open there, as a real launch does.
	for i := range x.synth {
		e := &t.Events[i]
		k := tkey{e.PID, e.TID}
		launches[k] = append(launches[k], i)
	}
	for k, ls := range launches {
		kops := ops[k]
		if len(kops) == 0 {
			continue
		}
		ev := t.Events
		slices.SortFunc(kops, func(a, b int32) int {
			if ev[a].Start != ev[b].Start {
				return cmp.Compare(ev[a].Start, ev[b].Start)
			}
			return cmp.Compare(ev[b].Dur, ev[a].Dur) // outer first
		})
		slices.SortFunc(ls, func(a, b int32) int { return cmp.Compare(ev[a].Start, ev[b].Start) })
		var stack []int32
		n := 0
		for _, l := range ls {
			ts := ev[l].Start
			for n < len(kops) && ev[kops[n]].Start <= ts {
				o := kops[n]
				for len(stack) > 0 && !containsOrNests(&ev[stack[len(stack)-1]], &ev[o]) {
					stack = stack[:len(stack)-1]
				}
				stack = append(stack, o)
				n++
			}
			for len(stack) > 0 && !contains(&ev[stack[len(stack)-1]], ts) {
				stack = stack[:len(stack)-1]
			}
			if len(stack) > 0 {
				x.extID[l] = x.extID[stack[len(stack)-1]]
			}
		}
	}
	for i := range t.Events {
		e := &t.Events[i]
		if e.Kind.IsGPU() && e.Corr != 0 {
			if l, ok := x.launchOf[e.Corr]; ok {
				x.extID[i] = x.extID[l]
			}
		}
	}
}

// contains reports whether interval e contains instant ts (zero-length
// intervals contain their own start), as tracer.Link decides.
func contains(e *tracer.Event, ts int64) bool {
	return (e.Start <= ts && ts < e.End()) || (e.Dur == 0 && ts == e.Start)
}

// containsOrNests reports whether outer still encloses inner's start.
func containsOrNests(outer, inner *tracer.Event) bool {
	return contains(outer, inner.Start)
}

// isGPUPlaced reports whether e is written on a device process.
func (x *exporter) isGPUPlaced(e *tracer.Event) bool {
	return e.Kind.IsGPU() || (e.Kind == tracer.KindSync && e.Device >= 0)
}

func (x *exporter) gpuPID(e *tracer.Event) int64 {
	if e.Device < 0 {
		return hostDevicePID
	}
	return int64(e.Device)
}

func (x *exporter) cpuPID(pid int32) int64 {
	if p, ok := x.pidMap[pid]; ok {
		return p
	}
	return int64(pid)
}

func (x *exporter) flushIfBig() {
	if len(x.buf) >= 64<<10 {
		x.w.Write(x.buf)
		x.buf = x.buf[:0]
	}
}

func (x *exporter) emit() {
	x.w.Write(x.buf)
	x.buf = x.buf[:0]
}

// sep writes the separator before an element of traceEvents.
func (x *exporter) sep() {
	if x.first {
		x.first = false
		x.buf = append(x.buf, '\n')
	} else {
		x.buf = append(x.buf, ",\n"...)
	}
}

func (x *exporter) writeHeader() {
	t := x.t
	b := x.buf[:0]
	b = append(b, `{"schemaVersion":1,"displayTimeUnit":"ms"`...)
	if t.Rank >= 0 || t.World > 0 {
		b = append(b, `,"distributedInfo":{`...)
		comma := false
		if be := t.Meta["distributedInfo.backend"]; be != "" {
			b = append(b, `"backend":`...)
			b = appendJSONString(b, be)
			comma = true
		}
		if t.Rank >= 0 {
			if comma {
				b = append(b, ',')
			}
			b = append(b, `"rank":`...)
			b = strconv.AppendInt(b, int64(t.Rank), 10)
			comma = true
		}
		if t.World > 0 {
			if comma {
				b = append(b, ',')
			}
			b = append(b, `"world_size":`...)
			b = strconv.AppendInt(b, int64(t.World), 10)
		}
		b = append(b, '}')
	}
	if len(t.Devices) > 0 {
		b = append(b, `,"deviceProperties":[`...)
		for i := range t.Devices {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendDeviceProps(b, &t.Devices[i])
		}
		b = append(b, ']')
	}
	if len(t.Meta) > 0 {
		b = append(b, `,"rlktopMeta":{`...)
		keys := slices.Sorted(maps.Keys(t.Meta))
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, k)
			b = append(b, ':')
			b = appendJSONString(b, t.Meta[k])
		}
		b = append(b, '}')
	}
	if t.Format != "" {
		b = append(b, `,"rlktopSourceFormat":`...)
		b = appendJSONString(b, t.Format)
	}
	b = append(b, `,"traceEvents":[`...)
	x.buf = b
	x.first = true
	x.emit()
}

func (x *exporter) writeTrailer() {
	x.buf = append(x.buf, "\n]}\n"...)
	x.emit()
}

// appendDeviceProps writes one deviceProperties entry with Kineto's keys:
// id, name, totalGlobalMem, computeMajor, computeMinor, numSms, then the
// device's other properties (Props) in key order, as JSON numbers where
// they read as integers and as strings otherwise.
func appendDeviceProps(b []byte, d *tracer.Device) []byte {
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, int64(d.ID), 10)
	b = append(b, `,"name":`...)
	b = appendJSONString(b, d.Name)
	written := map[string]bool{"id": true, "name": true}
	if d.TotalMemory > 0 {
		b = append(b, `,"totalGlobalMem":`...)
		b = strconv.AppendInt(b, d.TotalMemory, 10)
		written["totalGlobalMem"] = true
	}
	if maj, min, ok := splitComputeCap(d.ComputeCap); ok {
		b = append(b, `,"computeMajor":`...)
		b = strconv.AppendInt(b, int64(maj), 10)
		b = append(b, `,"computeMinor":`...)
		b = strconv.AppendInt(b, int64(min), 10)
		written["computeMajor"], written["computeMinor"] = true, true
	}
	if d.SMs > 0 {
		b = append(b, `,"numSms":`...)
		b = strconv.AppendInt(b, int64(d.SMs), 10)
		written["numSms"] = true
	}
	if d.Vendor != "" && d.Props["vendor"] == "" {
		b = append(b, `,"vendor":`...)
		b = appendJSONString(b, d.Vendor)
		written["vendor"] = true
	}
	if d.ComputeCap != "" && !written["computeMajor"] && d.Props["arch"] == "" {
		b = append(b, `,"arch":`...)
		b = appendJSONString(b, d.ComputeCap)
		written["arch"] = true
	}
	for _, k := range slices.Sorted(maps.Keys(d.Props)) {
		if written[k] {
			continue
		}
		v := d.Props[k]
		b = append(b, ',')
		b = appendJSONString(b, k)
		b = append(b, ':')
		if isJSONInt(v) {
			b = append(b, v...)
		} else {
			b = appendJSONString(b, v)
		}
	}
	return append(b, '}')
}

// splitComputeCap reads "8.0" as (8, 0). AMD architecture names ("gfx942")
// are not compute capabilities and give ok false.
func splitComputeCap(s string) (major, minor int, ok bool) {
	a, b, found := strings.Cut(s, ".")
	if !found {
		return 0, 0, false
	}
	ma, err1 := strconv.Atoi(a)
	mi, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || ma < 0 || mi < 0 {
		return 0, 0, false
	}
	return ma, mi, true
}

// isJSONInt reports whether s is an integer JSON number (optional '-',
// no leading zeros), short enough to be read back exactly.
func isJSONInt(s string) bool {
	d := strings.TrimPrefix(s, "-")
	if d == "" || len(d) > 18 {
		return false
	}
	if len(d) > 1 && d[0] == '0' {
		return false
	}
	for i := 0; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return false
		}
	}
	return true
}

// writeMetadataEvents writes process_name / thread_name ("M") events for
// every device, stream, CPU process and thread that appears.
func (x *exporter) writeMetadataEvents() {
	t := x.t
	devices := map[int64]bool{}
	streams := map[chromeLane]bool{} // a GPU's streams: pid = the device's
	procs := map[int64]bool{}
	threads := map[chromeLane]bool{} // a process's threads
	for _, d := range t.Devices {
		devices[int64(d.ID)] = true
	}
	for i := range t.Events {
		e := &t.Events[i]
		if x.isGPUPlaced(e) {
			p := x.gpuPID(e)
			devices[p] = true
			streams[chromeLane{p, e.Stream}] = true
		} else {
			p := x.cpuPID(e.PID)
			procs[p] = true
			threads[chromeLane{p, e.TID}] = true
		}
	}
	if !x.opts.NoCounters {
		for _, c := range t.Counters {
			if c.Device >= 0 {
				devices[int64(c.Device)] = true
			} else {
				procs[x.hostPID] = true
			}
		}
	}
	pname := x.opts.ProcessName
	if pname == "" {
		pname = t.Meta["process_name"]
	}
	if pname == "" {
		pname = "rlktop"
	}
	cpuDev := map[int64]string{}
	for _, d := range t.Devices {
		if d.Vendor == "cpu" {
			cpuDev[int64(d.ID)] = d.Name
		}
	}
	for _, p := range slices.Sorted(maps.Keys(devices)) {
		name := "GPU " + strconv.FormatInt(p, 10)
		if n, ok := cpuDev[p]; ok {
			// The built-in loop's CPU "device" (gotrace): say what it is.
			name = "device " + strconv.FormatInt(p, 10) + ": " + n
		}
		if p == hostDevicePID {
			name = "host (CPU device)"
		}
		x.meta("process_name", p, 0, "name", name)
		x.metaInt("process_sort_index", p, 0, 5000000+p%hostDevicePID)
	}
	for _, p := range slices.Sorted(maps.Keys(procs)) {
		x.meta("process_name", p, 0, "name", pname)
		x.meta("process_labels", p, 0, "labels", "CPU")
	}
	for _, s := range sortedLanes(streams) {
		x.meta("thread_name", s.pid, int64(s.id), "name", "stream "+strconv.FormatInt(int64(s.id), 10))
		x.metaInt("thread_sort_index", s.pid, int64(s.id), int64(s.id))
	}
	for _, th := range sortedLanes(threads) {
		x.meta("thread_name", th.pid, int64(th.id), "name", "thread "+strconv.FormatInt(int64(th.id), 10))
	}
}

// chromeLane is one row of the Chrome trace: a thread id within a process id,
// i.e. a GPU stream of a device's pid or a CPU thread of a process.
type chromeLane struct {
	pid int64
	id  int32 // stream or thread id
}

// sortedLanes returns the lanes of m ordered by pid, then id.
func sortedLanes(m map[chromeLane]bool) []chromeLane {
	return slices.SortedFunc(maps.Keys(m), func(a, b chromeLane) int {
		return cmp.Or(cmp.Compare(a.pid, b.pid), cmp.Compare(a.id, b.id))
	})
}

// meta writes a metadata ("M") event whose args are {key: val}, val a
// JSON string: process_name, thread_name, process_labels.
func (x *exporter) meta(name string, pid, tid int64, key, val string) {
	b := x.metaStart(name, pid, tid, key)
	b = appendJSONString(b, val)
	x.metaEnd(b)
}

// metaInt writes a metadata ("M") event whose args are {"sort_index": val}:
// process_sort_index, thread_sort_index.
func (x *exporter) metaInt(name string, pid, tid int64, val int64) {
	b := x.metaStart(name, pid, tid, "sort_index")
	b = strconv.AppendInt(b, val, 10)
	x.metaEnd(b)
}

// metaStart appends a metadata event up to its one arg's value,
// `{"name":NAME,"ph":"M","ts":0,"pid":PID,"tid":TID,"args":{"KEY":`, to
// the buffer and returns it; metaEnd closes the event. name and key are
// written as they are (rlktop's own constants, no escaping needed).
func (x *exporter) metaStart(name string, pid, tid int64, key string) []byte {
	x.sep()
	b := x.buf
	b = append(b, `{"name":"`...)
	b = append(b, name...)
	b = append(b, `","ph":"M","ts":0,"pid":`...)
	b = strconv.AppendInt(b, pid, 10)
	b = append(b, `,"tid":`...)
	b = strconv.AppendInt(b, tid, 10)
	b = append(b, `,"args":{"`...)
	b = append(b, key...)
	return append(b, `":`...)
}

// metaEnd closes the metadata event metaStart began in b and keeps b as
// the buffer, flushing it when it is big.
func (x *exporter) metaEnd(b []byte) {
	b = append(b, "}}"...)
	x.buf = b
	x.flushIfBig()
}

var kindCat = [...]string{
	tracer.KindUnknown:  "unknown",
	tracer.KindKernel:   "kernel",
	tracer.KindMemcpy:   "gpu_memcpy",
	tracer.KindMemset:   "gpu_memset",
	tracer.KindRuntime:  "cuda_runtime",
	tracer.KindDriver:   "cuda_driver",
	tracer.KindSync:     "cuda_sync",
	tracer.KindOverhead: "overhead",
	tracer.KindCPUOp:    "cpu_op",
	tracer.KindRange:    "user_annotation",
	tracer.KindGPURange: "gpu_user_annotation",
	tracer.KindStep:     "user_annotation",
	tracer.KindPython:   "python_function",
	tracer.KindInstant:  "cpu_instant_event",
}

func (x *exporter) writeEvent(i int) {
	t := x.t
	e := &t.Events[i]
	cat := "unknown"
	if int(e.Kind) < len(kindCat) {
		cat = kindCat[e.Kind]
	}
	name := t.Strings.Get(e.Name)
	origName := ""
	if e.Kind == tracer.KindStep && !x.stepNames {
		stepName := "ProfilerStep#" + strconv.FormatInt(e.Value, 10)
		if name != stepName {
			origName = name
		}
		name = stepName
	}
	corr := e.Corr
	if c, ok := x.synth[int32(i)]; ok {
		corr = c
		x.writeSynthLaunch(i, c)
	}
	var pid, tid int64
	gpu := x.isGPUPlaced(e)
	if gpu {
		pid, tid = x.gpuPID(e), int64(e.Stream)
	} else {
		pid, tid = x.cpuPID(e.PID), int64(e.TID)
	}

	x.sep()
	b := x.buf
	if e.Kind == tracer.KindInstant {
		b = append(b, `{"ph":"i","s":"t","cat":"`...)
	} else {
		b = append(b, `{"ph":"X","cat":"`...)
	}
	b = append(b, cat...)
	b = append(b, `","name":`...)
	b = appendJSONString(b, name)
	b = append(b, `,"pid":`...)
	b = strconv.AppendInt(b, pid, 10)
	b = append(b, `,"tid":`...)
	b = strconv.AppendInt(b, tid, 10)
	b = append(b, `,"ts":`...)
	b = AppendMicros(b, e.Start)
	if e.Kind != tracer.KindInstant {
		b = append(b, `,"dur":`...)
		b = AppendMicros(b, e.Dur)
	}
	b = append(b, `,"args":{`...)
	n := 0
	arg := func(k string) {
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = append(b, '"')
		b = append(b, k...)
		b = append(b, `":`...)
	}
	if id := x.extID[i]; id != 0 {
		arg("External id")
		b = strconv.AppendInt(b, id, 10)
	}
	if gpu {
		arg("device")
		b = strconv.AppendInt(b, int64(e.Device), 10)
		arg("stream")
		b = strconv.AppendInt(b, int64(e.Stream), 10)
	}
	if corr != 0 {
		arg("correlation")
		b = strconv.AppendUint(b, corr, 10)
	}
	switch e.Kind {
	case tracer.KindKernel:
		if e.Value != 0 {
			// Its modelled FLOPs and bytes (tracer.PackWork), for
			// rlktop's importer to read back.
			arg(kWorkArg)
			b = strconv.AppendInt(b, e.Value, 10)
		}
	case tracer.KindMemcpy, tracer.KindMemset:
		arg("bytes")
		b = strconv.AppendInt(b, e.Value, 10)
	case tracer.KindStep:
		arg("step")
		b = strconv.AppendInt(b, e.Value, 10)
		if origName != "" {
			arg("rlktop name")
			b = appendJSONString(b, origName)
		}
	}
	b = append(b, "}}"...)
	x.buf = b

	if _, ok := x.synth[int32(i)]; ok && !x.opts.NoFlows {
		x.flow('f', pid, tid, e.Start, corr)
	} else if !x.opts.NoFlows && e.Corr != 0 {
		switch {
		case e.Kind.IsLaunch() && x.hasGPU[e.Corr] && x.launchOf[e.Corr] == int32(i):
			x.flow('s', pid, tid, e.Start, e.Corr)
		case e.Kind.IsGPU() && e.Kind != tracer.KindGPURange:
			if _, ok := x.launchOf[e.Corr]; ok {
				x.flow('f', pid, tid, e.Start, e.Corr)
			}
		}
	}
	x.flushIfBig()
}

// writeSynthLaunch writes the launch call of GPU event i, which was
// launched on its own CPU thread at its own start with no launch call in
// the trace (the built-in loop's ops; tracer.Trace.Link's second launch
// rule): a zero-length "cuda_runtime" event named "rlktop launch" there,
// with correlation corr and the flow's start, so that a reader linking by
// correlation id (rlktop, HTA, Perfetto's arrows) finds the same launch
// point.
func (x *exporter) writeSynthLaunch(i int, corr uint64) {
	e := &x.t.Events[i]
	pid, tid := x.cpuPID(e.PID), int64(e.TID)
	x.sep()
	b := x.buf
	b = append(b, `{"ph":"X","cat":"cuda_runtime","name":"rlktop launch","pid":`...)
	b = strconv.AppendInt(b, pid, 10)
	b = append(b, `,"tid":`...)
	b = strconv.AppendInt(b, tid, 10)
	b = append(b, `,"ts":`...)
	b = AppendMicros(b, e.Start)
	b = append(b, `,"dur":0,"args":{`...)
	if id := x.extID[i]; id != 0 {
		b = append(b, `"External id":`...)
		b = strconv.AppendInt(b, id, 10)
		b = append(b, ',')
	}
	b = append(b, `"correlation":`...)
	b = strconv.AppendUint(b, corr, 10)
	b = append(b, `,"rlktop":"launched on this thread at the op's start (no launch call was traced)"}}`...)
	x.buf = b
	if !x.opts.NoFlows {
		x.flow('s', pid, tid, e.Start, corr)
	}
}

// flow writes a Kineto "ac2g" flow event.
func (x *exporter) flow(ph byte, pid, tid, ts int64, id uint64) {
	x.sep()
	b := x.buf
	b = append(b, `{"ph":"`...)
	b = append(b, ph)
	b = append(b, `","id":`...)
	b = strconv.AppendUint(b, id, 10)
	b = append(b, `,"pid":`...)
	b = strconv.AppendInt(b, pid, 10)
	b = append(b, `,"tid":`...)
	b = strconv.AppendInt(b, tid, 10)
	b = append(b, `,"ts":`...)
	b = AppendMicros(b, ts)
	b = append(b, `,"cat":"ac2g","name":"ac2g"`...)
	if ph == 'f' {
		b = append(b, `,"bp":"e"`...)
	}
	b = append(b, '}')
	x.buf = b
}

func (x *exporter) writeCounter(c *tracer.Counter) {
	if math.IsNaN(c.Value) || math.IsInf(c.Value, 0) {
		return
	}
	pid := x.hostPID
	if c.Device >= 0 {
		pid = int64(c.Device)
	}
	// A Chrome counter is a track name and a series per args key; a
	// reader names each series "name.key" (as the Kineto reader does), so
	// "metric.loss" is written as track "metric", key "loss", and reads
	// back as it was (a name without a dot gets the key "value").
	name, key := x.t.Strings.Get(c.Name), "value"
	if i := strings.LastIndexByte(name, '.'); i > 0 && i < len(name)-1 {
		name, key = name[:i], name[i+1:]
	}
	x.sep()
	b := x.buf
	b = append(b, `{"ph":"C","name":`...)
	b = appendJSONString(b, name)
	b = append(b, `,"pid":`...)
	b = strconv.AppendInt(b, pid, 10)
	b = append(b, `,"tid":0,"ts":`...)
	b = AppendMicros(b, c.TS)
	b = append(b, `,"args":{`...)
	b = appendJSONString(b, key)
	b = append(b, ':')
	if v := c.Value; v == math.Trunc(v) && math.Abs(v) < 1e15 {
		b = strconv.AppendInt(b, int64(v), 10) // 123456789, not 1.23456789e+08
	} else {
		b = strconv.AppendFloat(b, v, 'g', -1, 64)
	}
	b = append(b, "}}"...)
	x.buf = b
	x.flushIfBig()
}

// AppendMicros appends ns nanoseconds as a decimal number of microseconds
// with up to three fractional digits and no trailing zeros: 1500 →
// "1.5", 123456789 → "123456.789", -1 → "-0.001", 2000 → "2". It works
// on the integer digits, so every int64 is written exactly.
func AppendMicros(b []byte, ns int64) []byte {
	u := uint64(ns)
	if ns < 0 {
		b = append(b, '-')
		u = -u // two's complement magnitude, exact for MinInt64 too
	}
	b = strconv.AppendUint(b, u/1000, 10)
	frac := u % 1000
	if frac == 0 {
		return b
	}
	d := [3]byte{byte('0' + frac/100), byte('0' + frac/10%10), byte('0' + frac%10)}
	n := 3
	for d[n-1] == '0' {
		n--
	}
	b = append(b, '.')
	return append(b, d[:n]...)
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string. Control characters are
// escaped; invalid UTF-8 becomes U+FFFD so the output is always valid
// JSON.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
