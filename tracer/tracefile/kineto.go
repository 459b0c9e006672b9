package tracefile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"github.com/rlktop/rlktop/internal/units"
	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/opmodel"
)

func init() {
	Register(Format{Name: "kineto", Sniff: sniffKineto, Read: ReadKineto})
}

// sniffKineto accepts a JSON array start, or an object whose first 64 KiB
// name one of the keys Kineto / Chrome traces carry.
func sniffKineto(head []byte) bool {
	head = bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))
	head = bytes.TrimLeft(head, " \t\r\n")
	if len(head) == 0 {
		return false
	}
	switch head[0] {
	case '[':
		return true
	case '{':
		return bytes.Contains(head, []byte(`"traceEvents"`)) ||
			bytes.Contains(head, []byte(`"deviceProperties"`)) ||
			bytes.Contains(head, []byte(`"distributedInfo"`))
	}
	return false
}

// ReadKineto parses Kineto / Chrome trace-event JSON from r (uncompressed)
// into a trace; path is used in messages only (tracefile.Read cuts the
// steps and links it). Open and Read reach it
// through the "kineto" format.
//
// It reads the JSON Object Format ({"traceEvents": [...],
// "deviceProperties": [...], "distributedInfo": {...}, ...} with keys in any
// order; other scalar keys go to Trace.Meta) and the JSON Array Format
// ([{...}, ...], whose closing "]" may be missing and whose last event may
// be followed by a comma, as the trace-event format allows).
//
// Decisions, each deliberate:
//
//   - ts/dur are decimal microseconds parsed exactly to int64 ns
//     (parseMicrosNs): integer, fraction and exponent forms, as JSON numbers
//     or strings ("123.5"); digits below 1 ns are rounded half to even.
//     displayTimeUnit is a display hint and changes nothing.
//
//   - Phases: X kept (a missing dur counts as 0 and is warned about once);
//     B/E matched last-in-first-out per (pid, tid): an E closes the most
//     recent open B on its thread whatever its name (as Chrome's trace viewer
//     does), with a warning when a non-empty E name differs from the B name;
//     an E with no open B, an E earlier than its B, and a B never closed are
//     skipped with a warning giving the byte offset. i/I/n instants are kept
//     as KindInstant (Dur 0). C counters become tracer.Counters, one per
//     numeric arg, named "<event name>.<arg name>", Device -1. M metadata
//     (process_labels "GPU N") maps pids to devices for GPU events without
//     args.device. Flow events (s/f/t, Kineto's "ac2g" included — the
//     correlation args already link launches to GPU work) and all other
//     phases (P samples, b/e async, O objects, …) are skipped and counted
//     in Trace.Meta["skipped_events"].
//
//   - Categories, matched case-insensitively: kernel → KindKernel;
//     gpu_memcpy, memcpy → KindMemcpy and gpu_memset, memset → KindMemset
//     (Value = args.bytes); cuda_runtime, runtime → KindRuntime;
//     cuda_driver, driver → KindDriver; cpu_op, operator → KindCPUOp;
//     user_annotation → KindRange, or KindStep with Value N for names
//     "ProfilerStep#N" (tracefile.Read then applies the step rule of
//     steps.ApplyTrace); gpu_user_annotation → KindGPURange; python_function
//     → KindPython, except nn.Module events ("nn.Module: Linear_3", from
//     with_modules=True) → KindRange "nn.Module: Linear", so modules are
//     stages; cuda_sync → KindSync; overhead → KindOverhead. Events of
//     any other category are kept as KindUnknown on their CPU thread.
//
//   - GPU events (kernel, memcpy, memset, gpu_user_annotation): Device is
//     args.device, else the numeric pid; Stream is args.stream, else the tid;
//     TID is -1 (tracer.Trace.Link finds the launching thread through the
//     correlation id).
//
//   - Correlation: args.correlation; for GPU and launch events without it,
//     args["correlation id"], then args["External id"] / ["external id"].
//
//   - pid/tid: integers in int32 range are kept; strings holding such an
//     integer ("7") are parsed; anything else ("stream 7", "Spans", "",
//     3239786240) gets a stable id per trace counting down from -2, in order
//     of first appearance.
//
//   - Names are interned once (Trace.Strings); escapes are decoded only when
//     a backslash is present.
//
//   - JSON: NaN, Infinity and -Infinity are accepted as numbers (Python's
//     json writes them); inside values the importer skips (unknown keys'
//     objects and arrays) only brackets and strings are checked.
//
//   - Memory: events go into one array sized from opts.FileSize (or into
//     chunks joined once); about 64 bytes per kept event, no per-event
//     strings. The JSON is read through a 64 KiB–4 MiB window, never whole.
//
// Errors are *Error with the byte offset (in the uncompressed stream), the
// field and a hint. When some events were read before the error, the
// partial trace is returned together with the error, so callers can
// keep it.
func ReadKineto(r io.Reader, path string, opts Options) (*tracer.Trace, error) {
	d := &kdec{
		s:          newScan(r),
		path:       path,
		t:          tracer.NewTrace("kineto", path),
		stacks:     map[[2]int32][]openB{},
		idNames:    map[string]int32{},
		skipped:    map[byte]int{},
		kGpuLabel:  map[int32]int32{},
		stream:     opts.stream,
		late:       opts.late,
		parWorkers: parWorkers(opts),
		parChunk:   opts.chunk,
		noShapes:   opts.NoShapes,
		model:      opts.OpModel,
		names:      newNameBudget(),
	}
	d.ev = &d.evOwn
	if d.model == nil {
		d.model = opmodel.Default()
	}
	if d.stream != nil {
		d.stream.start(d, opts)
	} else {
		d.maxEvents, d.maxWhy = kinetoBudget()
		if n := kEstimateEvents(opts, d.maxEvents); n > 4096 {
			// One array, sized from the file: pages past the real count
			// are never touched, so they cost address space, not memory.
			d.cur = make([]tracer.Event, 0, n)
		}
	}
	err := d.run()
	t := d.finish()
	if err != nil {
		if len(t.Events) == 0 && len(t.Counters) == 0 {
			return nil, err
		}
		return t, err
	}
	return t, nil
}

type openB struct {
	ev      tracer.Event
	name    []byte
	off     int64
	fromPid bool
}

// kspan is a raw string or number in the window (absolute offsets).
type kspan struct {
	a, b int64
	esc  bool
	kind byte // kvString, kvNumber, 0 = absent
}

type kNumArg struct{ key, val kspan }

