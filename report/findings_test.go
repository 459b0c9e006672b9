package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/tracer/attrib"
)

func TestWriteFindings(t *testing.T) {
	s := &attrib.Snapshot{Source: "t.json", Format: "kineto"}
	fs := []attrib.Finding{
		{ID: "attention-math-fallback", Title: "attention runs on the math fallback", Kind: attrib.FindMathAttention, Share: 0.6, ShareOf: "GPU time",
			Evidence: []string{"math-path attention kernels: 60 ns of 100 ns GPU time (60.0%)"}, Top: []string{"aten::bmm 40 ns (4 calls)"},
			Try: "switch to a fused backend", Flag: &attrib.FindingFlag{Key: "sdpa", Value: "flash", Current: "math"}, Source: "a training report",
			Numbers: map[string]float64{"math_ns": 60}},
		{ID: "gpu-idle", Title: "the GPU | is idle", Kind: attrib.FindIdle, Share: 0.555, ShareOf: "step wall time", Try: "overlap", Source: "HTA"},
	}
	var b bytes.Buffer
	if err := WriteFindings(&b, s, fs, Options{Format: "table"}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"source: t.json (format kineto)", "1. attention runs on the math fallback — 60.0% of GPU time  [attention-math-fallback]",
		"   math-path attention kernels: 60 ns of 100 ns GPU time (60.0%)", "   top: aten::bmm 40 ns (4 calls)",
		"   test: sdpa=flash (now math; switched live): rlktop compare --flag sdpa=math,flash; in a live TUI: enter on the finding", "2. the GPU | is idle — 55.5% of step wall time  [gpu-idle]", "   source: HTA"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	WriteFindings(&b, s, fs, Options{Format: "md", Top: 1})
	if md := b.String(); !strings.Contains(md, "### 1. attention runs on the math fallback — 60.0% of GPU time") || strings.Contains(md, "gpu-idle") ||
		!strings.Contains(md, "- **try:** switch to a fused backend") {
		t.Errorf("md (top 1):\n%s", md)
	}
	b.Reset()
	WriteFindings(&b, s, fs, Options{Format: "csv"})
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil || len(recs) != 3 || recs[1][1] != "attention-math-fallback" || recs[1][4] != "0.600000" || recs[1][7] != "sdpa" || recs[1][9] != "math" || recs[2][2] != "the GPU | is idle" {
		t.Errorf("csv %q %v", recs, err)
	}
	b.Reset()
	WriteFindings(&b, s, fs, Options{Format: "json"})
	var doc FindingsDoc
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil || len(doc.Findings) != 2 || doc.Findings[0].Flag.Current != "math" || doc.Findings[0].Numbers["math_ns"] != 60 {
		t.Errorf("json %s %v", b.String(), err)
	}
	b.Reset()
	WriteFindings(&b, s, nil, Options{Format: "json"})
	if !strings.Contains(b.String(), `"findings": []`) {
		t.Errorf("no findings: %s", b.String())
	}
	if err := WriteFindings(&b, s, nil, Options{Format: "xml"}); err == nil {
		t.Error("xml: no error")
	}
}
