package tracefile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/rlktop/rlktop/tracer"
)

// rocprofv3 `--output-format json`: one object whose only key is
// "rocprofiler-sdk-tool", holding one entry per profiled process (a list;
// a single object is accepted too). Layout as rocprofiler-sdk's rocprofv3
// writes it and its tests read it (ROCm/rocprofiler-sdk tests/rocprofv3):
//
//	metadata.pid
//	agents[]: id.handle, type (2 = GPU), name ("gfx942"), product_name,
//	          logical_node_type_id (GPU ordinal)
//	kernel_symbols[]: kernel_id, kernel_name (mangled),
//	          formatted_kernel_name, demangled_kernel_name, truncated_kernel_name
//	strings.buffer_records[kind]: {kind: "KERNEL_DISPATCH", operations: [...]}
//	strings.marker_api[]: {key: correlation_id.internal, value: roctx message}
//	buffer_records.kernel_dispatch[]: thread_id, correlation_id.internal,
//	          start_timestamp, end_timestamp (ns), stream_id.handle,
//	          dispatch_info{agent_id.handle, queue_id.handle, kernel_id, dispatch_id}
//	buffer_records.memory_copy[]: ... dst_agent_id, src_agent_id, bytes
//	buffer_records.hip_api[], hsa_api[], marker_api[]: kind, operation,
//	          thread_id, correlation_id.internal, start/end_timestamp
//
// Kernel names are formatted_kernel_name (the demangled name rocprofv3's CSV
// shows), else demangled_kernel_name, else kernel_name. Device is the GPU
// ordinal of the dispatch's agent. Marker records become KindRange named by
// their roctx message (KindInstant when start == end); HIP/HSA API records
// become KindRuntime carrying their correlation id. A range named
// "ProfilerStep#N" becomes KindStep with Value N. With several processes
// in one file, the n-th process's correlation ids are offset by n<<48.
// The file is read as a stream (rpStream): memory holds one process's
// tables and records plus the trace, never the whole document (a 4.7 MB
// file of 1.5 M empty processes took 1.4 GB decoded whole).

func init() {
	Register(Format{Name: "rocprofv3-json", Sniff: sniffRocprofJSON, Read: readRocprofJSON})
}

const rocprofToolKey = `"rocprofiler-sdk-tool"`

// sniffRocprofJSON accepts an object whose first key is
// "rocprofiler-sdk-tool".
func sniffRocprofJSON(head []byte) bool {
	head = bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))
	head = bytes.TrimLeft(head, " \t\r\n")
	if len(head) == 0 || head[0] != '{' {
		return false
	}
	head = bytes.TrimLeft(head[1:], " \t\r\n")
	return bytes.HasPrefix(head, []byte(rocprofToolKey))
}

type rpHandle struct {
	Handle uint64 `json:"handle"`
}

type rpCorr struct {
	Internal uint64 `json:"internal"`
}

type rpRecord struct {
	Kind          int       `json:"kind"`
	Operation     int       `json:"operation"`
	ThreadID      int64     `json:"thread_id"`
	CorrelationID rpCorr    `json:"correlation_id"`
	Start         int64     `json:"start_timestamp"`
	End           int64     `json:"end_timestamp"`
	StreamID      *rpHandle `json:"stream_id"`
	// kernel dispatch
	DispatchInfo *rpDispatchInfo `json:"dispatch_info"`
	// memory copy
	DstAgentID rpHandle `json:"dst_agent_id"`
	SrcAgentID rpHandle `json:"src_agent_id"`
	Bytes      int64    `json:"bytes"`
}

type rpDispatchInfo struct {
	AgentID    rpHandle `json:"agent_id"`
	QueueID    rpHandle `json:"queue_id"`
	KernelID   uint64   `json:"kernel_id"`
	DispatchID uint64   `json:"dispatch_id"`
}