// kev is the reused per-event record of the fields the importer needs.
type kev struct {
	ph                      byte
	hasTs, hasDur           bool
	ts, dur                 int64
	tsOff, durOff           int64
	name, cat, pid, tid     kspan
	argName, argLabels      kspan
	corr, corrAlt, extID    uint64
	hasCorr, hasAlt, hasExt bool
	bytesV, stream, device  int64
	hasBytes, hasStream     bool
	hasDevice               bool
	nums                    []kNumArg
	shapes                  kShapeArgs // record_shapes args of a cpu_op (kineto_shapes.go)
	work                    int64      // a kernel's packed work, as rlktop's export writes it
	hasWork                 bool
	mem                     kMemArgs // a [memory] instant's args (kineto_memory.go)
	bad                     error    // first bad ts/dur value: the event is skipped
}

type kdec struct {
	s     *jscan
	path  string
	t     *tracer.Trace
	ev    *kev // the event being parsed and recorded: evOwn, or a parsed chunk's (kineto_parallel.go)
	evOwn kev

	arrayForm bool
	nEvents   int

	stacks   map[[2]int32][]openB
	idNames  map[string]int32
	nextID   int32
	skipped  map[byte]int
	noDur    int
	badN     int // events skipped for a bad value (kBadShown of them warned one by one)
	zeroTs   int // GPU events at ts 0 (kept, warned)
	zeroDur  int // kernels of dur 0 (kept, warned)
	scratch  []byte
	scratch2 []byte
	brackets []byte // reused bracket stack for skipping
	chunks   [][]tracer.Event
	cur      []tracer.Event
	nOut     int    // events added
	field    string // field being parsed, for truncation errors
	noShapes bool   // Options.NoShapes
	model    *opmodel.Model

	kGpuLabel map[int32]int32 // pid → device from process_labels "GPU N"
	needDev   []int32         // GPU events whose device came from the pid
	stream    *kstream        // non-nil: events go window by window to the stream (kineto_stream.go)
	late      *kLate          // non-nil: Read checks the nesting later (finishLate)
	// maxEvents bounds the events a whole read keeps (kinetoBudget; 0:
	// none); past it over stops the reading, the events before kept.
	maxEvents int
	maxWhy    string
	names     nameBudget // bounds the bytes of distinct names, streamed or not
	over      *Error
	sawEvents bool

	memSkipped int // [memory] instants without bytes, address or device (kineto_memory.go)
	parWorkers int // event arrays are parsed by this many goroutines when > 1 (kineto_parallel.go)
	parChunk   int // chunk size, bytes (0: kParChunk)
}

// kBadShown is how many skipped events get a warning each; the rest are
// counted in one.
const kBadShown = 10

// skipBad counts an event skipped for a bad value (missing ts, a ts or dur
// that is not a number, NaN, a negative dur) and warns with its position:
// one bad value costs that event only.
func (d *kdec) skipBad(msg string) {
	d.badN++
	if d.badN <= kBadShown {
		d.t.Warn(msg + "; event skipped")
	}
}

func (d *kdec) errAt(off int64, field, msg, hint string, err error) *Error {
	return &Error{Path: d.path, Offset: off, Field: field, Msg: msg, Hint: hint, Err: err}
}

// wrap turns a scanner error into a positioned *Error.
func (d *kdec) wrap(err error, field, context string) error {
	switch e := err.(type) {
	case *Error:
		return e
	case *kErrEOF:
		if e.rerr == io.ErrUnexpectedEOF {
			return d.errAt(e.off, field, "the compressed data stops inside "+context,
				"the .gz file is truncated (check it with `gzip -t`); events before this point were kept", e.rerr)
		}
		if e.rerr != nil {
			hint := "the file is damaged or truncated; for .gz check it with `gzip -t`"
			if e.rerr == kErrTooLarge {
				hint = "one event is unreasonably large; the file is probably not a trace"
			}
			return d.errAt(e.off, field, "cannot read "+context, hint, e.rerr)
		}
		return d.errAt(e.off, field, "the file ends inside "+e.what+" ("+context+")",
			"the trace is truncated (the profiler may have been killed while writing); events before this point were kept", nil)
	case *kErrJSON:
		return d.errAt(e.off, field, "malformed JSON in "+context+": "+e.Error(), "the file is not valid trace-event JSON", nil)
	}
	return d.errAt(d.s.off(), field, context, "", err)
}

func (d *kdec) run() error {
	s := d.s
	c, ok := s.ws()
	if !ok {
		if s.rerr != nil {
			return d.wrap(s.eofErr("the file"), "", "the start of the file")
		}
		return d.errAt(0, "", "file is empty", "expected Kineto / Chrome trace-event JSON", nil)
	}
	if c == 0xef { // UTF-8 byte order mark
		if !s.bom() {
			return d.wrap(&kErrJSON{off: s.off(), expected: "a JSON value", found: kQuoteByte(c)}, "", "the start of the file")
		}
		c, ok = s.ws()
		if !ok {
			return d.errAt(s.off(), "", "file holds only a byte order mark", "", nil)
		}
	}
	var err error
	switch c {
	case '[':
		d.arrayForm = true
		err = d.events()
	case '{':
		err = d.object()
	default:
		return d.errAt(s.off(), "", "expected '{' or '[' at the start of a trace-event JSON file, found "+kQuoteByte(c),
			"the file is not Kineto / Chrome trace-event JSON", nil)
	}
	if err == nil {
		// Data after the JSON (two files concatenated, a cut rewrite) is
		// ignored, and said.
		if c, ok := s.ws(); ok {
			d.t.Warn(fmt.Sprintf("%s (byte %d): data after the end of the JSON (starting %s) ignored", d.path, s.off(), kQuoteByte(c)))
		}
	}
	return err
}

// object walks the top-level object.
func (d *kdec) object() error {
	s := d.s
	s.pos++ // '{'
	sawTrace := false
	for first := true; ; first = false {
		c, ok := s.ws()
		if !ok {
			return d.topEOF(sawTrace)
		}
		if c == '}' {
			s.pos++
			break
		}
		if !first {
			if c != ',' {
				return d.errAt(s.off(), "", "expected ',' or '}' between top-level keys, found "+kQuoteByte(c), "the file is not valid JSON", nil)
			}
			s.pos++
			if c, ok = s.ws(); !ok {
				return d.topEOF(sawTrace)
			}
		}
		if c != '"' {
			return d.errAt(s.off(), "", "expected a key string in the top-level object, found "+kQuoteByte(c), "the file is not valid JSON", nil)
		}
		_, ka, kb, kesc, err := s.value() // a string: c is '"'
		if err != nil {
			return d.wrap(err, "", "a top-level key")
		}
		key := string(s.bytes(ka, kb))
		if kesc {
			b, _ := kUnescape(nil, []byte(key))
			key = string(b)
		}
		if c, ok = s.ws(); !ok {
			return d.topEOF(sawTrace)
		}
		if c != ':' {
			return d.errAt(s.off(), key, "expected ':' after the key, found "+kQuoteByte(c), "the file is not valid JSON", nil)
		}
		s.pos++
		if c, ok = s.ws(); !ok {
			return d.topEOF(sawTrace)
		}
		switch key {
		case "traceEvents":
			if c != '[' {
				return d.errAt(s.off(), key, "expected an array of events, found "+kQuoteByte(c), "", nil)
			}
			sawTrace = true
			if err := d.events(); err != nil {
				return err
			}
		case "deviceProperties", "distributedInfo", "rlktopMeta":
			if err := d.headerValue(key); err != nil {
				return err
			}
		default:
			kind, a, b, esc, err := s.valueKept()
			if err != nil {
				return d.wrap(err, key, "a top-level value")
			}
			if key == "displayTimeUnit" {
				continue // a display hint only: ts/dur are always µs
			}
			switch kind {
			case kvString:
				v := s.bytes(a, b)
				if esc {
					v, _ = kUnescape(nil, v)
				}
				d.t.Meta[key] = string(v)
			case kvNumber, kvTrue, kvFalse:
				d.t.Meta[key] = string(s.bytes(a, b))
			}
			s.keep = -1
		}
	}
	if !sawTrace {
		return d.errAt(0, "traceEvents", "the JSON object has no \"traceEvents\" array, so it is not a trace",
			"expected Kineto / Chrome trace-event JSON (an object with traceEvents, or an array of events)", nil)
	}
	return nil
}

