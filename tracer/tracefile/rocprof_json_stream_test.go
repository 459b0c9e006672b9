package tracefile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/tracer"
)

// readRocprofJSONWhole is the reader as it was before it streamed
// (commit 06c03fa): the whole file decoded by json.Unmarshal into one
// tree, then each process turned into events by rocprofJSONProcess. The
// streaming reader must give the same trace, warnings and success on
// every well-formed document; TestRocprofJSONStreamMatchesWhole checks
// that on the fixture and on generated documents.
func readRocprofJSONWhole(data []byte, path string) (*tracer.Trace, error) {
	type wholeTool struct {
		Metadata struct {
			PID int64 `json:"pid"`
		} `json:"metadata"`
		Agents        []rpAgent   `json:"agents"`
		KernelSymbols []*rpSymbol `json:"kernel_symbols"`
		Strings       struct {
			BufferRecords []rpKindStrings  `json:"buffer_records"`
			MarkerAPI     []rpMarkerString `json:"marker_api"`
		} `json:"strings"`
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
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	raw := doc["rocprofiler-sdk-tool"]
	var tools []wholeTool
	if t := bytes.TrimLeft(raw, " \t\r\n"); len(t) > 0 && t[0] == '{' {
		tools = make([]wholeTool, 1)
		if err := json.Unmarshal(raw, &tools[0]); err != nil {
			return nil, err
		}
	} else if err := json.Unmarshal(raw, &tools); err != nil {
		return nil, err
	}
	t := tracer.NewTrace("rocprofv3-json", path)
	devSeen := map[int32]bool{}
	var n [6]int
	for pi := range tools {
		w := &tools[pi]
		p := rpTool{Agents: w.Agents, KernelSymbols: w.KernelSymbols, CounterCollection: len(w.CallbackRecords.CounterCollection)}
		p.Metadata.PID = w.Metadata.PID
		p.Strings.BufferRecords, p.Strings.MarkerAPI = w.Strings.BufferRecords, w.Strings.MarkerAPI
		wb, pb := &w.BufferRecords, &p.BufferRecords
		pb.KernelDispatch, pb.MemoryCopy, pb.HIPAPI, pb.HSAAPI, pb.MarkerAPI = wb.KernelDispatch, wb.MemoryCopy, wb.HIPAPI, wb.HSAAPI, wb.MarkerAPI
		if err := rocprofJSONProcess(t, &p, uint64(pi)<<48, devSeen); err != nil {
			return nil, err
		}
		b := &w.BufferRecords
		for i, l := range [][]rpRecord{b.KernelDispatch, b.MemoryCopy, b.HIPAPI, b.HSAAPI, b.MarkerAPI} {
			n[i] += len(l)
		}
		n[5] += p.CounterCollection
	}
	if !hasGPUWork(t) {
		warnNoGPU(t, fmt.Sprintf("%d processes; buffer_records kernel_dispatch %d, memory_copy %d, hip_api %d, hsa_api %d, marker_api %d; "+
			"callback_records counter_collection %d (not read: rerun with --kernel-trace for dispatch times)", len(tools), n[0], n[1], n[2], n[3], n[4], n[5]))
	}
	return t, nil
}

// sameTrace compares two traces event by event with names resolved (the
// string-table ids may differ), plus devices and warnings.
func sameTrace(t *testing.T, label string, a, b *tracer.Trace) {
	t.Helper()
	if len(a.Events) != len(b.Events) {
		t.Fatalf("%s: %d events, want %d", label, len(a.Events), len(b.Events))
	}
	for i := range a.Events {
		ea, eb := a.Events[i], b.Events[i]
		na, nb := a.Name(&ea), b.Name(&eb)
		ea.Name, eb.Name = 0, 0
		if ea != eb || na != nb {
			t.Fatalf("%s: event %d\n got %q %+v\nwant %q %+v", label, i, na, ea, nb, eb)
		}
	}
	if !reflect.DeepEqual(a.Devices, b.Devices) {
		t.Errorf("%s: devices %+v, want %+v", label, a.Devices, b.Devices)
	}
	if !reflect.DeepEqual(a.Warnings, b.Warnings) {
		t.Errorf("%s: warnings\n got %q\nwant %q", label, a.Warnings, b.Warnings)
	}
}

// genRocprofJSON writes a random well-formed rocprofv3 JSON document:
// 1–3 processes with their keys in random order (buffer_records before or
// after the tables it refers to), unknown keys and sections to skip,
// agents of CPU and GPU type, symbols with and without names, records
// whose kernel_id, agent or marker key resolves or not, nulls.
func genRocprofJSON(r *rand.Rand) []byte {
	var b strings.Builder
	rec := func(kind, op int, extra string) string {
		start := r.Int64N(10000)
		end := start + r.Int64N(500) - 50 // sometimes before start
		s := fmt.Sprintf(`{"size":96,"kind":%d,"operation":%d,"thread_id":%d,"correlation_id":{"internal":%d,"external":{"value":0},"ancestor":0},"start_timestamp":%d,"end_timestamp":%d`,
			kind, op, 100+r.IntN(3), r.IntN(20), start, end)
		if r.IntN(3) == 0 {
			s += fmt.Sprintf(`,"stream_id":{"handle":%d}`, r.IntN(4))
		}
		return s + extra + "}"
	}
	list := func(n int, f func() string) string {
		var parts []string
		for range n {
			parts = append(parts, f())
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	nproc := 1 + r.IntN(3)
	b.WriteString(`{"rocprofiler-sdk-tool": `)
	single := nproc == 1 && r.IntN(3) == 0
	if !single {
		b.WriteString("[")
	}
	for pi := range nproc {
		if pi > 0 {
			b.WriteString(",")
		}
		keys := map[string]string{
			"metadata": fmt.Sprintf(`{"pid":%d,"init_time":1,"command":["python3","x.py"]}`, 4000+pi),
			"agents": list(1+r.IntN(4), func() string {
				ty := 1 + r.IntN(2)
				s := fmt.Sprintf(`{"size":920,"id":{"handle":%d},"type":%d,"name":"gfx%d","product_name":"%s"`, r.IntN(5), ty, 900+r.IntN(3), []string{"", "AMD Instinct MI300X"}[r.IntN(2)])
				if r.IntN(2) == 0 {
					s += fmt.Sprintf(`,"logical_node_type_id":%d`, r.IntN(3))
				}
				return s + "}"
			}),
			"kernel_symbols": list(r.IntN(5), func() string {
				if r.IntN(6) == 0 {
					return "null"
				}
				names := []string{"", "attn_fwd", "Cijk_Ailk", "_Z3addPfS_"}
				return fmt.Sprintf(`{"kernel_id":%d,"kernel_name":"%s","formatted_kernel_name":"%s","demangled_kernel_name":"%s","truncated_kernel_name":"%s"}`,
					r.IntN(5), names[r.IntN(4)], names[r.IntN(4)], names[r.IntN(4)], names[r.IntN(4)])
			}),
			"strings": fmt.Sprintf(`{"callback_records":[{"kind":"X","operations":["a"]}],"buffer_records":%s,"marker_api":%s}`,
				list(r.IntN(14), func() string {
					return fmt.Sprintf(`{"kind":"%s","operations":["NONE","hipLaunchKernel","hipMemcpy","MEMORY_COPY_HOST_TO_DEVICE"]}`,
						[]string{"NONE", "HIP_RUNTIME_API", "MARKER_CORE_API", "MEMORY_COPY", "KERNEL_DISPATCH"}[r.IntN(5)])
				}),
				list(r.IntN(4), func() string {
					return fmt.Sprintf(`{"key":%d,"value":"%s"}`, r.IntN(20), []string{"", "rollout", "ProfilerStep#3"}[r.IntN(3)])
				})),
			"callback_records": fmt.Sprintf(`{"hip_api":[{"a":[1,2,{"b":null}]}],"counter_collection":%s}`, list(r.IntN(3), func() string { return `{"dispatch_data":{"x":1.5e300}}` })),
			"code_objects":     `[{"uri":"file:///x","size":10},[],{}]`,
			"buffer_records": fmt.Sprintf(`{"kernel_dispatch":%s,"memory_copy":%s,"hip_api":%s,"hsa_api":%s,"marker_api":%s,"scratch_memory":[{"x":1}]}`,
				list(r.IntN(6), func() string {
					return rec(11, 1, fmt.Sprintf(`,"dispatch_info":{"size":64,"agent_id":{"handle":%d},"queue_id":{"handle":%d},"kernel_id":%d,"dispatch_id":%d}`, r.IntN(5), r.IntN(3), r.IntN(5), r.IntN(99)))
				}),
				list(r.IntN(3), func() string {
					return rec(r.IntN(14), r.IntN(5), fmt.Sprintf(`,"dst_agent_id":{"handle":%d},"src_agent_id":{"handle":%d},"bytes":%d`, r.IntN(5), r.IntN(5), r.IntN(1<<20)))
				}),
				list(r.IntN(4), func() string { return rec(r.IntN(14), r.IntN(5), "") }),
				list(r.IntN(2), func() string { return rec(r.IntN(14), r.IntN(5), "") }),
				list(r.IntN(4), func() string { return rec(r.IntN(14), r.IntN(5), "") })),
		}
		order := []string{"metadata", "agents", "kernel_symbols", "strings", "callback_records", "code_objects", "buffer_records"}
		r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		var parts []string
		for _, k := range order {
			if r.IntN(8) == 0 {
				continue // key absent
			}
			parts = append(parts, fmt.Sprintf("%q: %s", k, keys[k]))
		}
		b.WriteString("{" + strings.Join(parts, ",\n") + "}")
	}
	if !single {
		b.WriteString("]")
	}
	b.WriteString(`, "other": {"deep": [[[]]], "n": 1e999}}` + "\n")
	return []byte(b.String())
}

// The streaming reader gives what the whole-document reader gave: on the
// fixture, and on 500 generated documents (keys in every order, tables
// that resolve or not, unknown sections).
func TestRocprofJSONStreamMatchesWhole(t *testing.T) {
	fix, err := os.ReadFile(filepath.Join("testdata", "rocprofv3_tool.json"))
	if err != nil {
		t.Fatal(err)
	}
	docs := [][]byte{fix}
	r := rand.New(rand.NewPCG(16, 16))
	for range 500 {
		docs = append(docs, genRocprofJSON(r))
	}
	errs := 0
	for i, d := range docs {
		want, werr := readRocprofJSONWhole(d, "x.json")
		got, gerr := readRocprofJSON(bytes.NewReader(d), "x.json", Options{})
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("doc %d: error %v, whole-document reader %v\n%s", i, gerr, werr, d)
		}
		if werr != nil {
			errs++
			continue
		}
		sameTrace(t, fmt.Sprintf("doc %d", i), got, want)
	}
	// The generator writes only readable documents (every dispatch has
	// its dispatch_info), so every one must have been compared.
	if errs != 0 {
		t.Errorf("%d documents failed in both readers; the generator makes only readable ones", errs)
	}
}
