package tracer

import (
	"fmt"
	"sync"
	"testing"
)

// TestStringsFrozen: a Frozen copy holds the names interned before it,
// under the same IDs, and none interned after; it interns names of its
// own apart from the original's; and the original may intern while the
// copy is read in another goroutine (run with -race).
func TestStringsFrozen(t *testing.T) {
	tab := NewStrings()
	for i := range 100 {
		tab.Intern(fmt.Sprint("name", i))
	}
	f := tab.Frozen()
	// Each table's next name: the copy's must not land in the original's
	// spare room, nor the original's in the copy.
	if own, next := f.Intern("own"), tab.Intern("next"); own != 101 || next != 101 || f.Get(101) != "own" || tab.Get(101) != "next" {
		t.Fatalf("after one name each: copy %d %q, original %d %q", own, f.Get(101), next, tab.Get(101))
	}
	f = tab.Frozen()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 101; i < 5000; i++ {
			tab.Intern(fmt.Sprint("name", i))
		}
	}()
	for i := range 100 {
		if got := f.Get(StrID(i + 1)); got != fmt.Sprint("name", i) {
			t.Fatalf("frozen id %d is %q", i+1, got)
		}
	}
	wg.Wait()
	if f.Len() != 102 || f.Get(150) != "" {
		t.Fatalf("frozen copy has %d names, id 150 %q: it sees names interned after it", f.Len(), f.Get(150))
	}
	if id, ok := f.Lookup("name7"); !ok || id != 8 {
		t.Fatalf("Lookup(name7) = %d, %v", id, ok)
	}
}