func (d *kdec) topEOF(sawTrace bool) error {
	s := d.s
	if s.rerr != nil {
		return d.wrap(s.eofErr("the top-level object"), "", "the top-level object")
	}
	if sawTrace {
		d.t.Warn(fmt.Sprintf("%s: the top-level object is not closed at byte %d; the events were read completely", d.path, s.off()))
		return nil
	}
	return d.errAt(s.off(), "traceEvents", "the file ends before a \"traceEvents\" array was read",
		"the file is truncated or not a trace", nil)
}

// valueKept is value() that keeps the span readable until keep is reset.
func (s *jscan) valueKept() (kind byte, a, b int64, esc bool, err error) {
	if _, ok := s.ws(); ok {
		s.keep = s.pos
	}
	return s.value()
}

// headerValue decodes deviceProperties / distributedInfo / rlktopMeta,
// which are small, with encoding/json. rlktopMeta is the Trace.Meta
// rlktop's export writes (a recording's run record: its flags, the peak
// it was measured against, the memory summary), read back into Meta so
// that a report of the export equals the report of what was exported.
func (d *kdec) headerValue(key string) error {
	s := d.s
	_, a, b, _, err := s.valueKept()
	defer func() { s.keep = -1 }()
	if err != nil {
		return d.wrap(err, key, "the "+key+" value")
	}
	raw := s.bytes(a, b)
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	switch key {
	case "deviceProperties":
		var props []map[string]any
		if err := dec.Decode(&props); err != nil {
			d.t.Warn(fmt.Sprintf("%s (byte %d): deviceProperties is not an array of objects; ignored: %v", d.path, a, err))
			return nil
		}
		for _, p := range props {
			d.t.Devices = append(d.t.Devices, kDeviceFromProps(p))
		}
		// How many GPUs the profiler saw (0: a CPU-only run, nogpu.go).
		d.t.Meta["deviceProperties.count"] = strconv.Itoa(len(props))
	case "distributedInfo":
		var info map[string]any
		if err := dec.Decode(&info); err != nil {
			d.t.Warn(fmt.Sprintf("%s (byte %d): distributedInfo is not an object; ignored: %v", d.path, a, err))
			return nil
		}
		if v, ok := kJsonInt(info["rank"]); ok {
			d.t.Rank = int(v)
		}
		if v, ok := kJsonInt(info["world_size"]); ok {
			d.t.World = int(v)
		}
		for _, k := range []string{"backend", "nccl_version"} {
			if v, ok := info[k].(string); ok {
				d.t.Meta["distributedInfo."+k] = v
			}
		}
	case "rlktopMeta":
		var meta map[string]string
		if err := dec.Decode(&meta); err != nil {
			d.t.Warn(fmt.Sprintf("%s (byte %d): rlktopMeta is not an object of strings; ignored: %v", d.path, a, err))
			return nil
		}
		for k, v := range meta {
			if _, set := d.t.Meta[k]; !set { // the file's own keys first
				d.t.Meta[k] = v
			}
		}
	}
	return nil
}

func kJsonInt(v any) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := n.Int64()
	return i, err == nil
}

func kDeviceFromProps(p map[string]any) tracer.Device {
	dev := tracer.Device{ID: -1, Props: map[string]string{}}
	for k, v := range p {
		switch x := v.(type) {
		case string:
			dev.Props[k] = x
		case json.Number:
			dev.Props[k] = x.String()
		case bool:
			dev.Props[k] = strconv.FormatBool(x)
		default:
			b, _ := json.Marshal(x)
			dev.Props[k] = string(b)
		}
	}
	if v, ok := kJsonInt(p["id"]); ok {
		dev.ID = int32(v)
	}
	dev.Name, _ = p["name"].(string)
	if v, ok := kJsonInt(p["totalGlobalMem"]); ok {
		dev.TotalMemory = v
	}
	if v, ok := kJsonInt(p["numSms"]); ok {
		dev.SMs = int(v)
	}
	maj, okMaj := kJsonInt(p["computeMajor"])
	min, okMin := kJsonInt(p["computeMinor"])
	if okMaj && okMin {
		dev.ComputeCap = fmt.Sprintf("%d.%d", maj, min)
	}
	lname := strings.ToLower(dev.Name)
	switch {
	case strings.Contains(lname, "amd") || strings.Contains(lname, "instinct") || strings.Contains(lname, "radeon"):
		dev.Vendor = "amd"
	case dev.Name != "":
		dev.Vendor = "nvidia"
	}
	return dev
}

// events reads the event array whose '[' is at pos, in parallel when the
// input is large (kineto_parallel.go).
func (d *kdec) events() error {
	d.s.pos++ // '['
	if d.parWorkers > 1 {
		return d.eventsParallel(d.parWorkers)
	}
	return d.eventsFrom(0, false)
}

