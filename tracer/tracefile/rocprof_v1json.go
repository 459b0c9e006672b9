package tracefile

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/rlktop/rlktop/tracer"
)

// rocprof v1 (ROCm ≤ 6, rocprofiler's bin/tblextr.py and sqlitedb.py, the
// `rocprof --hip-trace` / `--hsa-trace` / `--roctx-trace` results.json):
// Chrome trace-event JSON that Kineto's categories do not describe. The
// writer's layout, as ROCm/rocprofiler bin/sqlitedb.py (dump_json,
// label_json, flow_json) and bin/dform.py (gen_*_json_trace) write it and
// as real files show it:
//
//	{ "traceEvents":[{}
//	,{"args":{"name":"GPU0"},"ph":"M","pid":6,"name":"process_name","sort_index":3}
//	,{"ph":"X","name":"hipMemcpy","pid":"2","tid":"19147","ts":"622108814230","dur":"338945",
//	  "args":{"BeginNs":"622108814230486","EndNs":"622109153176175","pid":"19147","tid":"19147",
//	          "Name":"hipMemcpy","args":"( dst(0x7fc7d5600000) …)","Data":"","DurationNs":"338945689"}}
//	,{"ts":622109243928,"ph":"s","cat":"DataFlow","id":5,"pid":2,"tid":19147,"name":"dep"}
//	,{"ts":622109244416,"ph":"t","cat":"DataFlow","id":5,"pid":10,"tid":1,"name":"dep"}
//	], "otherData": {… rocminfo …} }
//
// Complete events carry no "cat"; "pid" is a section of the trace, named by
// process_name metadata: "Markers and Ranges" (pid 0), "COPY" (1), "CPU HIP
// API" (2), "CPU HSA API" (3), "GPU<N>" (6+N), "GPU Barriers<N>" (518+N);
// pid/tid/ts/dur may be strings. ts is µs truncated to an integer and, in
// some versions, relative to the first record, so the reader takes time
// from args.BeginNs / EndNs (absolute ns; DurationNs when EndNs is absent)
// and falls back to ts/dur (µs) with a warning.
//
// Mapping:
//
//   - GPU<N> → KindKernel named by the event name (args.KernelName for the
//     --timestamp kernel table), Device = args "gpu-id" / "dev-id", else N;
//     Stream = args "stream-id", else "queue-id", else the event's tid.
//     Events named "Unknown command type" or "<barrier packet>" (the HIP
//     runtime's marker and barrier packets, 0 ns in the real files) and the
//     "GPU Barriers<N>" sections are skipped and counted in
//     Meta["skipped_events"];
//   - COPY → KindMemset when the name holds "Fill" (FillBuffer, hipMemset),
//     else KindMemcpy; bytes are not in the file (Value 0);
//   - CPU HIP API, CPU HSA API → KindRuntime on the calling thread;
//   - Markers and Ranges → KindRange; a roctx mark, which the writer stores
//     as EndNs = BeginNs + 1 (tblextr.py fill_ext_db), → KindInstant;
//     "ProfilerStep#N" → KindStep;
//   - any other section → KindUnknown on its thread.
//
// Correlation: the file keeps no correlation id, only a DataFlow flow per
// launch: "s" on the calling thread at a time inside the API call, "t" on
// the GPU section and lane at the op's own ts. Each flow whose ends match
// one op (same section, lane and ts) and a call containing "s" (the
// innermost) gives both the correlation id flow id + 1; several ops of one
// call share the call's id.
//
// PID: the OS pid, from args "proc-id" or an args "pid" that is not the
// section; when a file names one OS pid, events that carry none get it.
//
// Events are decoded with encoding/json one at a time and built as they
// come (about 40 MB/s of CPU on a 117 MB file, 130 MB resident).
func init() {
	f := Format{Name: "rocprof-v1-json", Sniff: sniffRocprofV1JSON, Read: readRocprofV1JSON}
	// A Chrome trace: it must be tried before the kineto importer, whose
	// sniffer accepts any "traceEvents" object. Files register in name
	// order, so kineto.go is already registered here.
	if i := slices.IndexFunc(formats, func(f Format) bool { return f.Name == "kineto" }); i >= 0 {
		formats = slices.Insert(formats, i, f)
		return
	}
	Register(f)
}

