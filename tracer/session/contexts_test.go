package session

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/wire"
	"github.com/rlktop/rlktop/tracer/wire/msg"
)

// TestRenewContexts runs a session long enough that its contexts (one per
// range and step) pass renewContextsAt several times, and checks that the
// linker keeps few while every number stays what the stream holds by
// construction: per step 5 ranges, range r holding 2 launches of kernel
// k_r of 1,500 ns, steps 1 ms apart, a window of 20 ms. The window built
// just after each renewal holds events linked before it.
func TestRenewContexts(t *testing.T) {
	const steps, ranges, perRange, dur = 14000, 5, 2, 1500
	var buf bytes.Buffer
	w := wire.NewWriter(&buf)
	w.Hello(&msg.Hello{Source: "test", PID: 1})
	var kern, rng [ranges]tracer.StrID
	for r := range ranges {
		kern[r] = w.Name(fmt.Sprintf("k_%d", r))
		rng[r] = w.Name(fmt.Sprintf("range_%d", r))
	}
	stepName := w.Name("step")
	for i := range steps {
		st := int64(i) * 1e6
		var batch []tracer.Event
		for r := range ranges {
			rs := st + int64(r)*150e3
			for k := range perRange {
				batch = append(batch, tracer.Event{Kind: tracer.KindKernel, Name: kern[r], Start: rs + 10e3 + int64(k)*50e3, Dur: dur, PID: 1, TID: 1})
			}
			batch = append(batch, tracer.Event{Kind: tracer.KindRange, Name: rng[r], Start: rs, Dur: 140e3, PID: 1, TID: 1, Device: -1})
		}
		batch = append(batch, tracer.Event{Kind: tracer.KindStep, Name: stepName, Start: st, Dur: 900e3, Value: int64(i), PID: 1, TID: 1, Device: -1})
		w.Events(batch)
	}
	w.Flush()

	s := New(Options{RecentNs: 20e6})
	defer s.Close()
	c := &conn{s: s}
	d := wire.NewDecoder(bytes.NewReader(buf.Bytes()))
	most, seen := 0, 0
	var afterRenewal []*attrib.Snapshot // windows built just after a renewal
	for {
		if err := d.Next(c); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		s.mu.Lock()
		most = max(most, len(s.link.core.Contexts))
		renewed := s.renewals > seen
		seen = s.renewals
		s.recent.stale = renewed // rebuild the window now: its events were remapped
		s.mu.Unlock()
		if renewed {
			afterRenewal = append(afterRenewal, s.Snapshot().Recent)
		}
	}
	s.mu.Lock()
	s.link.flush(0)
	renewals := s.renewals
	s.recent.stale = true
	s.mu.Unlock()

	// Without renewal the linker would hold 5 contexts a step, 70,001.
	if most > renewContextsAt+ranges || renewals < 2 {
		t.Fatalf("contexts: at most %d held (bound %d), %d renewals (want >= 2 of %d contexts)", most, renewContextsAt+ranges, renewals, steps*ranges+1)
	}

	st := s.Snapshot()
	checkRows := func(what string, snap *attrib.Snapshot, launches int64) {
		t.Helper()
		if snap == nil {
			t.Fatalf("%s: no snapshot", what)
		}
		seen := 0
		for _, row := range snap.Kernels {
			var r int
			if _, err := fmt.Sscanf(row.Name, "k_%d", &r); err != nil {
				t.Fatalf("%s: row %q", what, row.Name)
			}
			seen++
			want := fmt.Sprintf("range_%d", r)
			if l := row.Launches; l == nil || len(l.Stages) != 1 || l.Stages[0].Key != want || len(l.Contexts) != 1 || l.Contexts[0].Key != want {
				t.Fatalf("%s: %s launched in stages %+v, contexts %+v; want only %s", what, row.Name, l.Stages, l.Contexts, want)
			}
			if launches > 0 && (row.Count != launches || row.Launches.Stages[0].Count != launches || row.TotalNs != launches*dur) {
				t.Fatalf("%s: %s: %d launches, %d ns; want %d, %d", what, row.Name, row.Count, row.TotalNs, launches, launches*dur)
			}
		}
		if seen != ranges {
			t.Fatalf("%s: %d kernel rows, want %d", what, seen, ranges)
		}
	}
	checkRows("whole run", st.Cumulative, steps*perRange)
	checkRows("window", st.Recent, 0)
	for i, w := range afterRenewal {
		checkRows(fmt.Sprintf("window after renewal %d", i+1), w, 0)
	}
	if n := len(st.Cumulative.Steps); n != steps {
		t.Fatalf("%d step rows, want %d", n, steps)
	}
	for _, row := range st.Cumulative.Steps {
		if row.Count != ranges*perRange || row.KernelNs != ranges*perRange*dur {
			t.Fatalf("step %d: %d GPU ops, %d ns; want %d, %d", row.Step, row.Count, row.KernelNs, ranges*perRange, ranges*perRange*dur)
		}
	}
	// The window's newest step is whole: the 20 ms window holds the last
	// 20 steps, the oldest in part.
	last := st.Recent.Steps[len(st.Recent.Steps)-1]
	if last.Step != steps-1 || last.Count != ranges*perRange {
		t.Fatalf("window's newest step %+v, want step %d with %d GPU ops", last, steps-1, ranges*perRange)
	}
}