type rpAgent struct {
	ID                rpHandle `json:"id"`
	Type              int      `json:"type"`
	Name              string   `json:"name"`
	ProductName       string   `json:"product_name"`
	LogicalNodeTypeID *int64   `json:"logical_node_type_id"`
}

type rpSymbol struct {
	KernelID            uint64 `json:"kernel_id"`
	KernelName          string `json:"kernel_name"`
	FormattedKernelName string `json:"formatted_kernel_name"`
	DemangledKernelName string `json:"demangled_kernel_name"`
	TruncatedKernelName string `json:"truncated_kernel_name"`
}

type rpKindStrings struct {
	Kind       string   `json:"kind"`
	Operations []string `json:"operations"`
}

type rpMarkerString struct {
	Key   uint64 `json:"key"`
	Value string `json:"value"`
}

// rpTool is one process of the file, as far as the importer uses it.
// Agents holds only GPU agents (type 2) and KernelSymbols only symbols
// with a name: the others change nothing in rocprofJSONProcess.
type rpTool struct {
	Metadata struct {
		PID int64 `json:"pid"`
	}
	Agents        []rpAgent
	KernelSymbols []*rpSymbol
	Strings       struct {
		BufferRecords []rpKindStrings
		MarkerAPI     []rpMarkerString
	}
	// CounterCollection counts callback_records.counter_collection, for
	// the no-GPU-work warning (a counter-collection run has its dispatches
	// there, not in buffer_records); the records are not read.
	CounterCollection int
	BufferRecords     struct {
		KernelDispatch []rpRecord
		MemoryCopy     []rpRecord
		HIPAPI         []rpRecord
		HSAAPI         []rpRecord
		MarkerAPI      []rpRecord
	}
}

func jsonErr(path string, base int64, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(err.Error(), "unexpected end of JSON input"):
		return &Error{Path: path, Offset: -1, Msg: "JSON ends early", Err: err, Hint: "the file is truncated; rerun rocprofv3 or use its CSV/rocpd output"}
	case errors.As(err, &se):
		return &Error{Path: path, Offset: base + se.Offset, Msg: "malformed JSON", Err: err, Hint: "the file may be truncated"}
	case errors.As(err, &te):
		return &Error{Path: path, Offset: base + te.Offset, Field: te.Field, Msg: fmt.Sprintf("expected %s, found JSON %s", te.Type, te.Value),
			Hint: "not the rocprofv3 JSON layout rlktop knows (rocprofiler-sdk 0.5–1.x)"}
	}
	return &Error{Path: path, Offset: -1, Msg: "cannot read JSON", Err: err}
}

// rpStream walks a rocprofv3 JSON document with encoding/json's Decoder:
// Token for the objects and arrays around the records, Decode for one
// record (or table entry) at a time, so that memory holds the current
// process's records and the trace, never the document.
type rpStream struct {
	dec  *json.Decoder
	sq   *jsonSqueeze // under dec: offsets given out are sq's until readRocprofJSON maps them
	path string
	// nRecords counts the buffer records read (each one event); past
	// maxRecords (rocprofJSONBudget; 0: none) records returns over, an
	// *Error saying why (maxWhy).
	nRecords   int64
	maxRecords int64
	maxWhy     string
	over       *Error
	// names bounds nameBytes, the bytes of kernel symbols and roctx
	// messages held (heldNames).
	names     nameBudget
	nameBytes int64
}

// at marks the start of a value (jsonSqueeze bounds the bytes read until
// the next mark) and returns the Decoder's offset.
func (s *rpStream) at() int64 {
	s.sq.mark()
	return s.dec.InputOffset()
}