// sniffRocprofV1JSON accepts a "traceEvents" object whose start holds
// rocprof's nanosecond args ("BeginNs") or its section labels.
func sniffRocprofV1JSON(head []byte) bool {
	head = bytes.TrimLeft(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")), " \t\r\n")
	if len(head) == 0 || head[0] != '{' || !bytes.Contains(head, []byte(`"traceEvents"`)) {
		return false
	}
	return bytes.Contains(head, []byte(`"BeginNs"`)) ||
		bytes.Contains(head, []byte(`"name":"process_name","sort_index"`)) && bytes.Contains(head, []byte(`"CPU HIP API"`))
}

// v1Text is a JSON string or number kept as its text.
type v1Text string

func (v *v1Text) UnmarshalJSON(b []byte) error {
	if len(b) >= 2 && b[0] == '"' && bytes.IndexByte(b, '\\') < 0 {
		*v = v1Text(b[1 : len(b)-1])
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*v = v1Text(s)
		return nil
	}
	if bytes.Equal(b, []byte("null")) {
		*v = ""
		return nil
	}
	*v = v1Text(b)
	return nil
}

func (v v1Text) int() (int64, bool) {
	n, err := strconv.ParseInt(strings.TrimSpace(string(v)), 10, 64)
	return n, err == nil
}

// v1Args are the args rlktop reads; decoding into a struct (not a map)
// keeps the importer at tens of MB/s.
type v1Args struct {
	Label      v1Text `json:"name"` // process_name metadata
	Name       v1Text `json:"Name"`
	KernelName v1Text `json:"KernelName"`
	BeginNs    v1Text `json:"BeginNs"`
	EndNs      v1Text `json:"EndNs"`
	DurationNs v1Text `json:"DurationNs"`
	GPUID      v1Text `json:"gpu-id"`
	DevID      v1Text `json:"dev-id"`
	StreamID   v1Text `json:"stream-id"`
	QueueID    v1Text `json:"queue-id"`
	PID        v1Text `json:"pid"`
	ProcID     v1Text `json:"proc-id"`
}

type v1Event struct {
	Ph   string  `json:"ph"`
	Name string  `json:"name"`
	PID  v1Text  `json:"pid"`
	TID  v1Text  `json:"tid"`
	TS   v1Text  `json:"ts"`
	Dur  v1Text  `json:"dur"`
	ID   v1Text  `json:"id"`
	Args *v1Args `json:"args"`
}

// v1Rec is what flow matching needs of a kept event: its section, lane and
// ts/dur as written (ns from µs).
type v1Rec struct {
	pid, tid int64
	ts, dur  int64
	ev       int // index in Trace.Events
}

type v1Flow struct {
	pid, tid, ts int64
	ok           bool
}

func readRocprofV1JSON(r io.Reader, path string, _ Options) (*tracer.Trace, error) {
	dec := json.NewDecoder(r)
	t := tracer.NewTrace("rocprof-v1-json", path)
	bad := func(err error, msg string) error {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return &Error{Path: path, Offset: dec.InputOffset(), Msg: "JSON ends early", Err: err, Hint: "the file is truncated; rerun rocprof or use its results.csv"}
		}
		return &Error{Path: path, Offset: dec.InputOffset(), Msg: msg, Err: err, Hint: "not the rocprof v1 results.json layout rlktop knows"}
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, bad(err, "expected a JSON object")
	}
	b := newV1Builder(t)
	n := 0
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, bad(err, "cannot read a key")
		}
		key, _ := tok.(string)
		if key != "traceEvents" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, bad(err, fmt.Sprintf("cannot read %q", key))
			}
			continue
		}
		if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
			return nil, bad(err, `"traceEvents" is not an array`)
		}
		for dec.More() {
			var e v1Event
			if err := dec.Decode(&e); err != nil {
				var te *json.UnmarshalTypeError
				if errors.As(err, &te) {
					return nil, &Error{Path: path, Offset: te.Offset, Field: te.Field, Msg: fmt.Sprintf("expected %s, found JSON %s", te.Type, te.Value),
						Hint: "not the rocprof v1 results.json layout rlktop knows"}
				}
				return nil, bad(err, fmt.Sprintf("malformed event %d", n))
			}
			n++
			b.add(&e)
		}
		if _, err := dec.Token(); err != nil {
			return nil, bad(err, `"traceEvents" is not closed`)
		}
	}
	b.finish()
	return t, nil
}

// The writer's fixed sections (tblextr.py EXT_PID … GPU_BASE_PID), used
// when a file lacks its process_name labels (the writer puts them first).
const (
	v1ExtPID     = 0
	v1CopyPID    = 1
	v1HIPPID     = 2
	v1HSAPID     = 3
	v1GPUBasePID = 6
	v1BarrierOff = 512
)