// eventsFrom reads the event array from pos on, idx events of it read;
// sepDue says whether a ',' (or the ']') is due first.
func (d *kdec) eventsFrom(idx int, sepDue bool) error {
	s := d.s
	for ; ; idx, sepDue = idx+1, true {
		c, ok := s.ws()
		if !ok {
			return d.arrayEOF()
		}
		if c == ']' {
			s.pos++
			return nil
		}
		if sepDue {
			if c != ',' {
				return d.errAt(s.off(), "", fmt.Sprintf("expected ',' or ']' after event %d, found %s", idx-1, kQuoteByte(c)),
					"the file is not valid JSON", nil)
			}
			s.pos++
			if c, ok = s.ws(); !ok {
				return d.arrayEOF() // a trailing comma, then the end
			}
			if c == ']' { // tolerate a trailing comma before ']'
				s.pos++
				return nil
			}
		}
		if c != '{' {
			if idx == 0 {
				return d.errAt(s.off(), "", fmt.Sprintf("expected '{' starting trace event %d, found %s", idx, kQuoteByte(c)),
					"each element of traceEvents must be an event object", nil)
			}
			// A stray value among events costs itself only.
			at := s.off()
			if _, _, _, _, err := s.value(); err != nil {
				return d.wrap(err, "", fmt.Sprintf("element %d of the event array", idx))
			}
			d.skipBad(d.errAt(at, "", fmt.Sprintf("element %d of the event array is %s, not an event object", idx, kQuoteByte(c)), "", nil).Error())
			d.nEvents++
			continue
		}
		if err := d.event(); err != nil {
			return err
		}
		d.nEvents++
	}
}

func (d *kdec) arrayEOF() error {
	s := d.s
	if s.rerr != nil {
		return d.wrap(s.eofErr("the event array"), "", "the event array")
	}
	if d.arrayForm {
		d.t.Warn(fmt.Sprintf("%s: the event array is not closed (allowed by the trace-event format); %d events read", d.path, d.nEvents))
		return nil
	}
	return d.errAt(s.off(), "traceEvents", fmt.Sprintf("the file ends inside the traceEvents array after %d events", d.nEvents),
		"the trace is truncated; the events before this point were kept", nil)
}

// Event keys the importer reads.
const (
	kOther = iota
	kPh
	kCat
	kName
	kTs
	kDur
	kPid
	kTid
	kArgs
)

func kEventKey(k []byte) int {
	switch string(k) {
	case "ph":
		return kPh
	case "cat":
		return kCat
	case "name":
		return kName
	case "ts":
		return kTs
	case "dur":
		return kDur
	case "pid":
		return kPid
	case "tid":
		return kTid
	case "args":
		return kArgs
	}
	return kOther
}

// event parses one event object at pos and records it. The object is
// parsed from the window with a restartable parser (kwin); when it runs off
// the end of the window, the window is refilled (keeping the event's
// start) and the event parsed again from its start.
func (d *kdec) event() error {
	s := d.s
	start := s.off()
	s.keep = s.pos
	defer func() { s.keep = -1 }()
	for {
		w := kwin{b: s.buf[:s.end], i: s.pos, base: s.base}
		err := d.parseEvent(&w, start)
		if err == errKMore {
			if s.fill() {
				continue
			}
			ctx := fmt.Sprintf("event %d starting at byte %d", d.nEvents, start)
			if s.rerr != nil {
				return d.wrap(&kErrEOF{off: s.base + int64(s.end), what: ctx, rerr: s.rerr}, d.field, ctx)
			}
			return d.errAt(s.base+int64(s.end), d.field, "the file ends inside "+ctx,
				"the trace is truncated (the profiler may have been killed while writing); events before this point were kept", nil)
		}
		if err != nil {
			return err
		}
		s.pos = w.i
		return d.record(start)
	}
}

// parseEvent parses the event object at w.i into d.ev.
func (d *kdec) parseEvent(w *kwin, start int64) error {
	ev := d.ev
	*ev = kev{nums: ev.nums[:0]}
	d.field = ""
	// Clearing the 400-byte record costs; events that do not even start
	// as fastX's (flows: a third of a Kineto trace) go straight to the
	// generic parse with the one clearing above.
	if !bytes.HasPrefix(w.b[w.i:], []byte(kFastXHead)) {
		return d.parseMembers(w, start, false)
	}
	if i0 := w.i; d.fastX(w) {
		return nil
	} else {
		// Not the compact layout: parse generically from the start.
		w.i = i0
		*ev = kev{nums: ev.nums[:0]}
		d.field = ""
	}
	return d.parseMembers(w, start, false)
}

// kFastXHead starts every event fastX reads.
const kFastXHead = `{"ph":"X","cat":"`

// fastX parses an "X" event written in Kineto's compact layout,
// {"ph":"X","cat":C,"name":N,"pid":P,"tid":T,"ts":TS,"dur":D[,"args":{…}]}
// with numeric pid/tid/ts/dur, by matching the keys literally. It reports
// false (having possibly filled part of d.ev) for anything else, including
// the window ending early; parseEvent then starts over generically, so the
// result is the same either way, only faster here.
func (d *kdec) fastX(w *kwin) bool {
	ev := d.ev
	b := w.b
	i := w.i
	lit := func(l string) bool {
		if len(b)-i >= len(l) && string(b[i:i+len(l)]) == l {
			i += len(l)
			return true
		}
		return false
	}
	// str reads a string whose opening quote is just before i.
	str := func() (kspan, bool) {
		w.i = i - 1
		a, e, esc, ok := w.str()
		i = w.i
		return kspan{a: w.base + int64(a), b: w.base + int64(e), esc: esc, kind: kvString}, ok
	}
	num := func() (int, int, bool) {
		a := i
		for i < len(b) && (b[i]-'0' < 10 || b[i] == '.' || b[i] == '-') {
			i++
		}
		return a, i, i > a && i < len(b)
	}
	if !lit(kFastXHead) {
		return false
	}
	ev.ph = 'X'
	var ok bool
	if ev.cat, ok = str(); !ok || !lit(`,"name":"`) {
		return false
	}
	if ev.name, ok = str(); !ok || !lit(`,"pid":`) {
		return false
	}
	a, e, ok := num()
	if !ok || !lit(`,"tid":`) {
		return false
	}
	ev.pid = kspan{a: w.base + int64(a), b: w.base + int64(e), kind: kvNumber}
	if a, e, ok = num(); !ok || !lit(`,"ts":`) {
		return false
	}
	ev.tid = kspan{a: w.base + int64(a), b: w.base + int64(e), kind: kvNumber}
	if a, e, ok = num(); !ok || !lit(`,"dur":`) {
		return false
	}
	if ev.ts, ok = microsFast(b[a:e]); !ok {
		return false
	}
	ev.hasTs, ev.tsOff = true, w.base+int64(a)
	if a, e, ok = num(); !ok {
		return false
	}
	if ev.dur, ok = microsFast(b[a:e]); !ok {
		return false
	}
	ev.hasDur, ev.durOff = true, w.base+int64(a)
	if lit(`,"args":`) {
		w.i = i
		d.field = "args"
		if d.parseArgs(w, 0) != nil {
			return false
		}
		i = w.i
	}
	if !lit("}") {
		return false
	}
	w.i = i
	return true
}