// err turns a Decoder error into an *Error. field names where the
// decoder was (a JSON path); base is the stream offset where the value
// being decoded started (type errors count from there). A clean end of
// the stream inside the document is "JSON ends early".
func (s *rpStream) err(err error, field string, base int64) error {
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &Error{Path: s.path, Offset: s.sq.out, Field: field, Msg: "JSON ends early, inside the value starting at byte " + fmt.Sprint(s.sq.orig(base)), Err: err,
			Hint: "the file is truncated; what was read before this point is kept (rerun rocprofv3 or use its CSV/rocpd output for the rest)"}
	case errors.Is(err, errValueTooLarge):
		return &Error{Path: s.path, Offset: base, Field: field, Msg: "a value too large to be a rocprofv3 record", Err: err,
			Hint: "the file is damaged or not rocprofv3 output; what was read before this point is kept"}
	case errors.As(err, &se):
		// The decoder's syntax offsets inside Decode are not stream
		// offsets: report where the value holding the error starts.
		return &Error{Path: s.path, Offset: base, Field: field, Msg: "malformed JSON in the value starting here", Err: err, Hint: "the file may be truncated"}
	case errors.As(err, &te):
		f := field
		if te.Field != "" {
			f += "." + te.Field
		}
		return &Error{Path: s.path, Offset: base + te.Offset, Field: f, Msg: fmt.Sprintf("expected %s, found JSON %s", te.Type, te.Value),
			Hint: "not the rocprofv3 JSON layout rlktop knows (rocprofiler-sdk 0.5–1.x)"}
	}
	return &Error{Path: s.path, Offset: s.dec.InputOffset(), Field: field, Msg: "cannot read", Err: err}
}

// open reads the token that opens the value at field: want is '{' or
// '['. ok is false for null (an empty value, as encoding/json reads null
// into a struct or slice); another value is an error.
func (s *rpStream) open(want json.Delim, field string) (ok bool, err error) {
	at := s.at()
	tok, err := s.dec.Token()
	if err != nil {
		return false, s.err(err, field, at)
	}
	switch tok {
	case want:
		return true, nil
	case nil:
		return false, nil
	}
	what := map[json.Delim]string{'{': "an object", '[': "an array"}
	found := "a string"
	switch v := tok.(type) {
	case json.Delim:
		found = what[v]
	case json.Number:
		found = "a number"
	case bool:
		found = "a boolean"
	}
	return false, &Error{Path: s.path, Offset: s.dec.InputOffset(), Field: field, Msg: "expected " + what[want] + ", found " + found,
		Hint: "not the rocprofv3 JSON layout rlktop knows (rocprofiler-sdk 0.5–1.x)"}
}

// close reads the closing '}' or ']' after the last member.
func (s *rpStream) close(field string) error {
	at := s.at()
	if _, err := s.dec.Token(); err != nil {
		return s.err(err, field, at)
	}
	return nil
}

// key reads the next object key (the caller checked More).
func (s *rpStream) key(field string) (string, error) {
	at := s.at()
	tok, err := s.dec.Token()
	if err != nil {
		return "", s.err(err, field, at)
	}
	k, _ := tok.(string)
	return k, nil
}

// object calls member for each key of the object at field (nothing for
// null), then reads its end.
func (s *rpStream) object(field string, member func(key string) error) error {
	ok, err := s.open('{', field)
	if !ok || err != nil {
		return err
	}
	return s.members(field, member)
}

// members is object after its '{' was read.
func (s *rpStream) members(field string, member func(key string) error) error {
	for s.dec.More() {
		k, err := s.key(field)
		if err != nil {
			return err
		}
		if err := member(k); err != nil {
			return err
		}
	}
	return s.close(field)
}

// array calls elem with each element's index for the array at field
// (nothing for null), then reads its end.
func (s *rpStream) array(field string, elem func(i int) error) error {
	ok, err := s.open('[', field)
	if !ok || err != nil {
		return err
	}
	for i := 0; s.dec.More(); i++ {
		if err := elem(i); err != nil {
			return err
		}
	}
	return s.close(field)
}

// decode decodes the next value into v.
func (s *rpStream) decode(v any, field string) error {
	at := s.at()
	if err := s.dec.Decode(v); err != nil {
		return s.err(err, field, at)
	}
	return nil
}