func v1Section(labels map[int64]string, pid int64) (kind tracer.Kind, gpu int64, skip bool) {
	l, ok := labels[pid]
	switch {
	case ok && strings.HasPrefix(l, "GPU Barriers"), !ok && pid >= v1GPUBasePID+v1BarrierOff:
		return tracer.KindKernel, 0, true
	case ok && strings.HasPrefix(l, "GPU"):
		n, err := strconv.ParseInt(strings.TrimPrefix(l, "GPU"), 10, 32)
		if err != nil {
			n = pid - v1GPUBasePID
		}
		return tracer.KindKernel, n, false
	case ok && l == "COPY", !ok && pid == v1CopyPID:
		return tracer.KindMemcpy, -1, false
	case ok && (l == "CPU HIP API" || l == "CPU HSA API"), !ok && (pid == v1HIPPID || pid == v1HSAPID):
		return tracer.KindRuntime, -1, false
	case ok && l == "Markers and Ranges", !ok && pid == v1ExtPID:
		return tracer.KindRange, -1, false
	case !ok && pid >= v1GPUBasePID:
		return tracer.KindKernel, pid - v1GPUBasePID, false
	}
	return tracer.KindUnknown, -1, false
}

// v1Builder turns events into the trace as they are decoded.
type v1Builder struct {
	t            *tracer.Trace
	labels       map[int64]string
	osPIDs       map[int64]bool
	noPID        []int // events whose OS pid the file did not give
	skipped      map[string]int
	bySection    map[string]int
	recs         []v1Rec
	flowS, flowT map[int64]v1Flow
	relative     int
}

func newV1Builder(t *tracer.Trace) *v1Builder {
	return &v1Builder{t: t, labels: map[int64]string{}, osPIDs: map[int64]bool{}, skipped: map[string]int{}, bySection: map[string]int{},
		flowS: map[int64]v1Flow{}, flowT: map[int64]v1Flow{}}
}

func (b *v1Builder) add(e *v1Event) {
	t := b.t
	var a v1Args
	if e.Args != nil {
		a = *e.Args
	}
	switch e.Ph {
	case "X":
	case "M":
		if e.Name == "process_name" {
			if p, ok := e.PID.int(); ok {
				b.labels[p] = string(a.Label)
			}
		}
		return
	case "s", "t", "f":
		id, ok1 := e.ID.int()
		p, ok2 := e.PID.int()
		tid, ok3 := e.TID.int()
		ts, err := parseMicrosNs([]byte(e.TS))
		f := v1Flow{pid: p, tid: tid, ts: ts, ok: ok1 && ok2 && ok3 && err == nil}
		if e.Ph == "s" {
			b.flowS[id] = f
		} else {
			b.flowT[id] = f
		}
		return
	case "":
		if e.Name == "" && e.Args == nil {
			return // the writer's leading {}
		}
		fallthrough
	default:
		b.skipped[cmp.Or(e.Ph, "no phase")]++
		return
	}
	section, ok := e.PID.int()
	if !ok {
		b.skipped["X with a non-numeric pid"]++
		return
	}
	kind, gpu, skip := v1Section(b.labels, section)
	label := b.labels[section]
	if label == "" {
		label = "pid " + strconv.FormatInt(section, 10)
	}
	b.bySection[label]++
	if skip {
		b.skipped[label]++
		return
	}
	name := e.Name
	if kind == tracer.KindKernel {
		if a.KernelName != "" {
			name = string(a.KernelName)
		}
		if name == "Unknown command type" || name == "<barrier packet>" {
			b.skipped[name]++
			return
		}
	}
	if name == "" {
		name = string(a.Name)
	}
	lane, _ := e.TID.int()
	tsNs, errTs := parseMicrosNs([]byte(e.TS))
	durNs, errDur := parseMicrosNs([]byte(e.Dur))
	var start, dur int64
	bg, okB := a.BeginNs.int()
	en, okE := a.EndNs.int()
	dn, okD := a.DurationNs.int()
	switch {
	case okB && okE:
		start = bg
		var okc bool
		if dur, okc = clampDur(bg, en); !okc {
			t.Warn(fmt.Sprintf("%s: %s %q at %d ns %s; duration set to 0", t.Path, kind, name, bg, durWhy(bg, en)))
		}
	case okB && okD && dn >= 0:
		start, dur = bg, dn
	case errTs == nil:
		start, dur = tsNs, max(durNs, 0)
		b.relative++
	default:
		b.skipped["X without BeginNs or ts"]++
		return
	}
	ev := tracer.Event{Kind: kind, Start: start, Dur: dur, Name: t.Strings.Intern(name), TID: int32Of(lane), Device: -1}
	// The OS pid: args proc-id, or an args pid that is not the section.
	if p, ok := a.ProcID.int(); ok {
		ev.PID = int32Of(p)
		b.osPIDs[p] = true
	} else if p, ok := a.PID.int(); ok && p != section {
		ev.PID = int32Of(p)
		b.osPIDs[p] = true
	} else {
		ev.PID = int32Of(section)
		b.noPID = append(b.noPID, len(t.Events))
	}
	switch kind {
	case tracer.KindKernel, tracer.KindMemcpy:
		if kind == tracer.KindMemcpy && strings.Contains(name, "Fill") {
			ev.Kind = tracer.KindMemset
		}
		ev.TID = -1
		d := gpu
		if v, ok := a.GPUID.int(); ok {
			d = v
		} else if v, ok := a.DevID.int(); ok {
			d = v
		}
		ev.Device = int32Of(d)
		ev.Stream = int32Of(lane)
		if v, ok := a.StreamID.int(); ok {
			ev.Stream = int32Of(v)
		} else if v, ok := a.QueueID.int(); ok {
			ev.Stream = int32Of(v)
		}
	case tracer.KindRange:
		if okB && okE && en == bg+1 {
			ev.Kind, ev.Dur = tracer.KindInstant, 0
		}
		asStep(&ev, name)
	}
	if errTs == nil && errDur == nil {
		b.recs = append(b.recs, v1Rec{pid: section, tid: lane, ts: tsNs, dur: durNs, ev: len(t.Events)})
	}
	t.Events = append(t.Events, ev)
}

