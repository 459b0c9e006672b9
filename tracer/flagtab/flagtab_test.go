package flagtab

import (
	"slices"
	"testing"
)

// TestTable: Lookup, IsLive, Names and Panel on a hand-made table (two
// choice flags around a restart-only integer and a live float).
func TestTable(t *testing.T) {
	tab := Table{
		{Name: "a", Kind: Choice, Choices: []string{"x", "y"}, Live: true},
		{Name: "n", Kind: Int},
		{Name: "lr", Kind: Float, Live: true},
		{Name: "b", Kind: Choice, Choices: []string{"p", "q", "r"}},
	}
	if f, ok := tab.Lookup("lr"); !ok || f.Kind != Float {
		t.Errorf("Lookup(lr) = %+v, %v", f, ok)
	}
	if _, ok := tab.Lookup("zz"); ok {
		t.Error("Lookup(zz) found a flag")
	}
	for name, want := range map[string]bool{"a": true, "n": false, "lr": true, "b": false, "zz": false} {
		if got := tab.IsLive(name); got != want {
			t.Errorf("IsLive(%s) = %v, want %v", name, got, want)
		}
	}
	if got := tab.Names(); !slices.Equal(got, []string{"a", "n", "lr", "b"}) {
		t.Errorf("Names() = %v", got)
	}
	if got := tab.Panel().Names(); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("Panel() = %v, want [a b]", got)
	}
	if Table(nil).Panel() != nil {
		t.Error("the panel of no table is not nil")
	}
}
