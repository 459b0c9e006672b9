package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/internal/testutil"
)

// TestReportFilterMessages: a --filter that keeps
// no row of a trace with kernels says so, naming the filter, instead of
// "no GPU kernels, memcpy or memset in this input"; an invalid regular
// expression is an error naming the filter and regexp's complaint, and
// nothing is reported. hta_ns_resolution_v100 holds 4350 "kernel" and
// 1600 + 145 "gpu_memcpy"/"gpu_memset" X events (python3's json module).
func TestReportFilterMessages(t *testing.T) {
	f := filepath.Join(testutil.SharedTraces(t), "kineto", "hta_ns_resolution_v100.json.gz")
	for _, format := range []string{"table", "md"} {
		out, err := runReport(t, "--filter", "cat:nosuch", "--format", format, f)
		if err != nil {
			t.Fatalf("%s: %v\n%s", format, err, out)
		}
		if !strings.Contains(out, `no kernel, memcpy or memset matches --filter "cat:nosuch" (the input has 4350 kernels and 1745 memcpy/memset); its categories: `) ||
			!strings.Contains(out, "gemm") || strings.Contains(out, "no GPU kernels") {
			t.Errorf("--format %s --filter cat:nosuch:\n%s", format, out)
		}
	}
	out, err := runReport(t, "--filter", "(", f)
	if err == nil {
		t.Fatalf("--filter '(': no error\n%s", out)
	}
	// "missing closing )" is Go's regexp error for an unclosed group
	// (regexp/syntax ErrMissingParen).
	if msg := err.Error(); !strings.Contains(msg, `--filter "("`) || !strings.Contains(msg, "missing closing )") || strings.Contains(msg, "(?i)") {
		t.Errorf("--filter '(': %v", err)
	}
	if strings.Contains(out, "kernels:") {
		t.Errorf("--filter '(' still reported:\n%s", out)
	}
	// A valid pattern that matches keeps working.
	out, err = runReport(t, "--filter", "cat:gemm", f)
	if err != nil || strings.Contains(out, "matches --filter") || !strings.Contains(out, "gemm") {
		t.Errorf("--filter cat:gemm (%v):\n%s", err, out)
	}
}
