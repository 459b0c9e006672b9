package rocprof

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestABILayout compiles include/rlk_rocprofiler.h (the ABI subset declared
// from rocprofiler-sdk 0.5.0's public headers) with the system C compiler
// and checks sizeof/offsetof of every field rlktop reads against abi.go, and
// the sizes the SDK itself fixes (kernel_dispatch_info_t is 128 bytes by a
// static_assert in fwd.h). It skips without gcc.
func TestABILayout(t *testing.T) {
	cc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not found: the ABI layout test compiles the declared header")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "abi.c")
	prog := `#include <stdio.h>
#include <stddef.h>
#include "rlk_rocprofiler.h"
#define O(name, type, field) printf("%s=%zu\n", name, offsetof(type, field))
#define S(name, type) printf("%s=%zu\n", name, sizeof(type))
int main(void) {
	O("DispatchOffSize", rlk_rp_kernel_dispatch_record_t, size);
	O("DispatchOffKind", rlk_rp_kernel_dispatch_record_t, kind);
	O("DispatchOffOperation", rlk_rp_kernel_dispatch_record_t, operation);
	O("DispatchOffCorr", rlk_rp_kernel_dispatch_record_t, correlation_id.internal);
	O("DispatchOffThreadID", rlk_rp_kernel_dispatch_record_t, thread_id);
	O("DispatchOffStart", rlk_rp_kernel_dispatch_record_t, start_timestamp);
	O("DispatchOffEnd", rlk_rp_kernel_dispatch_record_t, end_timestamp);
	O("DispatchOffInfo", rlk_rp_kernel_dispatch_record_t, dispatch_info);
	O("DispatchOffAgent", rlk_rp_kernel_dispatch_record_t, dispatch_info.agent_id.handle);
	O("DispatchOffQueue", rlk_rp_kernel_dispatch_record_t, dispatch_info.queue_id.handle);
	O("DispatchOffKernelID", rlk_rp_kernel_dispatch_record_t, dispatch_info.kernel_id);
	O("DispatchOffDispatchID", rlk_rp_kernel_dispatch_record_t, dispatch_info.dispatch_id);
	O("DispatchOffWorkgroup", rlk_rp_kernel_dispatch_record_t, dispatch_info.workgroup_size);
	O("DispatchOffGrid", rlk_rp_kernel_dispatch_record_t, dispatch_info.grid_size);
	S("DispatchSize", rlk_rp_kernel_dispatch_record_t);
	S("DispatchInfoSize", rlk_rp_kernel_dispatch_info_t);
	O("CopyOffSize", rlk_rp_memory_copy_record_t, size);
	O("CopyOffKind", rlk_rp_memory_copy_record_t, kind);
	O("CopyOffOperation", rlk_rp_memory_copy_record_t, operation);
	O("CopyOffCorr", rlk_rp_memory_copy_record_t, correlation_id.internal);
	O("CopyOffThreadID", rlk_rp_memory_copy_record_t, thread_id);
	O("CopyOffStart", rlk_rp_memory_copy_record_t, start_timestamp);
	O("CopyOffEnd", rlk_rp_memory_copy_record_t, end_timestamp);
	O("CopyOffDstAgent", rlk_rp_memory_copy_record_t, dst_agent_id);
	O("CopyOffSrcAgent", rlk_rp_memory_copy_record_t, src_agent_id);
	O("CopyOffBytes", rlk_rp_memory_copy_record_t, bytes);
	S("CopySize", rlk_rp_memory_copy_record_t);
	O("APIOffSize", rlk_rp_api_record_t, size);
	O("APIOffKind", rlk_rp_api_record_t, kind);
	O("APIOffOperation", rlk_rp_api_record_t, operation);
	O("APIOffCorr", rlk_rp_api_record_t, correlation_id.internal);
	O("APIOffStart", rlk_rp_api_record_t, start_timestamp);
	O("APIOffEnd", rlk_rp_api_record_t, end_timestamp);
	O("APIOffThreadID", rlk_rp_api_record_t, thread_id);
	S("APISize", rlk_rp_api_record_t);
	O("APIV1OffCorr", rlk_rp_api_record_v1_t, correlation_id.internal);
	O("APIV1OffStart", rlk_rp_api_record_v1_t, start_timestamp);
	O("APIV1OffEnd", rlk_rp_api_record_v1_t, end_timestamp);
	O("APIV1OffThreadID", rlk_rp_api_record_v1_t, thread_id);
	S("APIV1Size", rlk_rp_api_record_v1_t);
	O("CallbackV1OffKind", rlk_rp_callback_record_v1_t, kind);
	O("CallbackV1OffOp", rlk_rp_callback_record_v1_t, operation);
	O("CallbackV1OffPhase", rlk_rp_callback_record_v1_t, phase);
	O("CallbackV1OffPayload", rlk_rp_callback_record_v1_t, payload);
	S("CallbackV1Size", rlk_rp_callback_record_v1_t);
	O("CallbackRecordOffThreadID", rlk_rp_callback_record_t, thread_id);
	O("CallbackRecordOffCorr", rlk_rp_callback_record_t, correlation_id.internal);
	O("CallbackRecordOffKind", rlk_rp_callback_record_t, kind);
	O("CallbackRecordOffOp", rlk_rp_callback_record_t, operation);
	O("CallbackRecordOffPhase", rlk_rp_callback_record_t, phase);
	O("CallbackRecordOffPayload", rlk_rp_callback_record_t, payload);
	S("CallbackRecordSize", rlk_rp_callback_record_t);
	O("SymbolOffKernelID", rlk_rp_kernel_symbol_data_t, kernel_id);
	O("SymbolOffKernelName", rlk_rp_kernel_symbol_data_t, kernel_name);
	S("SymbolSize", rlk_rp_kernel_symbol_data_t);
	O("MarkerOffArgs", rlk_rp_marker_api_data_t, args);
	O("MarkerOffRetval", rlk_rp_marker_api_data_t, retval);
	S("MarkerSize", rlk_rp_marker_api_data_t);
	O("RecordHeaderOffKind", rlk_rp_record_header_t, kind);
	O("RecordHeaderOffPayload", rlk_rp_record_header_t, payload);
	S("RecordHeaderSize", rlk_rp_record_header_t);
	S("ConfigureResultSize", rlk_rp_tool_configure_result_t);
	O("AgentOffID", rlk_rp_agent_v0_t, id);
	O("AgentOffType", rlk_rp_agent_v0_t, type);
	O("AgentOffCUCount", rlk_rp_agent_v0_t, cu_count);
	O("AgentOffName", rlk_rp_agent_v0_t, name);
	O("AgentOffProductName", rlk_rp_agent_v0_t, product_name);
	O("AgentOffLogicalNodeTypeID", rlk_rp_agent_v0_t, logical_node_type_id);
	S("AgentSize", rlk_rp_agent_v0_t);
	return 0;
}
`
	if err := os.WriteFile(src, []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "abi")
	if out, err := exec.Command(cc, "-Wall", "-Werror", "-Iinclude", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("compiling the declared header: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), "=")
		n, _ := strconv.Atoi(v)
		got[k] = n
	}
	want := map[string]int{
		"DispatchOffSize": DispatchOffSize, "DispatchOffKind": DispatchOffKind, "DispatchOffOperation": DispatchOffOperation,
		"DispatchOffCorr": DispatchOffCorr, "DispatchOffThreadID": DispatchOffThreadID, "DispatchOffStart": DispatchOffStart,
		"DispatchOffEnd": DispatchOffEnd, "DispatchOffInfo": DispatchOffInfo, "DispatchOffAgent": DispatchOffAgent,
		"DispatchOffQueue": DispatchOffQueue, "DispatchOffKernelID": DispatchOffKernelID, "DispatchOffDispatchID": DispatchOffDispatchID,
		"DispatchOffWorkgroup": DispatchOffWorkgroup, "DispatchOffGrid": DispatchOffGrid, "DispatchSize": DispatchSize,
		"DispatchInfoSize": 128, // static_assert in the SDK's fwd.h
		"CopyOffSize":      CopyOffSize, "CopyOffKind": CopyOffKind, "CopyOffOperation": CopyOffOperation, "CopyOffCorr": CopyOffCorr,
		"CopyOffThreadID": CopyOffThreadID, "CopyOffStart": CopyOffStart, "CopyOffEnd": CopyOffEnd, "CopyOffDstAgent": CopyOffDstAgent,
		"CopyOffSrcAgent": CopyOffSrcAgent, "CopyOffBytes": CopyOffBytes, "CopySize": CopySize,
		"APIOffSize": APIOffSize, "APIOffKind": APIOffKind, "APIOffOperation": APIOffOperation, "APIOffCorr": APIOffCorr,
		"APIOffStart": APIOffStart, "APIOffEnd": APIOffEnd, "APIOffThreadID": APIOffThreadID, "APISize": APISize,
		"APIV1OffCorr": APIV1OffCorr, "APIV1OffStart": APIV1OffStart, "APIV1OffEnd": APIV1OffEnd, "APIV1OffThreadID": APIV1OffThreadID,
		"APIV1Size": APIV1Size, "CallbackV1OffKind": CallbackV1OffKind, "CallbackV1OffOp": CallbackV1OffOp,
		"CallbackV1OffPhase": CallbackV1OffPhase, "CallbackV1OffPayload": CallbackV1OffPayload, "CallbackV1Size": CallbackV1Size,
		"CallbackRecordOffThreadID": CallbackRecordOffThreadID, "CallbackRecordOffCorr": CallbackRecordOffCorr,
		"CallbackRecordOffKind": CallbackRecordOffKind, "CallbackRecordOffOp": CallbackRecordOffOp,
		"CallbackRecordOffPhase": CallbackRecordOffPhase, "CallbackRecordOffPayload": CallbackRecordOffPayload,
		"CallbackRecordSize": CallbackRecordSize, "SymbolOffKernelID": SymbolOffKernelID, "SymbolOffKernelName": SymbolOffKernelName,
		"SymbolSize": SymbolSize, "MarkerOffArgs": MarkerOffArgs, "MarkerOffRetval": MarkerOffRetval, "MarkerSize": MarkerSize,
		"RecordHeaderOffKind": RecordHeaderOffKind, "RecordHeaderOffPayload": RecordHeaderOffPayload,
		"RecordHeaderSize": RecordHeaderSize, "ConfigureResultSize": ConfigureResultSize,
		"AgentOffID": AgentOffID, "AgentOffType": AgentOffType, "AgentOffCUCount": AgentOffCUCount, "AgentOffName": AgentOffName,
		"AgentOffProductName": AgentOffProductName, "AgentOffLogicalNodeTypeID": AgentOffLogicalNodeTypeID,
		"AgentSize": 296, // offsets hand-computed from agent.h (0.5.0): 42 4-byte fields after size/id, then 3 u64, 2 dim3, 7 pointers, 4 int32
	}
	for k, w := range want {
		g, ok := got[k]
		if !ok || g != w {
			t.Errorf("%s: C says %d (present %v), abi.go says %d", k, g, ok, w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("C printed %d values, compared %d", len(got), len(want))
	}
	// The prefixes rlktop needs fit the 0.5.0 records.
	if DispatchMin > DispatchSize || CopyMin > CopySize || APIMin > APISize || DispatchMin < DispatchOffKernelID+8 {
		t.Errorf("minimum sizes inconsistent")
	}
}
