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
// The whole file is decoded in memory.

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
	DispatchInfo *struct {
		AgentID    rpHandle `json:"agent_id"`
		QueueID    rpHandle `json:"queue_id"`
		KernelID   uint64   `json:"kernel_id"`
		DispatchID uint64   `json:"dispatch_id"`
	} `json:"dispatch_info"`
	// memory copy
	DstAgentID rpHandle `json:"dst_agent_id"`
	SrcAgentID rpHandle `json:"src_agent_id"`
	Bytes      int64    `json:"bytes"`
}

type rpTool struct {
	Metadata struct {
		PID int64 `json:"pid"`
	} `json:"metadata"`
	Agents []struct {
		ID                rpHandle `json:"id"`
		Type              int      `json:"type"`
		Name              string   `json:"name"`
		ProductName       string   `json:"product_name"`
		LogicalNodeTypeID *int64   `json:"logical_node_type_id"`
	} `json:"agents"`
	KernelSymbols []*struct {
		KernelID            uint64 `json:"kernel_id"`
		KernelName          string `json:"kernel_name"`
		FormattedKernelName string `json:"formatted_kernel_name"`
		DemangledKernelName string `json:"demangled_kernel_name"`
		TruncatedKernelName string `json:"truncated_kernel_name"`
	} `json:"kernel_symbols"`
	Strings struct {
		BufferRecords []struct {
			Kind       string   `json:"kind"`
			Operations []string `json:"operations"`
		} `json:"buffer_records"`
		MarkerAPI []struct {
			Key   uint64 `json:"key"`
			Value string `json:"value"`
		} `json:"marker_api"`
	} `json:"strings"`
	// CallbackRecords is only counted, for the no-GPU-work warning (a
	// counter-collection run has its dispatches here, not in buffer_records).
	CallbackRecords struct {
		CounterCollection []json.RawMessage `json:"counter_collection"`
	} `json:"callback_records"`
	BufferRecords struct {
		KernelDispatch []rpRecord `json:"kernel_dispatch"`
		MemoryCopy     []rpRecord `json:"memory_copy"`
		HIPAPI         []rpRecord `json:"hip_api"`
		HSAAPI         []rpRecord `json:"hsa_api"`
		MarkerAPI      []rpRecord `json:"marker_api"`
	} `json:"buffer_records"`
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

func readRocprofJSON(r io.Reader, path string, _ Options) (*tracer.Trace, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, &Error{Path: path, Offset: int64(len(data)), Msg: "cannot read", Err: err}
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, jsonErr(path, 0, err)
	}
	raw, ok := doc["rocprofiler-sdk-tool"]
	if !ok {
		return nil, &Error{Path: path, Offset: 0, Field: "rocprofiler-sdk-tool", Msg: "key missing", Hint: "not a rocprofv3 --output-format json file"}
	}
	// Offsets of errors inside raw are relative to it: find where it
	// starts in the file (after the key and its colon).
	base := int64(0)
	if i := bytes.Index(data, []byte(rocprofToolKey)); i >= 0 {
		j := i + len(rocprofToolKey)
		for j < len(data) && (data[j] == ' ' || data[j] == '\t' || data[j] == '\r' || data[j] == '\n' || data[j] == ':') {
			j++
		}
		base = int64(j)
	}
	var tools []rpTool
	if t := bytes.TrimLeft(raw, " \t\r\n"); len(t) > 0 && t[0] == '{' {
		tools = make([]rpTool, 1)
		if err := json.Unmarshal(raw, &tools[0]); err != nil {
			return nil, jsonErr(path, base, err)
		}
	} else if err := json.Unmarshal(raw, &tools); err != nil {
		return nil, jsonErr(path, base, err)
	}
	t := tracer.NewTrace("rocprofv3-json", path)
	devSeen := map[int32]bool{}
	for pi := range tools {
		if err := rocprofJSONProcess(t, &tools[pi], uint64(pi)<<48, devSeen); err != nil {
			return nil, &Error{Path: path, Offset: -1, Field: fmt.Sprintf("rocprofiler-sdk-tool[%d]", pi), Msg: err.Error()}
		}
	}
	if !hasGPUWork(t) {
		var n [6]int
		for i := range tools {
			b := &tools[i].BufferRecords
			n[0] += len(b.KernelDispatch)
			n[1] += len(b.MemoryCopy)
			n[2] += len(b.HIPAPI)
			n[3] += len(b.HSAAPI)
			n[4] += len(b.MarkerAPI)
			n[5] += len(tools[i].CallbackRecords.CounterCollection)
		}
		warnNoGPU(t, fmt.Sprintf("%d processes; buffer_records kernel_dispatch %d, memory_copy %d, hip_api %d, hsa_api %d, marker_api %d; "+
			"callback_records counter_collection %d (not read: rerun with --kernel-trace for dispatch times)", len(tools), n[0], n[1], n[2], n[3], n[4], n[5]))
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
		t.Warn(fmt.Sprintf("agent handle %d is not a GPU agent in \"agents\"", h))
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
	ev := func(kind tracer.Kind, name string, r *rpRecord) tracer.Event {
		e := tracer.Event{Kind: kind, Start: r.Start, PID: pid, TID: int32Of(r.ThreadID), Device: -1, Name: t.Strings.Intern(name)}
		if r.CorrelationID.Internal != 0 {
			e.Corr = r.CorrelationID.Internal | corrSpace
		}
		var ok bool
		if e.Dur, ok = clampDur(r.Start, r.End); !ok {
			t.Warn(fmt.Sprintf("%s %q at %d ends before it starts; duration set to 0", kind, name, r.Start))
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
			t.Warn(fmt.Sprintf("kernel_dispatch[%d]: kernel_id %d not in kernel_symbols", i, r.DispatchInfo.KernelID))
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
