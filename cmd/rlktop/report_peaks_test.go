package main

import (
	"encoding/csv"
	"encoding/json"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/internal/testutil"
)

// TestReportSourcesOwnPeaks: an H100 file and an MI300X file read
// together (whole and streamed). Each step's MFU is its FLOPs per dtype
// over that dtype's dense peak of its own file's GPU (the datasheet
// figures below, as devices.toml cites them), over the step's wall time;
// the files' rows mix two devices, so no row is read against a roof and
// the work summary names no device but says why; and both GPUs count as
// having run work, though the MI300X file lists its GPU as id 0 and puts
// its kernels on device 2.
func TestReportSourcesOwnPeaks(t *testing.T) {
	dir := filepath.Join(testutil.SharedTraces(t), "kineto")
	h100 := filepath.Join(dir, "tracelens_h100_qwen15_sdpa_flash.json.gz")
	mi300 := filepath.Join(dir, "tracelens_mi300_qwen15_aotriton.json.gz")
	// Dense TFLOP/s: NVIDIA H100 SXM datasheet (sparse figures halved);
	// AMD Instinct MI300X datasheet (matrix rates, dense).
	peaks := []map[string]float64{
		{"fp32": 67, "tf32": 494.7, "bf16": 989.4, "fp16": 989.4},
		{"fp32": 163.4, "tf32": 653.7, "bf16": 1307.4, "fp16": 1307.4},
	}
	wantMFU := map[int]float64{}
	for _, mode := range [][]string{{"--stream-min-bytes", "-1"}, {"--stream-min-bytes", "0"}} {
		var doc struct {
			Steps []struct {
				Source       int                `json:"source"`
				DurNs        int64              `json:"dur_ns"`
				MFU          *float64           `json:"mfu"`
				FlopsByDType map[string]float64 `json:"flops_by_dtype"`
			} `json:"steps"`
			Kernels []struct {
				Bound  string   `json:"bound"`
				OfPeak *float64 `json:"of_peak"`
			} `json:"kernels"`
			Sources []struct {
				PeakDevice string   `json:"peak_device"`
				MFU        *float64 `json:"mfu"`
			} `json:"sources"`
			Work struct {
				Device   string `json:"device"`
				PeakNote string `json:"peak_note"`
			} `json:"work"`
		}
		out := reportJSON(t, append(mode, h100, mi300)...)
		if err := json.Unmarshal(out, &doc); err != nil {
			t.Fatalf("%v: %v", mode, err)
		}
		if len(doc.Steps) != 2 {
			t.Fatalf("%v: %d steps, want one per file", mode, len(doc.Steps))
		}
		for _, st := range doc.Steps {
			var sec float64
			for dt, f := range st.FlopsByDType {
				if dt == "unknown" { // an operator's dtype not recorded: read at fp32's peak
					dt = "fp32"
				}
				p, ok := peaks[st.Source][dt]
				if !ok {
					t.Fatalf("%v: file %d step: FLOPs in %s, which this test has no peak for", mode, st.Source, dt)
				}
				sec += f / (p * 1e12)
			}
			want := sec / (float64(st.DurNs) / 1e9)
			wantMFU[st.Source] = want
			if st.MFU == nil || math.Abs(*st.MFU-want) > 1e-9*want {
				t.Errorf("%v: file %d step MFU %v: want %.6g (its FLOPs at its own GPU's peaks over %d ns)", mode, st.Source, st.MFU, want, st.DurNs)
			}
			if s := doc.Sources[st.Source]; s.MFU == nil || math.Abs(*s.MFU-want) > 1e-9*want {
				t.Errorf("%v: file %d's MFU %v: want its one step's %.6g", mode, st.Source, s.MFU, want)
			}
		}
		if doc.Sources[0].PeakDevice != "NVIDIA H100 SXM" || doc.Sources[1].PeakDevice != "AMD Instinct MI300X" {
			t.Errorf("%v: peak devices %q, %q", mode, doc.Sources[0].PeakDevice, doc.Sources[1].PeakDevice)
		}
		if doc.Work.Device != "" || !strings.Contains(doc.Work.PeakNote, "different devices") {
			t.Errorf("%v: work device %q, note %q: want none, and the note saying the files ran on different devices", mode, doc.Work.Device, doc.Work.PeakNote)
		}
		for _, k := range doc.Kernels {
			if k.Bound != "" || k.OfPeak != nil {
				t.Fatalf("%v: a kernel row mixing two devices is read against a roof: %s %v", mode, k.Bound, *k.OfPeak)
			}
		}
	}
	// The per-file table's mfu column: each file's own.
	csvOut, err := runReport(t, "--by", "file", "--format", "csv", h100, mi300)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(strings.NewReader(csvOut)).ReadAll()
	if err != nil || len(rows) != 3 || rows[0][len(rows[0])-1] != "mfu" {
		t.Fatalf("--by file csv: %v\n%s", err, csvOut)
	}
	for i, r := range rows[1:] {
		got, err := strconv.ParseFloat(r[len(r)-1], 64)
		if want := wantMFU[i]; err != nil || math.Abs(got-want) > 1e-9*want {
			t.Errorf("--by file: file %d mfu %q, want %.6g", i, r[len(r)-1], want)
		}
	}
	text, err := runReport(t, h100, mi300)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text, "without GPU work") || !strings.Contains(text, "AMD Instinct MI300X VF") {
		t.Errorf("header: want both GPUs as having run work:\n%s", text[:min(len(text), 600)])
	}
}