func (b *v1Builder) finish() {
	t := b.t
	if len(b.osPIDs) == 1 {
		for p := range b.osPIDs {
			for _, i := range b.noPID {
				t.Events[i].PID = int32Of(p)
			}
		}
	}
	v1Link(t, b.recs, b.flowS, b.flowT)
	if b.relative > 0 {
		t.Warn(fmt.Sprintf("%s: %d events have no args.BeginNs; their time is ts (µs, possibly since the first record), not comparable with the others' ns", t.Path, b.relative))
	}
	if len(b.skipped) > 0 {
		var parts []string
		for k, n := range b.skipped {
			parts = append(parts, fmt.Sprintf("%s:%d", k, n))
		}
		slices.Sort(parts)
		t.Meta["skipped_events"] = strings.Join(parts, " ")
	}
	if !hasGPUWork(t) {
		var parts []string
		for k, n := range b.bySection {
			parts = append(parts, fmt.Sprintf("%s %d", k, n))
		}
		slices.Sort(parts)
		found := "no complete events"
		if len(parts) > 0 {
			found = "complete events by section: " + strings.Join(parts, ", ")
		}
		if s := t.Meta["skipped_events"]; s != "" {
			found += "; skipped: " + s
		}
		warnNoGPU(t, found)
	}
}

// v1Link gives each launch call and the GPU op its DataFlow flow joins the
// same correlation id (flow id + 1).
func v1Link(t *tracer.Trace, recs []v1Rec, flowS, flowT map[int64]v1Flow) {
	type key struct{ pid, tid, ts int64 }
	ops := map[key][]int{}
	calls := map[[2]int64][]int{} // (section, tid) → indexes into recs, calls only
	for i, r := range recs {
		e := &t.Events[r.ev]
		switch {
		case e.Kind.IsGPU():
			k := key{r.pid, r.tid, r.ts}
			ops[k] = append(ops[k], i)
		case e.Kind == tracer.KindRuntime:
			calls[[2]int64{r.pid, r.tid}] = append(calls[[2]int64{r.pid, r.tid}], i)
		}
	}
	ids := make([]int64, 0, len(flowS))
	for id := range flowS {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		s, tt := flowS[id], flowT[id]
		if !s.ok || !tt.ok || id < 0 {
			continue
		}
		op := ops[key{tt.pid, tt.tid, tt.ts}]
		if len(op) != 1 {
			continue
		}
		// The innermost call on the flow's thread that contains its start.
		best := -1
		for _, ci := range calls[[2]int64{s.pid, s.tid}] {
			c := recs[ci]
			if c.ts <= s.ts && s.ts <= c.ts+c.dur && (best < 0 || c.ts > recs[best].ts || c.ts == recs[best].ts && c.dur < recs[best].dur) {
				best = ci
			}
		}
		if best < 0 {
			continue
		}
		call := &t.Events[recs[best].ev]
		if call.Corr == 0 {
			call.Corr = uint64(id) + 1
		}
		t.Events[recs[op[0]].ev].Corr = call.Corr
	}
}
