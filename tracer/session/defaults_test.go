package session

import (
	"net"
	"strings"
	"testing"
)

// SetDefaultLimits (what --max-conns, --max-names-per-conn and
// --max-name-bytes-per-conn call) sets the limits of a session whose
// Options leave them at 0; an Options field above 0 still wins.
func TestSetDefaultLimits(t *testing.T) {
	t.Cleanup(func() { setLimits.Store(nil) })
	SetDefaultLimits(Limits{MaxConns: 2, MaxNamesPerConn: 7, MaxNameBytesPerConn: 1000})
	sess := New(Options{})
	if o := sess.opts; o.MaxConns != 2 || o.MaxNamesPerConn != 7 || o.MaxNameBytesPerConn != 1000 {
		t.Errorf("options %d %d %d, want 2 7 1000", o.MaxConns, o.MaxNamesPerConn, o.MaxNameBytesPerConn)
	}
	// The limit acts: a third connection is refused with a warning
	// naming the flag.
	for range 3 {
		a, b := net.Pipe()
		defer b.Close()
		sess.AddConn(a)
	}
	st := sess.Snapshot()
	if len(st.Children) != 2 || len(st.Warnings) != 1 || !strings.Contains(st.Warnings[0], "more than 2 traced processes") || !strings.Contains(st.Warnings[0], "--max-conns") {
		t.Errorf("%d children, warnings %q", len(st.Children), st.Warnings)
	}
	sess.Close()
	s5 := New(Options{MaxConns: 5})
	defer s5.Close()
	if o := s5.opts; o.MaxConns != 5 || o.MaxNamesPerConn != 7 {
		t.Errorf("Options.MaxConns 5: got %d, %d", o.MaxConns, o.MaxNamesPerConn)
	}
	setLimits.Store(nil)
	s0 := New(Options{})
	defer s0.Close()
	if o := s0.opts; o.MaxConns != 1024 || o.MaxNamesPerConn != 1<<20 || o.MaxNameBytesPerConn != 64<<20 {
		t.Errorf("built-in defaults: %d %d %d", o.MaxConns, o.MaxNamesPerConn, o.MaxNameBytesPerConn)
	}
}
