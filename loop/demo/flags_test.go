package demo

import (
	"errors"
	"maps"
	"slices"
	"testing"

	"github.com/rlktop/rlktop/tracer/flagtab"
	"github.com/rlktop/rlktop/tracer/gotrace"
)

// TestFlagTable: the table names every Config flag once (Config.Flags'
// keys), every flag parses its default value back into the same text, the
// live flags are the eleven rlktop switched live before the table (the
// five backends, temperature, top_p, lr, weight_decay, adv_floor,
// value_coef: loop/live.go's old builtinLiveFlags, listed here by hand),
// Loop.Set takes a live flag and refuses every other one with
// ErrNeedsRestart, and the backends are the choice flags in panel order.
func TestFlagTable(t *testing.T) {
	def := DefaultConfig().Flags()
	var names []string
	for _, d := range FlagTable {
		names = append(names, d.Name)
	}
	if got, want := slices.Sorted(slices.Values(names)), slices.Sorted(maps.Keys(def)); !slices.Equal(got, want) {
		t.Fatalf("FlagTable names %v, Config.Flags keys %v", got, want)
	}
	live := map[string]bool{"attention": true, "qkv": true, "scan": true, "sampler": true, "head": true,
		"temperature": true, "top_p": true, "lr": true, "weight_decay": true, "adv_floor": true, "value_coef": true}
	cfg := DefaultConfig()
	cfg.Envs, cfg.Group, cfg.UpdateBatch = 8, 4, 8
	l, err := New(cfg, gotrace.New(1<<10))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range FlagTable {
		c := DefaultConfig()
		if err := c.ParseFlag(d.Name, def[d.Name]); err != nil || c.Flags()[d.Name] != def[d.Name] {
			t.Errorf("%s: parsing its default %q: %v, reads back %q", d.Name, def[d.Name], err, c.Flags()[d.Name])
		}
		if d.Live != live[d.Name] {
			t.Errorf("%s: Live %v, want %v", d.Name, d.Live, live[d.Name])
		}
		err := l.Set(d.Name, l.Flags()[d.Name])
		if d.Live && err != nil || !d.Live && !errors.Is(err, ErrNeedsRestart) {
			t.Errorf("Loop.Set(%s) = %v (live %v)", d.Name, err, d.Live)
		}
	}
	var backends []string
	for _, d := range FlagTable {
		if d.Kind == flagtab.Choice {
			backends = append(backends, d.Name)
		}
	}
	if want := []string{"attention", "qkv", "scan", "sampler", "head"}; !slices.Equal(backends, want) {
		t.Errorf("backend flags %v, want %v (the flags panel's digit keys 1–5)", backends, want)
	}
	if err := (&Config{}).ParseFlag("envs", "0"); !errors.Is(err, ErrBadValue) {
		t.Errorf("envs=0: %v, want ErrBadValue", err)
	}
	if err := (&Config{}).ParseFlag("seed", "-1"); !errors.Is(err, ErrBadValue) {
		t.Errorf("seed=-1: %v, want ErrBadValue", err)
	}
}
