package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/rlktop/rlktop/report"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/livestate"
)

func TestCompareArmsFromFlagsAndPresets(t *testing.T) {
	arms, err := compareArms(&compareFlags{preset: "fused-attention", flags: []string{"envs=8"}}, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(arms) != 2 || arms[0].Flags["attention"] != "math" || arms[1].Flags["attention"] != "fused" || arms[1].Flags["envs"] != "8" {
		t.Fatalf("arms %+v", arms)
	}
	arms, err = compareArms(&compareFlags{preset: "fused-attention"}, false)
	if err != nil || len(arms) != 2 || arms[1].Flags["TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL"] != "1" {
		t.Fatalf("command arms %+v, %v", arms, err)
	}
	for _, c := range []struct {
		cf   compareFlags
		want string
	}{
		{compareFlags{}, "nothing to compare"},
		{compareFlags{preset: "nope"}, `unknown preset "nope"`},
		{compareFlags{preset: "fused-qkv"}, "no flags for a command"},
		{compareFlags{flags: []string{"attention"}}, "KEY=VALUE"},
	} {
		builtin := c.cf.preset != "fused-qkv"
		if _, err := compareArms(&c.cf, builtin); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err %v, want %q", c.cf, err, c.want)
		}
	}
}

// fakeResult is a hand-made comparison for the writers.
func fakeResult() *livestate.CompareResult {
	arms := []attrib.ArmStats{
		{Name: "attention=math", Flags: map[string]string{"attention": "math"}, Valid: true, Steps: 20, MedianNs: 900e6, P10Ns: 600e6, P90Ns: 3e9},
		{Name: "attention=fused", Flags: map[string]string{"attention": "fused"}, Valid: true, Steps: 20, MedianNs: 800e6, P10Ns: 500e6, P90Ns: 2.8e9},
	}
	rows := []attrib.RowComparison{{Group: "kernel", Key: "attn_math_qk", ANs: 5e6, Verdict: attrib.VerdictGone},
		{Group: "category", Key: "attention", ANs: 40e6, BNs: 30e6, DeltaNs: -10e6, Ratio: 0.75, CILow: 0.7, CIHigh: 0.8, Verdict: attrib.VerdictFaster}}
	return &livestate.CompareResult{Arms: arms, Ratio: attrib.Ratio{Value: 0.889, CILow: 0.8, CIHigh: 0.95}, Verdict: attrib.VerdictFaster,
		Noise: &attrib.Noise{Ratio: 1.01, CILow: 0.97, CIHigh: 1.05}, Rows: rows, Mode: "live",
		Consistency: []livestate.ArmConsistency{{Arm: "attention=math", Len: 752, Bitwise: true}, {Arm: "attention=fused", Len: 752, MaxAbs: 1.79e-6, MaxULP: 850}},
		Schedule:    []livestate.StepLabel{{Step: 0, Arm: "attention=math", Phase: livestate.PhaseWarmup}, {Step: 1, Arm: "attention=math", Phase: livestate.PhaseCounted}},
		Notes:       []string{"a note"}}
}

// TestCompareJSONShape checks the JSON keys of compare's contract.
func TestCompareJSONShape(t *testing.T) {
	var b bytes.Buffer
	if err := report.WriteCompareResult(&b, fakeResult(), report.Options{Format: "json", Top: -1}); err != nil {
		t.Fatal(err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	keys := func(raw json.RawMessage) map[string]bool {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		out := map[string]bool{}
		for k := range m {
			out[k] = true
		}
		return out
	}
	need := func(what string, have map[string]bool, want ...string) {
		for _, k := range want {
			if !have[k] {
				t.Errorf("%s lacks %q (has %v)", what, k, have)
			}
		}
	}
	need("document", keys(b.Bytes()), "arms", "ratio", "verdict", "noise", "rows", "consistency", "schedule", "mode")
	var arms []json.RawMessage
	json.Unmarshal(doc["arms"], &arms)
	need("arm", keys(arms[0]), "name", "flags", "valid", "steps", "median_ns", "p10_ns", "p90_ns")
	need("ratio", keys(doc["ratio"]), "value", "ci_low", "ci_high")
	need("noise", keys(doc["noise"]), "ratio", "ci_low", "ci_high")
	var cons []json.RawMessage
	json.Unmarshal(doc["consistency"], &cons)
	need("consistency", keys(cons[0]), "arm", "max_abs", "max_ulp", "nan", "bitwise")
}

func TestCompareTextFormats(t *testing.T) {
	for _, f := range []string{"table", "md"} {
		var b bytes.Buffer
		if err := report.WriteCompareResult(&b, fakeResult(), report.Options{Format: f, Top: -1}); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for _, want := range []string{"attention=fused", "0.889 [0.800, 0.950]", "FASTER", "0.750 [0.700, 0.800]", "1.79e-06", "850", "a note"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s output lacks %q:\n%s", f, want, out)
			}
		}
		// Arms first, then rows, then consistency.
		ia, ir, ic := strings.Index(out, "900 ms"), strings.Index(out, "0.750 [0.700, 0.800]"), strings.Index(out, "850")
		if !(ia >= 0 && ia < ir && ir < ic) {
			t.Errorf("%s: order arms %d, rows %d, consistency %d", f, ia, ir, ic)
		}
	}
}

// TestCompareInvalidArmExitStatus: a command that fails makes its arms
// invalid; the JSON still comes out and the exit status is 3.
func TestCompareInvalidArmExitStatus(t *testing.T) {
	cf := compareFlags{flags: []string{"RLKTOP_TEST_X=1,2"}, steps: 2, format: "json", top: -1, untraced: true, noNoise: true}
	var stdout, stderr bytes.Buffer
	c := &cobra.Command{}
	c.SetOut(&stdout)
	c.SetErr(&stderr)
	err := runCompare(c, &cf, []string{"/bin/sh", "-c", "echo boom >&2; exit 3"})
	var ee exitError
	if !errors.As(err, &ee) || ee.code != exitInvalidArm {
		t.Fatalf("err %v, want exit status %d; stderr:\n%s", err, exitInvalidArm, stderr.String())
	}
	var res livestate.CompareResult
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("%v\n%s", err, stdout.String())
	}
	if len(res.Arms) != 2 || res.Arms[0].Valid || res.Arms[1].Valid || res.Verdict != attrib.VerdictInvalid {
		t.Errorf("arms %+v verdict %q", res.Arms, res.Verdict)
	}
	if !strings.Contains(stderr.String(), "arm RLKTOP_TEST_X=1 is invalid") || !strings.Contains(stderr.String(), "status 3") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
}
