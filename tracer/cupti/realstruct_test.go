//go:build cupti && cgo

package cupti

import (
	"slices"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/cupti/internal/realstruct"
)

// TestLayoutsMatchHeaders checks every offset the decoder reads against
// offsetof in the CUPTI headers it was built with.
func TestLayoutsMatchHeaders(t *testing.T) {
	K, M, S, A, Y, O, R, Q := &LayoutKernel, &LayoutMemcpy, &LayoutMemset, &LayoutAPI, &LayoutSync, &LayoutOverhead, &LayoutMarker, &LayoutMemory
	ours := []int{
		-1, K.Registers, K.Start, K.End, K.Device, K.Context, K.Stream,
		K.GridX, K.GridY, K.GridZ, K.BlockX, K.BlockY, K.BlockZ,
		K.StaticShared, K.DynamicShared, K.Correlation, K.Name, K.GraphNodeID, K.GraphID,
		-1, M.CopyKind, M.SrcKind, M.DstKind, M.Bytes, M.Start, M.End, M.Device,
		M.Context, M.Stream, M.Correlation, M.GraphNodeID, M.GraphID,
		-1, S.Bytes, S.Start, S.End, S.Device, S.Context, S.Stream,
		S.Correlation, S.MemoryKind, S.GraphNodeID, S.GraphID,
		-1, A.Cbid, A.Start, A.End, A.Process, A.Thread, A.Correlation,
		-1, Y.Type, Y.Start, Y.End, Y.Correlation, Y.Context, Y.Stream,
		-1, O.OverheadKind, O.ObjectKind, O.ThreadID, O.Start, O.End,
		-1, R.Flags, R.Timestamp, R.ID, R.ObjectKind, R.ThreadID, R.Name,
		-1, Q.OperationType, Q.MemoryKind, Q.Correlation, Q.Address, Q.Bytes, Q.Timestamp, Q.Process, Q.Device,
	}
	real := realstruct.Offsets()
	if len(real) != len(ours) || len(realstruct.OffsetNames) != len(ours) {
		t.Fatalf("table sizes differ: headers %d, ours %d, names %d", len(real), len(ours), len(realstruct.OffsetNames))
	}
	for i := range ours {
		if ours[i] == -1 {
			t.Logf("%s = %d", realstruct.OffsetNames[i], real[i])
			continue
		}
		if ours[i] != real[i] {
			t.Errorf("%s: header offset %d, decoder reads %d", realstruct.OffsetNames[i], real[i], ours[i])
		}
	}
	// The minimum lengths must cover the fields read and fit the struct.
	sizes := map[string]int{}
	for i, n := range realstruct.OffsetNames {
		if s, ok := strings.CutPrefix(n, "sizeof "); ok {
			sizes[strings.TrimSuffix(s, "hronization")] = real[i]
		}
	}
	mins := map[string]int{"Kernel8": K.MinGraph, "Memcpy5": M.MinGraph, "Memset4": S.MinGraph, "API": A.Min, "Sync": Y.Min, "Overhead": O.Min, "Marker2": R.Min, "Memory3": Q.Min}
	for k, m := range mins {
		if m > sizes[k] {
			t.Errorf("%s: decoder needs %d bytes, struct has %d", k, m, sizes[k])
		}
	}
	if real[0] != 200 || real[15] != 92 || real[16] != 104 {
		t.Errorf("Kernel8: sizeof %d correlationId@%d name@%d; DESIGN.md checked 200/92/104 for CUDA 11.8", real[0], real[15], real[16])
	}
}