// argsNeeded reports whether an event's args matter, judging from ph and
// cat when they came before args (as Kineto writes them): CPU-side events
// other than launches and syncs need nothing from args.
func (d *kdec) argsNeeded(w *kwin) bool {
	ev := d.ev
	if ev.ph != 'X' || ev.cat.kind != kvString {
		return true
	}
	cb := w.b[ev.cat.a-w.base : ev.cat.b-w.base]
	switch string(cb) {
	case "cpu_op", "python_function", "user_annotation":
		return false // a cpu_op's shapes are found in the skipped args (kineto_shapes.go)
	}
	return true
}

// parseArgs reads the args object of an event (parseMembers), or skips
// its value when it is not an object or argsNeeded says nothing in it
// matters.
func (d *kdec) parseArgs(w *kwin, start int64) error {
	c, ok := w.ws()
	if !ok {
		return errKMore
	}
	if c != '{' || !d.argsNeeded(w) {
		kind, a, b, _, err := w.value(&d.brackets)
		if err != nil && err != errKMore {
			return d.wrap(err, "args", d.objCtx(true, start))
		}
		if err == nil && kind == kvObject && d.wantShapes() {
			d.ev.shapes.scan(w, a, b)
		}
		return err
	}
	return d.parseMembers(w, start, true)
}

// parseMembers reads the members of the JSON object whose '{' is at w.i,
// up to and past its '}': the event itself (inArgs false: ph, cat, name,
// pid, tid, ts, dur into d.ev, a flow event skipped whole, args through
// parseArgs) or the event's args (inArgs true: correlation and external
// ids, bytes, stream, device, name, labels and a counter's numbers). The
// syntax between members — ',', the key string, ':' — is read here once
// for both; the one difference: an event tolerates a trailing comma before
// its '}', args do not. Keys of the event are matched after unescaping,
// keys of args as written. start is the event's first byte, for errors
// (objCtx); errKMore: the window ends before the object does.
func (d *kdec) parseMembers(w *kwin, start int64, inArgs bool) error {
	ev := d.ev
	field := "" // the field named by a syntax error
	if inArgs {
		field = "args"
	}
	w.i++ // '{'
	for first := true; ; first = false {
		c, ok := w.ws()
		if !ok {
			return errKMore
		}
		if c == '}' {
			w.i++
			return nil
		}
		if !first {
			if c != ',' {
				return d.errAt(w.base+int64(w.i), field, "expected ',' or '}' in "+d.objCtx(inArgs, start)+", found "+kQuoteByte(c), "the file is not valid JSON", nil)
			}
			w.i++
			if c, ok = w.ws(); !ok {
				return errKMore
			}
			if c == '}' && !inArgs { // an event's trailing comma: tolerated
				w.i++
				return nil
			}
		}
		if c != '"' {
			return d.errAt(w.base+int64(w.i), field, "expected a key in "+d.objCtx(inArgs, start)+", found "+kQuoteByte(c), "the file is not valid JSON", nil)
		}
		ka, kb, kesc, ok := w.str()
		if !ok {
			return errKMore
		}
		if c, ok = w.ws(); !ok {
			return errKMore
		}
		if c != ':' {
			return d.errAt(w.base+int64(w.i), field, "expected ':' after a key, found "+kQuoteByte(c), "the file is not valid JSON", nil)
		}
		w.i++
		if inArgs {
			kind, a, b, esc, err := w.value(&d.brackets)
			if err != nil {
				if err == errKMore {
					return err
				}
				return d.wrap(err, "args."+string(w.b[ka:kb]), d.objCtx(true, start))
			}
			key := w.b[ka:kb]
			val := w.b[a:b]
			switch string(key) {
			case "correlation":
				ev.corr, ev.hasCorr = kNumUint(kind, val)
			case "correlation id":
				ev.corrAlt, ev.hasAlt = kNumUint(kind, val)
			case "External id", "external id":
				ev.extID, ev.hasExt = kNumUint(kind, val)
			case "bytes", "Bytes":
				ev.bytesV, ev.hasBytes = kNumInt(kind, val)
			case kWorkArg:
				ev.work, ev.hasWork = kNumInt(kind, val)
			case "stream":
				ev.stream, ev.hasStream = kNumInt(kind, val)
			case "device":
				ev.device, ev.hasDevice = kNumInt(kind, val)
			case "name":
				if kind == kvString {
					ev.argName = kspan{a: w.base + int64(a), b: w.base + int64(b), esc: esc, kind: kind}
				}
			case "labels":
				if kind == kvString {
					ev.argLabels = kspan{a: w.base + int64(a), b: w.base + int64(b), esc: esc, kind: kind}
				}
			case "Addr", "Total Allocated", "Total Reserved", "Device Id", "Device Type":
				ev.mem.arg(string(key), kind, val)
			}
			if kind == kvNumber && (ev.ph == 'C' || ev.ph == 0) { // counter values
				ev.nums = append(ev.nums, kNumArg{key: kspan{a: w.base + int64(ka), b: w.base + int64(kb), kind: kvString}, val: kspan{a: w.base + int64(a), b: w.base + int64(b), kind: kvNumber}})
			}
			continue
		}
		// A member of the event.
		kbytes := w.b[ka:kb]
		if kesc {
			d.scratch, _ = kUnescape(d.scratch[:0], kbytes)
			kbytes = d.scratch
		}
		key := kEventKey(kbytes)
		d.field = kFieldName(key)
		if key == kArgs {
			if err := d.parseArgs(w, start); err != nil {
				return err
			}
			continue
		}
		kind, a, b, esc, err := w.value(&d.brackets)
		if err != nil {
			if err == errKMore {
				return err
			}
			return d.wrap(err, d.field, d.objCtx(false, start))
		}
		sp := kspan{a: w.base + int64(a), b: w.base + int64(b), esc: esc, kind: kind}
		switch key {
		case kPh:
			if kind != kvString || b == a {
				return d.errAt(sp.a, "ph", "expected the phase as a one-letter string (\"X\", \"B\", \"E\", …)", "", nil)
			}
			ev.ph = w.b[a]
			switch ev.ph {
			case 's', 'f', 't':
				// Flow events are skipped (see the package notes): jump
				// to the end of the object without reading its fields.
				// They make up a third of a Kineto trace.
				w.i = int(start - w.base) // the event's '{'

				if err := w.skipFlat(&d.brackets); err != nil {
					if err == errKMore {
						return err
					}
					return d.wrap(err, "", d.objCtx(false, start))
				}
				return nil
			}
		case kCat:
			if kind == kvString {
				ev.cat = sp
			}
		case kName:
			switch kind {
			case kvString, kvNumber:
				ev.name = sp
			case kvNull:
			default:
				return d.errAt(sp.a, "name", "expected the event name as a string", "", nil)
			}
		case kPid:
			ev.pid = sp
		case kTid:
			ev.tid = sp
		case kTs, kDur:
			var v int64
			if kind == kvNumber {
				v, ok = microsFast(w.b[a:b])
			} else {
				ok = false
			}
			if !ok {
				v, err = d.micros(sp, d.field)
				if err != nil {
					// A bad value spoils this event only: parse on to its
					// end and skip it (record).
					if ev.bad == nil {
						ev.bad = err
					}
					continue
				}
			}
			if key == kTs {
				ev.ts, ev.hasTs, ev.tsOff = v, true, sp.a
			} else {
				ev.dur, ev.hasDur, ev.durOff = v, true, sp.a
			}
		}
	}
}

