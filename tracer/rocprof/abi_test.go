package rocprof

import (
	"bufio"
	"fmt"
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
	const (
		dispatch     = "rlk_rp_kernel_dispatch_record_t"
		dispatchInfo = "rlk_rp_kernel_dispatch_info_t"
		memCopy      = "rlk_rp_memory_copy_record_t"
		api          = "rlk_rp_api_record_t"
		apiV1        = "rlk_rp_api_record_v1_t"
		callbackV1   = "rlk_rp_callback_record_v1_t"
		callback     = "rlk_rp_callback_record_t"
		symbol       = "rlk_rp_kernel_symbol_data_t"
		marker       = "rlk_rp_marker_api_data_t"
		header       = "rlk_rp_record_header_t"
		configure    = "rlk_rp_tool_configure_result_t"
		agent        = "rlk_rp_agent_v0_t"
	)
	checks := []struct {
		name string // as printed and reported
		c    string // the C expression over include/rlk_rocprofiler.h
		want int    // what abi.go (or the SDK) says
	}{
		{"DispatchOffSize", offsetof(dispatch, "size"), DispatchOffSize},
		{"DispatchOffKind", offsetof(dispatch, "kind"), DispatchOffKind},
		{"DispatchOffOperation", offsetof(dispatch, "operation"), DispatchOffOperation},
		{"DispatchOffCorr", offsetof(dispatch, "correlation_id.internal"), DispatchOffCorr},
		{"DispatchOffThreadID", offsetof(dispatch, "thread_id"), DispatchOffThreadID},
		{"DispatchOffStart", offsetof(dispatch, "start_timestamp"), DispatchOffStart},
		{"DispatchOffEnd", offsetof(dispatch, "end_timestamp"), DispatchOffEnd},
		{"DispatchOffInfo", offsetof(dispatch, "dispatch_info"), DispatchOffInfo},
		{"DispatchOffAgent", offsetof(dispatch, "dispatch_info.agent_id.handle"), DispatchOffAgent},
		{"DispatchOffQueue", offsetof(dispatch, "dispatch_info.queue_id.handle"), DispatchOffQueue},
		{"DispatchOffKernelID", offsetof(dispatch, "dispatch_info.kernel_id"), DispatchOffKernelID},
		{"DispatchOffDispatchID", offsetof(dispatch, "dispatch_info.dispatch_id"), DispatchOffDispatchID},
		{"DispatchOffWorkgroup", offsetof(dispatch, "dispatch_info.workgroup_size"), DispatchOffWorkgroup},
		{"DispatchOffGrid", offsetof(dispatch, "dispatch_info.grid_size"), DispatchOffGrid},
		{"DispatchSize", sizeof(dispatch), DispatchSize},
		{"DispatchInfoSize", sizeof(dispatchInfo), 128}, // static_assert in the SDK's fwd.h

		{"CopyOffSize", offsetof(memCopy, "size"), CopyOffSize},
		{"CopyOffKind", offsetof(memCopy, "kind"), CopyOffKind},
		{"CopyOffOperation", offsetof(memCopy, "operation"), CopyOffOperation},
		{"CopyOffCorr", offsetof(memCopy, "correlation_id.internal"), CopyOffCorr},
		{"CopyOffThreadID", offsetof(memCopy, "thread_id"), CopyOffThreadID},
		{"CopyOffStart", offsetof(memCopy, "start_timestamp"), CopyOffStart},
		{"CopyOffEnd", offsetof(memCopy, "end_timestamp"), CopyOffEnd},
		{"CopyOffDstAgent", offsetof(memCopy, "dst_agent_id"), CopyOffDstAgent},
		{"CopyOffSrcAgent", offsetof(memCopy, "src_agent_id"), CopyOffSrcAgent},
		{"CopyOffBytes", offsetof(memCopy, "bytes"), CopyOffBytes},
		{"CopySize", sizeof(memCopy), CopySize},

		{"APIOffSize", offsetof(api, "size"), APIOffSize},
		{"APIOffKind", offsetof(api, "kind"), APIOffKind},
		{"APIOffOperation", offsetof(api, "operation"), APIOffOperation},
		{"APIOffCorr", offsetof(api, "correlation_id.internal"), APIOffCorr},
		{"APIOffStart", offsetof(api, "start_timestamp"), APIOffStart},
		{"APIOffEnd", offsetof(api, "end_timestamp"), APIOffEnd},
		{"APIOffThreadID", offsetof(api, "thread_id"), APIOffThreadID},
		{"APISize", sizeof(api), APISize},

		{"APIV1OffCorr", offsetof(apiV1, "correlation_id.internal"), APIV1OffCorr},
		{"APIV1OffStart", offsetof(apiV1, "start_timestamp"), APIV1OffStart},
		{"APIV1OffEnd", offsetof(apiV1, "end_timestamp"), APIV1OffEnd},
		{"APIV1OffThreadID", offsetof(apiV1, "thread_id"), APIV1OffThreadID},
		{"APIV1Size", sizeof(apiV1), APIV1Size},

		{"CallbackV1OffKind", offsetof(callbackV1, "kind"), CallbackV1OffKind},
		{"CallbackV1OffOp", offsetof(callbackV1, "operation"), CallbackV1OffOp},
		{"CallbackV1OffPhase", offsetof(callbackV1, "phase"), CallbackV1OffPhase},
		{"CallbackV1OffPayload", offsetof(callbackV1, "payload"), CallbackV1OffPayload},
		{"CallbackV1Size", sizeof(callbackV1), CallbackV1Size},

		{"CallbackRecordOffThreadID", offsetof(callback, "thread_id"), CallbackRecordOffThreadID},
		{"CallbackRecordOffCorr", offsetof(callback, "correlation_id.internal"), CallbackRecordOffCorr},
		{"CallbackRecordOffKind", offsetof(callback, "kind"), CallbackRecordOffKind},
		{"CallbackRecordOffOp", offsetof(callback, "operation"), CallbackRecordOffOp},
		{"CallbackRecordOffPhase", offsetof(callback, "phase"), CallbackRecordOffPhase},
		{"CallbackRecordOffPayload", offsetof(callback, "payload"), CallbackRecordOffPayload},
		{"CallbackRecordSize", sizeof(callback), CallbackRecordSize},

		{"SymbolOffKernelID", offsetof(symbol, "kernel_id"), SymbolOffKernelID},
		{"SymbolOffKernelName", offsetof(symbol, "kernel_name"), SymbolOffKernelName},
		{"SymbolSize", sizeof(symbol), SymbolSize},

		{"MarkerOffArgs", offsetof(marker, "args"), MarkerOffArgs},
		{"MarkerOffRetval", offsetof(marker, "retval"), MarkerOffRetval},
		{"MarkerSize", sizeof(marker), MarkerSize},

		{"RecordHeaderOffKind", offsetof(header, "kind"), RecordHeaderOffKind},
		{"RecordHeaderOffPayload", offsetof(header, "payload"), RecordHeaderOffPayload},
		{"RecordHeaderSize", sizeof(header), RecordHeaderSize},

		{"ConfigureResultSize", sizeof(configure), ConfigureResultSize},

		{"AgentOffID", offsetof(agent, "id"), AgentOffID},
		{"AgentOffType", offsetof(agent, "type"), AgentOffType},
		{"AgentOffCUCount", offsetof(agent, "cu_count"), AgentOffCUCount},
		{"AgentOffName", offsetof(agent, "name"), AgentOffName},
		{"AgentOffProductName", offsetof(agent, "product_name"), AgentOffProductName},
		{"AgentOffLogicalNodeTypeID", offsetof(agent, "logical_node_type_id"), AgentOffLogicalNodeTypeID},
		{"AgentSize", sizeof(agent), 296}, // offsets hand-computed from agent.h (0.5.0): 42 4-byte fields after size/id, then 3 u64, 2 dim3, 7 pointers, 4 int32
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "abi.c")
	var prog strings.Builder
	prog.WriteString("#include <stdio.h>\n#include <stddef.h>\n#include \"rlk_rocprofiler.h\"\nint main(void) {\n")
	for _, c := range checks {
		fmt.Fprintf(&prog, "\tprintf(\"%s=%%zu\\n\", %s);\n", c.name, c.c)
	}
	prog.WriteString("\treturn 0;\n}\n")
	if err := os.WriteFile(src, []byte(prog.String()), 0o644); err != nil {
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
	for _, c := range checks {
		g, ok := got[c.name]
		if !ok || g != c.want {
			t.Errorf("%s: C says %d (present %v), abi.go says %d", c.name, g, ok, c.want)
		}
	}
	if len(got) != len(checks) {
		t.Errorf("C printed %d values, compared %d", len(got), len(checks))
	}
	// The prefixes rlktop needs fit the 0.5.0 records.
	if DispatchMin > DispatchSize || CopyMin > CopySize || APIMin > APISize || DispatchMin < DispatchOffKernelID+8 {
		t.Errorf("minimum sizes inconsistent")
	}
}

// offsetof and sizeof write the C expressions TestABILayout prints.
func offsetof(typ, field string) string { return "offsetof(" + typ + ", " + field + ")" }
func sizeof(typ string) string          { return "sizeof(" + typ + ")" }
