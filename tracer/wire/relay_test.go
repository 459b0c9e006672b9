package wire

import (
	"io"
	"net"
	"testing"
	"time"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/wire/msg"
)

// Two batches from a tracer whose table is ["", "a", "b", "c"]: the first
// defines a and b and holds 5 events, the second defines c and holds 3 (one
// naming an id never defined). The receiver, mapping through its own
// table, sees the names a b a b a | c a "" (the sender may pack the chunks
// into fewer frames).
func TestRelay(t *testing.T) {
	client, server := net.Pipe()
	s := NewAsyncSender(client, 1<<10)
	s.Hello(&msg.Hello{Source: "test"})
	r := NewRelay(s, 2)
	if r.Known() != 1 {
		t.Fatalf("Known() = %d before any name, want 1", r.Known())
	}
	b1 := []tracer.Event{{Name: 1}, {Name: 2}, {Name: 1}, {Name: 2}, {Name: 1}}
	r.Send([]string{"a", "b"}, b1)
	b2 := []tracer.Event{{Name: 3}, {Name: 1}, {Name: 9}}
	r.Send([]string{"c"}, b2)
	if r.Known() != 4 {
		t.Fatalf("Known() = %d, want 4", r.Known())
	}
	strs := tracer.NewStrings()
	names := NewNames(strs)
	var got []string
	frames := 0
	done := make(chan error, 1)
	go func() {
		rd := NewReader(server)
		var evs []tracer.Event
		for {
			f, err := rd.Next()
			if err == io.EOF {
				done <- nil
				return
			}
			if err != nil {
				done <- err
				return
			}
			switch f.Type {
			case TypeStrings:
				if err := f.Strings(func(id uint32, b []byte) error { names.Define(id, b); return nil }); err != nil {
					done <- err
					return
				}
			case TypeEvents:
				frames++
				if evs, err = f.Events(evs[:0]); err != nil {
					done <- err
					return
				}
				names.MapEvents(evs)
				for _, e := range evs {
					got = append(got, strs.Get(e.Name))
				}
			}
		}
	}()
	if err := s.Close(msg.Bye{}, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	want := []string{"a", "b", "a", "b", "a", "c", "a", ""}
	if len(got) != len(want) || frames == 0 {
		t.Fatalf("got %q in %d frames, want %q", got, frames, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
}