// objCtx names the object parseMembers reads, for errors: "event N
// (starts at byte B)" or "the args of event N (starts at byte B)".
func (d *kdec) objCtx(inArgs bool, start int64) string {
	ctx := fmt.Sprintf("event %d (starts at byte %d)", d.nEvents, start)
	if inArgs {
		return "the args of " + ctx
	}
	return ctx
}

func kFieldName(key int) string {
	return [...]string{"", "ph", "cat", "name", "ts", "dur", "pid", "tid", "args"}[key]
}

// micros converts a ts/dur value (number or string) to ns.
func (d *kdec) micros(sp kspan, field string) (int64, error) {
	switch sp.kind {
	case kvNumber, kvString:
		b := d.s.bytes(sp.a, sp.b)
		if sp.kind == kvString && sp.esc {
			b, _ = kUnescape(nil, b)
		}
		v, err := parseMicrosNs(b)
		if err == nil {
			return v, nil
		}
		shown := string(b)
		if len(shown) > 40 {
			shown = shown[:40] + "…"
		}
		return 0, d.errAt(sp.a, field, fmt.Sprintf("expected microseconds as a decimal number, found %q", shown),
			"ts and dur are microseconds, e.g. 1712195495519689.047", err)
	}
	what := map[byte]string{kvTrue: "true", kvFalse: "false", kvNull: "null", kvObject: "an object", kvArray: "an array"}[sp.kind]
	return 0, d.errAt(sp.a, field, "expected microseconds as a number or numeric string, found "+what,
		"ts and dur are microseconds, e.g. 1712195495519689.047", nil)
}

func kNumUint(kind byte, b []byte) (uint64, bool) {
	if kind == kvString || kind == kvNumber {
		return kParseUint(b)
	}
	return 0, false
}

func kNumInt(kind byte, b []byte) (int64, bool) {
	if kind == kvString || kind == kvNumber {
		return kParseInt(b)
	}
	return 0, false
}

// mapID turns a pid/tid value into an int32 (see the package notes).
func (d *kdec) mapID(sp kspan) int32 {
	if sp.kind != kvString && sp.kind != kvNumber {
		return 0
	}
	b := d.s.bytes(sp.a, sp.b)
	if sp.esc {
		d.scratch2, _ = kUnescape(d.scratch2[:0], b)
		b = d.scratch2
	}
	if v, ok := kParseInt(b); ok && v >= -1<<31 && v < 1<<31 && (len(b) == 1 || b[0] != '0') {
		return int32(v)
	}
	if id, ok := d.idNames[string(b)]; ok {
		return id
	}
	d.nextID--
	if d.nextID > -2 {
		d.nextID = -2
	}
	d.idNames[string(b)] = d.nextID
	return d.nextID
}

// name returns the decoded bytes of a string span (valid until the next
// call).
func (d *kdec) text(sp kspan) []byte {
	if sp.kind == 0 {
		return nil
	}
	b := d.s.bytes(sp.a, sp.b)
	if sp.esc && sp.kind == kvString {
		var err error
		d.scratch, err = kUnescape(d.scratch[:0], b)
		if err != nil {
			return b
		}
		return d.scratch
	}
	return b
}

// kindOfCategory maps a (lower-cased) Kineto category to a Kind. ok is
// false for categories the importer does not know (kept as KindUnknown).
func kindOfCategory(lc []byte) (tracer.Kind, bool) {
	switch string(lc) {
	case "kernel":
		return tracer.KindKernel, true
	case "gpu_memcpy", "memcpy":
		return tracer.KindMemcpy, true
	case "gpu_memset", "memset":
		return tracer.KindMemset, true
	case "cuda_runtime", "runtime":
		return tracer.KindRuntime, true
	case "cuda_driver", "driver":
		return tracer.KindDriver, true
	case "cpu_op", "operator":
		return tracer.KindCPUOp, true
	case "user_annotation":
		return tracer.KindRange, true
	case "gpu_user_annotation":
		return tracer.KindGPURange, true
	case "python_function":
		return tracer.KindPython, true
	case "cuda_sync":
		return tracer.KindSync, true
	case "overhead":
		return tracer.KindOverhead, true
	}
	return tracer.KindUnknown, false
}

// kModule returns "nn.Module: Name" for a python_function event that
// torch.profiler(with_modules=True) writes for an nn.Module's forward,
// "nn.Module: Name_N" (N the instance), so that modules are annotation
// ranges (stages) and all instances of a class share one.
func kModule(name []byte) ([]byte, bool) {
	const p = "nn.Module: "
	if len(name) <= len(p) || string(name[:len(p)]) != p {
		return nil, false
	}
	i := len(name)
	for i > len(p) && name[i-1] >= '0' && name[i-1] <= '9' {
		i--
	}
	if i < len(name) && i > len(p)+1 && name[i-1] == '_' {
		return name[:i-1], true
	}
	return name, true
}

// kProfilerStep returns N for a name "ProfilerStep#N".
func kProfilerStep(name []byte) (int64, bool) {
	const p = "ProfilerStep#"
	if len(name) <= len(p) || string(name[:len(p)]) != p {
		return 0, false
	}
	return kParseUintI64(name[len(p):])
}

func kParseUintI64(b []byte) (int64, bool) {
	v, ok := kParseUint(b)
	if !ok || v > 1<<63-1 {
		return 0, false
	}
	return int64(v), true
}

