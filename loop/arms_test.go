package loop

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/tracer/livestate"
)

func TestArmsProduct(t *testing.T) {
	a, _ := ParseFlagSpec("attention=math,fused")
	b, _ := ParseFlagSpec("qkv=separate,fused")
	c, _ := ParseFlagSpec("envs=64")
	arms, err := Arms([]livestate.FlagSpec{a, b, c})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, x := range arms {
		names = append(names, x.Name)
		if x.Flags["envs"] != "64" {
			t.Fatalf("fixed flag missing in %v", x)
		}
	}
	want := []string{
		"attention=math,qkv=separate", "attention=math,qkv=fused",
		"attention=fused,qkv=separate", "attention=fused,qkv=fused",
	}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("names = %v, want %v", names, want)
	}
}

func TestParseFlagSpecErrors(t *testing.T) {
	for _, s := range []string{"attention", "=x", "a=", "a=x,,y"} {
		if _, err := ParseFlagSpec(s); err == nil {
			t.Errorf("%q: no error", s)
		}
	}
	a, _ := ParseFlagSpec("k=1,2")
	if _, err := Arms([]livestate.FlagSpec{a, a}); err == nil || !strings.Contains(err.Error(), "given twice") {
		t.Fatalf("duplicate key: %v", err)
	}
}

func TestPresets(t *testing.T) {
	p, err := Presets("")
	if err != nil {
		t.Fatal(err)
	}
	fa := p["fused-attention"]
	if got := fa.Specs(false); len(got) != 1 || got[0].Key != "TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL" || !reflect.DeepEqual(got[0].Values, []string{"0", "1"}) {
		t.Fatalf("command specs = %v", got)
	}
	if got := fa.Specs(true); len(got) != 1 || got[0].Key != "attention" || !reflect.DeepEqual(got[0].Values, []string{"math", "fused"}) {
		t.Fatalf("builtin specs = %v", got)
	}
	path := filepath.Join(t.TempDir(), "p.toml")
	os.WriteFile(path, []byte("[preset.mine]\ncommand = { FOO = [\"a\", \"b\"] }\n"), 0o644)
	p, err = Presets(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p["mine"]; !ok {
		t.Fatal("user preset missing")
	}
	if _, ok := p["fused-attention"]; !ok {
		t.Fatal("built-in preset lost")
	}
	os.WriteFile(path, []byte("[preset.bad]\nenv = 1\n"), 0o644)
	if _, err := Presets(path); err == nil || !strings.Contains(err.Error(), "unknown key") {
		t.Fatalf("bad file: %v", err)
	}
}

func TestInterleave(t *testing.T) {
	segs := Interleave(2, 5, 2, 1, true)
	// 5 steps in blocks of 2: rounds of 2, 2, 1; each round A B A′, reversed on odd rounds.
	want := []Segment{
		{0, 1, 2}, {1, 1, 2}, {NoiseArm, 1, 2},
		{NoiseArm, 1, 2}, {1, 1, 2}, {0, 1, 2},
		{0, 1, 1}, {1, 1, 1}, {NoiseArm, 1, 1},
	}
	if !reflect.DeepEqual(segs, want) {
		t.Fatalf("segs = %v\nwant %v", segs, want)
	}
	count := map[int]int{}
	for _, s := range segs {
		count[s.Arm] += s.Count
	}
	if count[0] != 5 || count[1] != 5 || count[NoiseArm] != 5 {
		t.Fatalf("counted steps = %v", count)
	}
}