// TestDecodeRealStructs fills real CUPTI structs with known values and
// checks what the decoder makes of them.
func TestDecodeRealStructs(t *testing.T) {
	var b realstruct.Buffer
	defer b.Free()
	const mangled = "_ZN7cutlass6KernelINS_4gemm6kernel4GemmEEEvNT_6ParamsE"
	b.AddAPI(false, 211, 1000, 1500, 4242, 7, 31)
	b.AddMarker(2, 900, 5, 7, "forward")
	b.AddKernel(realstruct.Kernel{Start: 2000, End: 2600, Device: 1, Context: 3, Stream: 13, Corr: 31,
		Grid: [3]int32{128, 2, 1}, Block: [3]int32{256, 1, 1}, StaticShared: 1024, DynamicShared: 49152,
		Registers: 96, Name: mangled, GraphID: 0, GraphNodeID: 0})
	b.AddKernel(realstruct.Kernel{Start: 2700, End: 2750, Device: 1, Context: 3, Stream: 13, Corr: 32,
		Grid: [3]int32{1, 1, 1}, Block: [3]int32{32, 1, 1}, Name: "graph_kernel", GraphID: 17, GraphNodeID: 1 << 40})
	b.AddMemcpy(1, 2, 3, 1<<20, 3000, 3400, 1, 3, 7, 33)
	b.AddMemset(4096, 3500, 3510, 1, 3, 7, 34, 3)
	b.AddAPI(true, 307, 1600, 1700, 4242, 8, 32)
	b.AddSync(3, 4000, 5000, 35, 3, 7)
	b.AddOverhead(1<<16, 7, 5100, 5200)
	b.AddMarker(4, 5300, 5, 7, "")
	b.AddMarker(1, 5400, 6, 8, "checkpoint")
	b.AddMemory(false, 0x7f0000000000, 64<<20, 1550, 4242, 1, 32) // cudaMalloc under the driver call of thread 8
	b.AddMemory(true, 0x7f0000000000, 64<<20, 5450, 4242, 1, 99)  // its release, correlation never seen

	mem := CMemory{APINames: func(domain int, cbid uint32) string {
		switch {
		case domain == DomainRuntime && cbid == 211:
			return "cudaLaunchKernel_v7000"
		case domain == DomainDriver && cbid == 307:
			return "cuLaunchKernel"
		}
		return ""
	}}
	d := NewDecoder(4242, mem)
	if err := d.Decode(b.Bytes(), b.Offsets()); err != nil {
		t.Fatal(err)
	}
	got := d.Take()
	name := func(e tracer.Event) string { return d.Strings().Get(e.Name) }
	type want struct {
		kind           tracer.Kind
		name           string
		start, dur     int64
		corr           uint64
		value          int64
		tid, dev, strm int32
	}
	wants := []want{
		{tracer.KindRuntime, "cudaLaunchKernel", 1000, 500, 31, 0, 7, -1, 0},
		{tracer.KindKernel, mangled, 2000, 600, 31, 0, -1, 1, 13},
		{tracer.KindKernel, "graph_kernel", 2700, 50, 32, 0, -1, 1, 13},
		{tracer.KindMemcpy, "Memcpy HtoD (Pinned -> Device)", 3000, 400, 33, 1 << 20, -1, 1, 7},
		{tracer.KindMemset, "Memset (Device)", 3500, 10, 34, 4096, -1, 1, 7},
		{tracer.KindDriver, "cuLaunchKernel", 1600, 100, 32, 0, 8, -1, 0},
		{tracer.KindSync, "cudaStreamSynchronize", 4000, 1000, 35, 0, -1, -1, 7},
		{tracer.KindOverhead, "CUPTI overhead: buffer flush", 5100, 100, 0, 0, 7, -1, 0},
		{tracer.KindRange, "forward", 900, 4400, 0, 0, 7, -1, 0},
		{tracer.KindInstant, "checkpoint", 5400, 0, 0, 0, 8, -1, 0},
	}
	if len(got.Events) != len(wants) {
		t.Fatalf("got %d events, want %d", len(got.Events), len(wants))
	}
	for i, w := range wants {
		e := got.Events[i]
		g := want{e.Kind, name(e), e.Start, e.Dur, e.Corr, e.Value, e.TID, e.Device, e.Stream}
		if g != w {
			t.Errorf("event %d:\n got  %+v\n want %+v", i, g, w)
		}
		if e.PID != 4242 {
			t.Errorf("event %d: pid %d", i, e.PID)
		}
	}
	if len(got.Attrs) != 4 {
		t.Fatalf("attrs: %d, want 4 (2 kernels, memcpy, memset)", len(got.Attrs))
	}
	a := got.Attrs[0]
	if a.Event != 1 || a.Context != 3 || a.Grid != [3]int32{128, 2, 1} || a.Block != [3]int32{256, 1, 1} ||
		a.StaticShared != 1024 || a.DynamicShared != 49152 || a.Registers != 96 || a.GraphID != 0 {
		t.Errorf("kernel attrs %+v", a)
	}
	if g := got.Attrs[1]; g.GraphID != 17 || g.GraphNodeID != 1<<40 {
		t.Errorf("graph kernel attrs %+v", g)
	}
	wantMem := []tracer.MemEvent{
		{TS: 1550, Bytes: 64 << 20, Addr: 0x7f0000000000, Allocated: -1, Reserved: -1, PID: 4242, TID: 8, Device: 1},
		{TS: 5450, Bytes: -64 << 20, Addr: 0x7f0000000000, Allocated: -1, Reserved: -1, PID: 4242, TID: -1, Device: 1},
	}
	if !slices.Equal(got.Memory, wantMem) {
		t.Errorf("memory\n got  %+v\n want %+v", got.Memory, wantMem)
	}
	if st := d.Stats(); st.Records != 13 || st.Short != 0 || st.Unpaired != 0 || st.OpenRanges != 0 {
		t.Errorf("stats %+v", st)
	}
}
