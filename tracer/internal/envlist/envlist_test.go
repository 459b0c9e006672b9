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

func TestClone(t *testing.T) {
	env := []string{"A=1", "B=2"}
	c := Clone(env)
	c = Set(c, "A", "9")
	if want := []string{"A=1", "B=2"}; !slices.Equal(env, want) {
		t.Errorf("editing the clone changed the original: %q", env)
	}
	if want := []string{"B=2", "A=9"}; !slices.Equal(c, want) {
		t.Errorf("clone after Set = %q, want %q", c, want)
	}
	t.Setenv("RLKTOP_ENVLIST_TEST", "x")
	if v, ok := Lookup(Clone(nil), "RLKTOP_ENVLIST_TEST"); !ok || v != "x" {
		t.Errorf("Clone(nil) lacks the process environment: %q, %v", v, ok)
	}
	if c := Clone([]string{}); len(c) != 0 {
		t.Errorf("Clone of an empty, non-nil env = %q, want no entries (not os.Environ)", c)
	}
}