// record turns the parsed event into trace records.
func (d *kdec) record(start int64) error {
	if d.stream != nil && d.stream.err != nil {
		return d.stream.err // the input cannot be streamed exactly: stop reading
	}
	if d.over != nil {
		return d.over
	}
	if msg, hint, over := d.names.over(d.t.Strings.Bytes(), "events"); over {
		d.over = d.errAt(start, "", msg, hint, nil)
		return d.over
	}
	ev := d.ev
	if d.nEvents == 0 && ev.ph == 0 && !ev.hasTs && !ev.hasDur && ev.name.kind == 0 && ev.cat.kind == 0 && ev.pid.kind == 0 && ev.tid.kind == 0 {
		// rocprof v1 JSON starts its traceEvents with an empty object {};
		// only a first event is forgiven, so [{"foo":1},…] is still no trace.
		d.t.Warn(fmt.Sprintf("%s (byte %d): event %d is empty (no \"ph\", \"name\" or \"ts\"); skipped", d.path, start, d.nEvents))
		return nil
	}
	if ev.ph == 0 {
		e := d.errAt(start, "ph", fmt.Sprintf("event %d has no \"ph\" (phase) field", d.nEvents),
			"every trace event needs a phase such as \"X\"; the file may not be a trace", nil)
		if d.nEvents == 0 {
			return e
		}
		// After the first event the file is a trace: one event without
		// a phase costs itself only.
		e.Hint = ""
		d.skipBad(e.Error())
		return nil
	}
	ph := ev.ph
	if ev.bad != nil && ph != 'M' {
		d.skipBad(ev.bad.Error())
		return nil
	}
	switch ph {
	case 'X', 'B', 'E':
		if !ev.hasTs {
			d.skipBad(d.errAt(start, "ts", fmt.Sprintf("%q event %d has no \"ts\" (start time)", string(ph), d.nEvents), "", nil).Error())
			return nil
		}
	case 'i', 'I', 'n', 'C':
		if !ev.hasTs {
			d.skipped[ph]++
			return nil
		}
	case 'M':
		d.metadata()
		return nil
	default:
		d.skipped[ph]++
		return nil
	}
	if ph == 'C' {
		d.counters()
		return nil
	}

	var e tracer.Event
	e.Start = ev.ts
	name := d.text(ev.name)
	e.Name = d.t.Strings.InternBytes(name)
	e.Kind = tracer.KindUnknown
	if ev.cat.kind != 0 {
		var lc [24]byte
		cb := d.s.bytes(ev.cat.a, ev.cat.b)
		if len(cb) <= len(lc) {
			for i, c := range cb {
				if c >= 'A' && c <= 'Z' {
					c += 'a' - 'A'
				}
				lc[i] = c
			}
			e.Kind, _ = kindOfCategory(lc[:len(cb)])
		}
	}
	if e.Kind == tracer.KindRange {
		if n, ok := kProfilerStep(name); ok {
			e.Kind, e.Value = tracer.KindStep, n
		}
	}
	if e.Kind == tracer.KindCPUOp && ev.shapes.any() && !d.noShapes && d.model.Has(name) {
		d.addCall(&e)
	}
	if e.Kind == tracer.KindPython {
		if m, ok := kModule(name); ok {
			e.Kind, e.Name = tracer.KindRange, d.t.Strings.InternBytes(m)
		}
	}
	if ph == 'i' || ph == 'I' || ph == 'n' {
		e.Kind = tracer.KindInstant
	}
	e.PID = d.mapID(ev.pid)
	e.TID = d.mapID(ev.tid)
	e.Device = -1
	if e.Kind.IsGPU() {
		e.Stream = e.TID
		if ev.hasStream {
			e.Stream = int32(ev.stream)
		}
		e.TID = -1
		switch {
		case ev.hasDevice:
			e.Device = int32(ev.device)
		case e.PID >= 0:
			e.Device = e.PID
		}
	}
	// GPU events whose device came from the pid may be remapped by a
	// process_labels "GPU N" record (often written after the events).
	fromPid := e.Kind.IsGPU() && !ev.hasDevice
	if (e.Kind == tracer.KindMemcpy || e.Kind == tracer.KindMemset) && ev.hasBytes {
		e.Value = ev.bytesV
	}
	if e.Kind == tracer.KindKernel && ev.hasWork {
		e.Value = ev.work
	}
	switch {
	case ev.hasCorr:
		e.Corr = ev.corr
	case e.Kind.IsGPU() || e.Kind.IsLaunch():
		if ev.hasAlt {
			e.Corr = ev.corrAlt
		} else if ev.hasExt {
			e.Corr = ev.extID
		}
	}

	switch ph {
	case 'X':
		if !ev.hasDur {
			d.noDur++
		} else if ev.dur < 0 {
			d.skipBad(d.errAt(ev.durOff, "dur", fmt.Sprintf("negative duration %d ns in event %d (%q)", ev.dur, d.nEvents, kClip(name)), "", nil).Error())
			return nil
		} else if ev.dur > MaxEventNs {
			d.skipBad(d.errAt(ev.durOff, "dur", fmt.Sprintf("duration %d ns in event %d (%q) is over 30 days", ev.dur, d.nEvents, kClip(name)), "", nil).Error())
			return nil
		}
		if e.Kind.IsGPU() {
			// Kept, but said: a known Kineto export bug writes GPU work at
			// ts 0, and a kernel of 0 ns is no kernel time.
			if e.Start == 0 {
				d.zeroTs++
			}
			if e.Kind == tracer.KindKernel && ev.hasDur && ev.dur == 0 {
				d.zeroDur++
			}
		}
		if ev.hasDur {
			e.Dur = ev.dur
		}
		d.add(e, fromPid)
	case 'i', 'I', 'n':
		if d.memory(name, &e) {
			return nil
		}
		d.add(e, fromPid)
	case 'B':
		k := [2]int32{e.PID, e.TID}
		d.stacks[k] = append(d.stacks[k], openB{ev: e, name: append([]byte(nil), name...), off: start, fromPid: fromPid})
	case 'E':
		pid, tid := d.mapID(ev.pid), d.mapID(ev.tid)
		k := [2]int32{pid, tid}
		st := d.stacks[k]
		if len(st) == 0 {
			d.t.Warn(fmt.Sprintf("%s (byte %d): \"E\" event %q at ts %d ns on pid %d tid %d has no open \"B\"; skipped",
				d.path, start, kClip(name), ev.ts, pid, tid))
			return nil
		}
		b := st[len(st)-1]
		d.stacks[k] = st[:len(st)-1]
		if len(name) > 0 && !bytes.Equal(name, b.name) {
			d.t.Warn(fmt.Sprintf("%s (byte %d): \"E\" event %q closes the most recent \"B\" %q (byte %d) on pid %d tid %d; names differ",
				d.path, start, kClip(name), kClip(b.name), b.off, pid, tid))
		}
		if ev.ts < b.ev.Start {
			d.t.Warn(fmt.Sprintf("%s (byte %d): \"E\" event at ts %d ns is earlier than its \"B\" %q at %d ns (byte %d); both skipped",
				d.path, start, ev.ts, kClip(b.name), b.ev.Start, b.off))
			return nil
		}
		b.ev.Dur = ev.ts - b.ev.Start
		d.add(b.ev, b.fromPid)
	}
	return nil
}