// skip reads past the next value token by token (bounded memory whatever
// its size; the syntax is still checked).
func (s *rpStream) skip(field string) error {
	depth := 0
	for {
		at := s.at()
		tok, err := s.dec.Token()
		if err != nil {
			return s.err(err, field, at)
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}

// heldNames adds n bytes of names (kernel symbols, roctx messages) the
// stream now holds and returns, past the name budget, the *Error that
// stops the reading (s.over: the records before it are kept).
func (s *rpStream) heldNames(n int, field string) error {
	s.nameBytes += int64(n)
	if msg, hint, over := s.names.over(s.nameBytes, "records"); over {
		s.over = &Error{Path: s.path, Offset: s.dec.InputOffset(), Field: field, Msg: msg, Hint: hint}
		return s.over
	}
	return nil
}

// records appends the records of the array at field to *list.
func (s *rpStream) records(field string, list *[]rpRecord) error {
	return s.array(field, func(i int) error {
		if s.nRecords++; s.maxRecords > 0 && s.nRecords > s.maxRecords {
			s.over = &Error{Path: s.path, Offset: s.dec.InputOffset(), Field: fmt.Sprintf("%s[%d]", field, i),
				Msg:  fmt.Sprintf("the file holds more than %d buffer records (%s): the records before this one are kept", s.maxRecords, s.maxWhy),
				Hint: fmt.Sprintf("to read it all, pass --%s N or set %s to a larger number (0: no limit; each record takes about %d bytes at a report's peak)", MaxCSVRowsFlag, MaxCSVRowsEnv, JSONRecordBytes)}
			return s.over
		}
		var r rpRecord
		if err := s.decode(&r, fmt.Sprintf("%s[%d]", field, i)); err != nil {
			return err
		}
		*list = append(*list, r)
		return nil
	})
}

// process reads one process object into p (opened: its '{' was read).
// Keys match as encoding/json matches struct fields (case-insensitively);
// a repeated key adds to what the first one gave.
func (s *rpStream) process(p *rpTool, field string, opened bool) error {
	walk := s.object
	if opened {
		walk = s.members
	}
	return walk(field, func(k string) error {
		f := field + "." + k
		switch {
		case strings.EqualFold(k, "metadata"):
			return s.decode(&p.Metadata, f)
		case strings.EqualFold(k, "agents"):
			return s.array(f, func(i int) error {
				var a rpAgent
				if err := s.decode(&a, fmt.Sprintf("%s[%d]", f, i)); err != nil {
					return err
				}
				if a.Type == 2 {
					p.Agents = append(p.Agents, a)
				}
				return nil
			})
		case strings.EqualFold(k, "kernel_symbols"):
			return s.array(f, func(i int) error {
				var sym *rpSymbol
				if err := s.decode(&sym, fmt.Sprintf("%s[%d]", f, i)); err != nil {
					return err
				}
				if sym != nil && sym.FormattedKernelName+sym.DemangledKernelName+sym.KernelName+sym.TruncatedKernelName != "" {
					p.KernelSymbols = append(p.KernelSymbols, sym)
					return s.heldNames(len(sym.FormattedKernelName)+len(sym.DemangledKernelName)+len(sym.KernelName)+len(sym.TruncatedKernelName), fmt.Sprintf("%s[%d]", f, i))
				}
				return nil
			})
		case strings.EqualFold(k, "strings"):
			return s.object(f, func(k string) error {
				g := f + "." + k
				switch {
				case strings.EqualFold(k, "buffer_records"):
					return s.array(g, func(i int) error {
						var b rpKindStrings
						if err := s.decode(&b, fmt.Sprintf("%s[%d]", g, i)); err != nil {
							return err
						}
						p.Strings.BufferRecords = append(p.Strings.BufferRecords, b)
						return nil
					})
				case strings.EqualFold(k, "marker_api"):
					return s.array(g, func(i int) error {
						var m rpMarkerString
						if err := s.decode(&m, fmt.Sprintf("%s[%d]", g, i)); err != nil {
							return err
						}
						p.Strings.MarkerAPI = append(p.Strings.MarkerAPI, m)
						return s.heldNames(len(m.Value), fmt.Sprintf("%s[%d]", g, i))
					})
				}
				return s.skip(g)
			})
		case strings.EqualFold(k, "callback_records"):
			return s.object(f, func(k string) error {
				g := f + "." + k
				if strings.EqualFold(k, "counter_collection") {
					return s.array(g, func(int) error {
						p.CounterCollection++
						return s.skip(g)
					})
				}
				return s.skip(g)
			})
		case strings.EqualFold(k, "buffer_records"):
			b := &p.BufferRecords
			return s.object(f, func(k string) error {
				g := f + "." + k
				for _, sec := range []struct {
					key  string
					list *[]rpRecord
				}{{"kernel_dispatch", &b.KernelDispatch}, {"memory_copy", &b.MemoryCopy}, {"hip_api", &b.HIPAPI},
					{"hsa_api", &b.HSAAPI}, {"marker_api", &b.MarkerAPI}} {
					if strings.EqualFold(k, sec.key) {
						return s.records(g, sec.list)
					}
				}
				return s.skip(g)
			})
		}
		return s.skip(f)
	})
}

// readRocprofJSON reads the document as a stream: one process at a time
// is decoded (its tables and records) and turned into events before the
// next is read, so memory holds one process's records plus the trace.
//
// At most rocprofJSONBudget records are read: past it, the records before
// (those of the current process too) come back as events with the *Error.
func readRocprofJSON(r io.Reader, path string, opts Options) (*tracer.Trace, error) {
	sq := newJSONSqueeze(r)
	t, err := readRocprofJSONSqueezed(sq, path)
	var fe *Error
	if errors.As(err, &fe) && fe.Path == path {
		fe.Offset = sq.orig(fe.Offset)
	}
	return t, err
}

// readRocprofJSONSqueezed is readRocprofJSON over the squeezed stream; the
// offsets of its errors are sq's. A document cut short or damaged keeps
// the records read before the damage (those of the process it cuts
// too): the trace comes back with the error.
func readRocprofJSONSqueezed(sq *jsonSqueeze, path string) (*tracer.Trace, error) {
	dec := json.NewDecoder(sq)
	dec.UseNumber() // skipped numbers are not parsed
	s := &rpStream{dec: dec, sq: sq, path: path}
	s.maxRecords, s.maxWhy = rocprofJSONBudget()
	s.names = newNameBudget()
	t := tracer.NewTrace("rocprofv3-json", path)
	devSeen := map[int32]bool{}
	var n [6]int
	procs := 0
	found := false
	one := func(pi int, opened bool) error {
		var p rpTool
		err := s.process(&p, fmt.Sprintf("rocprofiler-sdk-tool[%d]", pi), opened)
		if err := rocprofJSONProcess(t, &p, uint64(pi)<<48, devSeen); err != nil {
			return &Error{Path: path, Offset: -1, Field: fmt.Sprintf("rocprofiler-sdk-tool[%d]", pi), Msg: err.Error()}
		}
		b := &p.BufferRecords
		for i, l := range [][]rpRecord{b.KernelDispatch, b.MemoryCopy, b.HIPAPI, b.HSAAPI, b.MarkerAPI} {
			n[i] += len(l)
		}
		n[5] += p.CounterCollection
		procs++
		return err
	}
	err := s.object("", func(k string) error {
		if k != "rocprofiler-sdk-tool" {
			return s.skip(k)
		}
		if found {
			return &Error{Path: path, Offset: s.at(), Field: k, Msg: "key repeated", Hint: "a rocprofv3 JSON file has one"}
		}
		found = true
		// A list of processes; a single process object is accepted too.
		at := s.at()
		tok, err := dec.Token()
		if err != nil {
			return s.err(err, k, at)
		}
		switch tok {
		case json.Delim('['):
			for pi := 0; dec.More(); pi++ {
				if err := one(pi, false); err != nil {
					return err
				}
			}
			return s.close(k)
		case json.Delim('{'):
			return one(0, true)
		case nil:
			return nil
		}
		return &Error{Path: path, Offset: dec.InputOffset(), Field: k, Msg: "expected a list of processes, found a scalar",
			Hint: "not the rocprofv3 JSON layout rlktop knows (rocprofiler-sdk 0.5–1.x)"}
	})
	if err != nil {
		if len(t.Events) == 0 && len(t.Counters) == 0 {
			return nil, err
		}
		return t, err
	}
	if !found {
		return nil, &Error{Path: path, Offset: 0, Field: "rocprofiler-sdk-tool", Msg: "key missing", Hint: "not a rocprofv3 --output-format json file"}
	}
	if tok, err := dec.Token(); err != io.EOF {
		if err == nil {
			err = fmt.Errorf("found %v", tok)
		}
		return nil, &Error{Path: path, Offset: dec.InputOffset(), Msg: "data after the JSON object", Err: err, Hint: "the file may have been written twice into; rerun rocprofv3"}
	}
	if !hasGPUWork(t) {
		warnNoGPU(t, fmt.Sprintf("%d processes; buffer_records kernel_dispatch %d, memory_copy %d, hip_api %d, hsa_api %d, marker_api %d; "+
			"callback_records counter_collection %d (not read: rerun with --kernel-trace for dispatch times)", procs, n[0], n[1], n[2], n[3], n[4], n[5]))
	}
	return t, nil
}

func rocprofJSONProcess(t *tracer.Trace, p *rpTool, corrSpace uint64, devSeen map[int32]bool) error {
	pid := int32Of(p.Metadata.PID)
	// Agent handle → GPU ordinal.
	gpu := map[uint64]int32{}
	n := int32(0)
	for _, a := range p.Agents {
		if a.Type != 2 {
			continue
		}
		id := n
		if a.LogicalNodeTypeID != nil {
			id = int32Of(*a.LogicalNodeTypeID)
		}
		n++
		gpu[a.ID.Handle] = id
		if !devSeen[id] {
			devSeen[id] = true
			name := a.ProductName
			if name == "" {
				name = a.Name
			}
			t.Devices = append(t.Devices, tracer.Device{ID: id, Name: name, Vendor: "amd", ComputeCap: a.Name})
		}
	}
	device := func(h uint64) int32 {
		if d, ok := gpu[h]; ok {
			return d
		}
		t.Warn(fmt.Sprintf("%s: agent handle %d is not a GPU agent in \"agents\"", t.Path, h))
		return -1
	}
	names := map[uint64]string{}
	for _, s := range p.KernelSymbols {
		if s == nil {
			continue
		}
		for _, n := range []string{s.FormattedKernelName, s.DemangledKernelName, s.KernelName, s.TruncatedKernelName} {
			if n != "" {
				names[s.KernelID] = n
				break
			}
		}
	}
	kindName := func(k int) string {
		if k >= 0 && k < len(p.Strings.BufferRecords) {
			return p.Strings.BufferRecords[k].Kind
		}
		return ""
	}
	opName := func(k, op int) string {
		if k >= 0 && k < len(p.Strings.BufferRecords) {
			ops := p.Strings.BufferRecords[k].Operations
			if op >= 0 && op < len(ops) {
				return ops[op]
			}
		}
		return ""
	}
	markers := map[uint64]string{}
	for _, m := range p.Strings.MarkerAPI {
		markers[m.Key] = m.Value
	}
	negStart := 0 // records starting before 0 ns (the first is warned, the count after)
	defer func() {
		if negStart > 1 {
			t.Warn(fmt.Sprintf("%s: %d records start before 0 ns", t.Path, negStart))
		}
	}()
	ev := func(kind tracer.Kind, name string, r *rpRecord) tracer.Event {
		e := tracer.Event{Kind: kind, Start: r.Start, PID: pid, TID: int32Of(r.ThreadID), Device: -1, Name: t.Strings.Intern(name)}
		if r.CorrelationID.Internal != 0 {
			e.Corr = r.CorrelationID.Internal | corrSpace
		}
		if r.Start < 0 {
			negStart++
			if negStart == 1 {
				t.Warn(fmt.Sprintf("%s: %s %q starts at %d ns, before the clock's origin (rocprofv3 writes CLOCK_BOOTTIME ns, never negative): the file is damaged or not rocprofv3's; kept as written", t.Path, kind, name, r.Start))
			}
		}
		var ok bool
		if e.Dur, ok = clampDur(r.Start, r.End); !ok {
			t.Warn(fmt.Sprintf("%s: %s %q at %d ns %s; duration set to 0", t.Path, kind, name, r.Start, durWhy(r.Start, r.End)))
		}
		return e
	}
	for i := range p.BufferRecords.KernelDispatch {
		r := &p.BufferRecords.KernelDispatch[i]
		if r.DispatchInfo == nil {
			return fmt.Errorf("buffer_records.kernel_dispatch[%d]: no dispatch_info", i)
		}
		name, ok := names[r.DispatchInfo.KernelID]
		if !ok {
			name = fmt.Sprintf("<kernel_id %d>", r.DispatchInfo.KernelID)
			t.Warn(fmt.Sprintf("%s: kernel_dispatch[%d]: kernel_id %d not in kernel_symbols", t.Path, i, r.DispatchInfo.KernelID))
		}
		e := ev(tracer.KindKernel, name, r)
		e.Device = device(r.DispatchInfo.AgentID.Handle)
		e.Stream = int32Of(int64(r.DispatchInfo.QueueID.Handle))
		if r.StreamID != nil {
			e.Stream = int32Of(int64(r.StreamID.Handle))
		}
		t.Events = append(t.Events, e)
	}
	for i := range p.BufferRecords.MemoryCopy {
		r := &p.BufferRecords.MemoryCopy[i]
		name := opName(r.Kind, r.Operation)
		if name == "" {
			name = "MEMORY_COPY"
		}
		e := ev(tracer.KindMemcpy, name, r)
		e.TID = -1
		e.Value = r.Bytes
		if d, ok := gpu[r.DstAgentID.Handle]; ok {
			e.Device = d
		} else {
			e.Device = device(r.SrcAgentID.Handle)
		}
		if r.StreamID != nil {
			e.Stream = int32Of(int64(r.StreamID.Handle))
		}
		t.Events = append(t.Events, e)
	}
	for _, list := range [][]rpRecord{p.BufferRecords.HIPAPI, p.BufferRecords.HSAAPI} {
		for i := range list {
			r := &list[i]
			name := opName(r.Kind, r.Operation)
			if name == "" {
				name = fmt.Sprintf("<api kind %d op %d>", r.Kind, r.Operation)
			}
			t.Events = append(t.Events, ev(tracer.KindRuntime, name, r))
		}
	}
	for i := range p.BufferRecords.MarkerAPI {
		r := &p.BufferRecords.MarkerAPI[i]
		name, ok := markers[r.CorrelationID.Internal]
		if !ok || name == "" {
			name = opName(r.Kind, r.Operation)
		}
		kind := tracer.KindRange
		if r.End == r.Start {
			kind = tracer.KindInstant
		}
		if k := kindName(r.Kind); k != "" && !strings.Contains(k, "MARKER") {
			kind = tracer.KindRuntime
		}
		e := ev(kind, name, r)
		if kind != tracer.KindRuntime {
			e.Corr = 0
		}
		asStep(&e, name)
		t.Events = append(t.Events, e)
	}
	return nil
}
