package envlist

import (
	"slices"
	"testing"
)

func TestLookupLastWins(t *testing.T) {
	env := []string{"A=1", "PATH=/bin", "A=2", "B=", "NOEQUALS"}
	for _, c := range []struct {
		key, want string
		ok        bool
	}{{"A", "2", true}, {"PATH", "/bin", true}, {"B", "", true}, {"NOEQUALS", "", false}, {"C", "", false}, {"PAT", "", false}} {
		if v, ok := Lookup(env, c.key); v != c.want || ok != c.ok {
			t.Errorf("Lookup(%q) = %q, %v; want %q, %v", c.key, v, ok, c.want, c.ok)
		}
	}
}

func TestUnsetAndSet(t *testing.T) {
	env := []string{"A=1", "B=2", "A=3", "C=4", "AB=5"}
	if got, want := Unset(slices.Clone(env), "A", "C"), []string{"B=2", "AB=5"}; !slices.Equal(got, want) {
		t.Errorf("Unset(A, C) = %q, want %q", got, want)
	}
	if got, want := Unset(slices.Clone(env)), env; !slices.Equal(got, want) {
		t.Errorf("Unset() = %q, want %q", got, want)
	}
	if got, want := Set(slices.Clone(env), "A", "x=y"), []string{"B=2", "C=4", "AB=5", "A=x=y"}; !slices.Equal(got, want) {
		t.Errorf("Set(A) = %q, want %q", got, want)
	}
	if got, want := Set(nil, "K", ""), []string{"K="}; !slices.Equal(got, want) {
		t.Errorf("Set on nil = %q, want %q", got, want)
	}
}