func (d *kdec) add(e tracer.Event, fromPid bool) {
	if d.stream != nil {
		d.stream.add(d, e, fromPid)
		return
	}
	if d.maxEvents > 0 && d.nOut >= d.maxEvents {
		if d.over == nil {
			d.over = d.errAt(d.s.off(), "", fmt.Sprintf("the file holds more than %d events (%s): the events before this point are kept", d.maxEvents, d.maxWhy),
				fmt.Sprintf("`rlktop report` streams a Kineto file of %d MiB or more (decoded) without this limit; to read it whole, pass --%s N or set %s to a larger number (0: no limit; each event takes about %d bytes at a report's peak)",
					StreamMinBytes>>20, MaxEventsFlag, MaxEventsEnv, KinetoEventBytes), nil)
		}
		return
	}
	if fromPid {
		d.needDev = append(d.needDev, int32(d.nOut))
	}
	if len(d.cur) == cap(d.cur) {
		// Events are kept in chunks and joined once at the end: growing
		// one slice copies (and page-faults in) several times the final
		// size and leaves the old arrays resident.
		if d.cur != nil {
			d.chunks = append(d.chunks, d.cur)
		}
		n := 4096
		if c := cap(d.cur); c > 0 {
			n = min(2*c, 1<<16)
		}
		d.cur = make([]tracer.Event, 0, n)
	}
	d.cur = append(d.cur, e)
	d.nOut++
}

// kEstimateEvents returns an upper estimate of the number of kept events
// in a file of opts.FileSize bytes (0 when unknown). The shared Kineto
// traces spend 264-384 bytes of JSON per kept event (flows and metadata are
// skipped), so uncompressed/200 leaves room; gzip is taken to shrink
// Kineto JSON 25-fold (they compress 12-20×). An estimate that proves low
// only means the events continue in chunks.
func kEstimateEvents(opts Options, max int) int {
	size := opts.FileSize
	if opts.Gzipped {
		size *= 25
	}
	n := int(min(size/200, 64<<20))
	if max > 0 {
		n = min(n, max)
	}
	return n
}

// joinEvents moves the chunks into Trace.Events (exact size).
func (d *kdec) joinEvents() {
	if len(d.chunks) == 0 {
		d.t.Events = d.cur
		d.cur = nil
		return
	}
	ev := make([]tracer.Event, 0, d.nOut)
	for i, c := range d.chunks {
		ev = append(ev, c...)
		d.chunks[i] = nil
	}
	ev = append(ev, d.cur...)
	d.chunks, d.cur = nil, nil
	d.t.Events = ev
	if d.nOut > 1<<20/72*16 {
		// Hand the chunks' memory (as large as Events) back to the heap now,
		// so that Link and the caller reuse it instead of growing the
		// process: this keeps peak RSS near twice the event array. Events
		// hold no pointers, so the collection itself is cheap.
		runtime.GC()
	}
}

func kClip(b []byte) string {
	if len(b) > 80 {
		return string(b[:80]) + "…"
	}
	return string(b)
}

// metadata handles an M event.
func (d *kdec) metadata() {
	ev := d.ev
	name := d.text(ev.name)
	switch string(name) {
	case "process_labels":
		lab := d.text(ev.argLabels)
		if n, ok := kGpuLabel(lab); ok {
			d.kGpuLabel[d.mapID(ev.pid)] = n
		}
	case "process_name", "thread_name":
		// Names are not needed for attribution; kept out of the model.
	}
}

// kGpuLabel parses "GPU N".
func kGpuLabel(b []byte) (int32, bool) {
	const p = "GPU "
	if len(b) <= len(p) || string(b[:len(p)]) != p {
		return 0, false
	}
	v, ok := kParseInt(b[len(p):])
	if !ok || v < 0 || v >= 1<<31 {
		return 0, false
	}
	return int32(v), true
}

// counters handles a C event.
func (d *kdec) counters() {
	ev := d.ev
	base := string(d.text(ev.name))
	for _, na := range ev.nums {
		v, err := strconv.ParseFloat(string(d.s.bytes(na.val.a, na.val.b)), 64)
		if err != nil {
			continue
		}
		key := d.s.bytes(na.key.a, na.key.b)
		d.t.Counters = append(d.t.Counters, tracer.Counter{
			TS:     ev.ts,
			Name:   d.t.Strings.Intern(base + "." + string(key)),
			Device: -1,
			Value:  v,
		})
	}
}

// finish closes the reading: unclosed B events, device fix-ups, summaries,
// Link.
func (d *kdec) finish() *tracer.Trace {
	if d.stream != nil {
		d.stream.end(d)
	} else {
		d.joinEvents()
	}
	t := d.t
	keys := make([][2]int32, 0, len(d.stacks))
	for k, st := range d.stacks {
		if len(st) > 0 {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i][0] < keys[j][0] || keys[i][0] == keys[j][0] && keys[i][1] < keys[j][1]
	})
	for _, k := range keys {
		for _, b := range d.stacks[k] {
			t.Warn(fmt.Sprintf("%s (byte %d): \"B\" event %q on pid %d tid %d is never closed by an \"E\"; skipped",
				d.path, b.off, kClip(b.name), k[0], k[1]))
		}
	}
	if d.stream != nil {
		d.stream.checkDevices(d)
	} else if len(d.kGpuLabel) > 0 {
		for _, i := range d.needDev {
			e := &t.Events[i]
			if dev, ok := d.kGpuLabel[e.PID]; ok {
				e.Device = dev
			}
		}
	}
	switch {
	case d.stream != nil:
		d.stream.nestingWarning(d)
	case d.late != nil:
		d.late.pending, d.late.path = true, d.path // finishLate checks, beside Link
	default:
		d.checkNesting()
	}
	if d.memSkipped > 0 {
		d.warn(fmt.Sprintf("%s: %d [memory] events lack Bytes, Addr or Device Id; kept as instants, not in the memory model", d.path, d.memSkipped))
	}
	if d.badN > kBadShown {
		d.warn(fmt.Sprintf("%s: %d more events with a bad ts or dur skipped (%d in all)", d.path, d.badN-kBadShown, d.badN))
	}
	if d.badN > 0 {
		t.Meta["skipped_bad_events"] = strconv.Itoa(d.badN)
	}
	if d.zeroTs > 0 {
		d.warn(fmt.Sprintf("%s: %s at ts 0 (a known Kineto export bug); kept, but the step and stage given them are guesses", d.path, units.Plural(int64(d.zeroTs), "GPU event")))
	}
	if d.zeroDur > 0 {
		d.warn(fmt.Sprintf("%s: %s of 0 ns; kept (they count in kernel counts, not in time)", d.path, units.Plural(int64(d.zeroDur), "kernel")))
	}
	if d.noDur > 0 {
		d.warn(fmt.Sprintf("%s: %d \"X\" events have no \"dur\"; taken as 0 ns", d.path, d.noDur))
	}
	if len(d.skipped) > 0 {
		phs := make([]int, 0, len(d.skipped))
		for ph := range d.skipped {
			phs = append(phs, int(ph))
		}
		sort.Ints(phs)
		var parts []string
		for _, ph := range phs {
			parts = append(parts, fmt.Sprintf("%s:%d", string(rune(ph)), d.skipped[byte(ph)]))
		}
		t.Meta["skipped_events"] = strings.Join(parts, " ")
	}
	return t
}
