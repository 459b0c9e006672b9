package tracefile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/wire"
	"github.com/rlktop/rlktop/tracer/wire/msg"
)

// nameOf is the i-th of the test's distinct kernel names: exactly 100
// bytes each, so that n of them hold 100·n bytes of names.
func nameOf(i int) string { return fmt.Sprintf("k%099d", i) }

// TestImportNameBudget: a file of few rows but long distinct names is
// held to the bytes of names it decodes (a 14.8 MB gzipped CSV of 1.2 M
// distinct 1 KB names took 9.1 GB and 123 s; the row limit, 1,310,720,
// let it all in). 300 rows or events of 100-byte names under
// --max-import-name-bytes 10,000: the 101st name takes the table past
// the limit (10,100 bytes), so 101 are kept and the next one stops the
// read with an *Error naming the file and the limit, in an nsys stats
// CSV, a Kineto JSON and a recording (where the Strings frame carrying
// the 101st name is refused: the 100 events before it are kept); in a
// rocprofv3 JSON the kernel symbols are counted as they are decoded; with
// no limit all 300. The default budget is MaxImportNameBytes.
func TestImportNameBudget(t *testing.T) {
	t.Cleanup(ResetLimits)
	const n = 300
	var csv strings.Builder
	csv.WriteString("Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),DynSMem (MB),Bytes (MB),Throughput (MBps),SrcMemKd,DstMemKd,Device,Ctx,Strm,Name\n")
	var kin strings.Builder
	kin.WriteString(`{"traceEvents":[`)
	for i := range n {
		fmt.Fprintf(&csv, "%d,500,%d,1,1,1,256,1,1,32,0.000,0.000,,,,,NVIDIA A100 (0),1,7,%s\n", 1000+i*1000, i, nameOf(i))
		if i > 0 {
			kin.WriteString(",")
		}
		fmt.Fprintf(&kin, `{"ph":"X","cat":"kernel","name":"%s","pid":0,"tid":7,"ts":%d,"dur":1}`, nameOf(i), i)
	}
	kin.WriteString(`]}`)

	var rec bytes.Buffer
	w := wire.NewWriter(&rec)
	w.Flags = wire.FlagRelayed
	if err := w.Hello(&msg.Hello{Source: "crafted", PID: 1}); err != nil {
		t.Fatal(err)
	}
	for i := range n { // one Strings frame and one Events frame per kernel
		ev := tracer.Event{Kind: tracer.KindKernel, Name: w.Name(nameOf(i)), Start: int64(i) * 1000, Dur: 500, Device: 0}
		if err := w.Events([]tracer.Event{ev}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Bye(msg.Bye{Reason: "done"}); err != nil {
		t.Fatal(err)
	}

	// A rocprofv3 JSON (the test file's layout) whose 300 kernel symbols
	// carry 4 names of 100 bytes each: the 26th symbol passes 10,000
	// bytes (10,400), before any dispatch record, so nothing is kept.
	var doc map[string]any
	raw, err := os.ReadFile("testdata/rocprofv3_tool.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	tool := doc["rocprofiler-sdk-tool"].([]any)[0].(map[string]any)
	proto := tool["buffer_records"].(map[string]any)["kernel_dispatch"].([]any)[0].(map[string]any)
	var syms, disp []any
	for i := range n {
		syms = append(syms, map[string]any{"kernel_id": i + 1, "kernel_name": nameOf(i), "formatted_kernel_name": nameOf(i), "demangled_kernel_name": nameOf(i), "truncated_kernel_name": nameOf(i)})
		d := maps.Clone(proto)
		info := maps.Clone(proto["dispatch_info"].(map[string]any))
		info["kernel_id"], info["dispatch_id"] = i+1, i+1
		d["dispatch_info"], d["correlation_id"] = info, map[string]any{"internal": i + 1, "external": map[string]any{"value": 0}}
		d["start_timestamp"], d["end_timestamp"] = 1000+i*1000, 1500+i*1000
		disp = append(disp, d)
	}
	// Keys in the order rocprofv3 writes them (json.Marshal would sort
	// buffer_records before kernel_symbols).
	var rpb bytes.Buffer
	rpb.WriteString(`{"rocprofiler-sdk-tool":[{`)
	for i, kv := range []struct {
		k string
		v any
	}{{"metadata", tool["metadata"]}, {"agents", tool["agents"]}, {"kernel_symbols", syms}, {"buffer_records", map[string]any{"kernel_dispatch": disp}}} {
		b, err := json.Marshal(kv.v)
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 {
			rpb.WriteString(",")
		}
		fmt.Fprintf(&rpb, "%q:%s", kv.k, b)
	}
	rpb.WriteString(`}]}`)
	rp := rpb.Bytes()

	kernels := func(tr *tracer.Trace) int {
		k := 0
		if tr != nil {
			for i := range tr.Events {
				if tr.Events[i].Kind == tracer.KindKernel {
					k++
				}
			}
		}
		return k
	}
	for _, c := range []struct {
		path string
		data []byte
		kept int
	}{
		{"stats.csv", []byte(csv.String()), 101},
		{"trace.json", []byte(kin.String()), 101},
		{"run.rlk", rec.Bytes(), 100},
		{"results.json", rp, 0},
	} {
		ResetLimits()
		if b := newNameBudget(); b.max != MaxImportNameBytes {
			t.Errorf("default name budget %d, want %d", b.max, MaxImportNameBytes)
		}
		tr, err := Read(bytes.NewReader(c.data), c.path, int64(len(c.data)), Options{})
		if err != nil || kernels(tr) != n {
			t.Errorf("%s, default limit: %d kernels, err %v; want all %d", c.path, kernels(tr), err, n)
		}
		SetMaxImportNameBytes(10_000)
		tr, err = Read(bytes.NewReader(c.data), c.path, int64(len(c.data)), Options{})
		var fe *Error
		if !errors.As(err, &fe) || fe.Path != c.path || !strings.Contains(err.Error(), "--max-import-name-bytes=10000") || !strings.Contains(err.Error(), MaxImportNameBytesEnv) {
			t.Errorf("%s under 10,000 bytes of names: err %v; want an *Error naming the file, the limit and %s", c.path, err, MaxImportNameBytesEnv)
		}
		if kernels(tr) != c.kept {
			t.Errorf("%s under 10,000 bytes of names: %d kernels kept, want %d", c.path, kernels(tr), c.kept)
		}
		SetMaxImportNameBytes(0)
		if tr, err := Read(bytes.NewReader(c.data), c.path, int64(len(c.data)), Options{}); err != nil || kernels(tr) != n {
			t.Errorf("%s, no limit: %d kernels, err %v", c.path, kernels(tr), err)
		}
	}
}
