package session

// Connections: serving the children's streams (each connection is the
// wire.Sink of its stream) and sending them control frames. The state they
// feed (aggregates, window, steps, snapshots) is in session.go.

import (
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/livestate"
	"github.com/rlktop/rlktop/tracer/wire"
	"github.com/rlktop/rlktop/tracer/wire/msg"
)

// Listen starts a Unix-socket server (wire.Listen) and serves it; the
// returned address goes to the child in RLKTOP_SOCKET.
func (s *Session) Listen() (addr string, err error) {
	srv, addr, err := wire.Listen()
	if err != nil {
		return "", err
	}
	s.Serve(srv)
	return addr, nil
}

// ListenTCP is Listen on TCP (wire.ListenTCP): for ranks on other hosts.
// The address holds the token the children must present.
func (s *Session) ListenTCP(hostport string) (addr string, err error) {
	srv, addr, err := wire.ListenTCP(hostport)
	if err != nil {
		return "", err
	}
	s.Serve(srv)
	return addr, nil
}

// Serve accepts connections from srv in a goroutine until Close. The
// session closes srv when it closes.
func (s *Session) Serve(srv *wire.Server) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		srv.Close()
		return
	}
	s.servers = append(s.servers, srv)
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		for {
			c, err := srv.Accept()
			if err != nil {
				return
			}
			s.AddConn(c)
		}
	}()
}

// conn is one child connection. It is the wire.Sink of its stream: the
// serving goroutine decodes each frame outside the session lock, and each
// method takes the lock for what it changes.
type conn struct {
	s      *Session
	rw     io.ReadWriteCloser
	wmu    sync.Mutex
	w      *wire.Writer
	info   livestate.Child
	pid    int32
	hellos int
	// names defined so far and their bytes (Options.MaxNamesPerConn)
	nNames     int
	nNameBytes int64
}

// AddConn serves one connection (a child's socket, or any stream of wire
// frames, e.g. a pipe in tests) in a goroutine until it ends. After Close
// it just closes rw.
func (s *Session) AddConn(rw io.ReadWriteCloser) {
	c := &conn{s: s, rw: rw, w: wire.NewWriter(rw)}
	c.info.Tracing = true
	c.info.Connected = true
	c.info.Hello.Rank = -1
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		rw.Close()
		return
	}
	if s.connected >= s.opts.MaxConns {
		if !s.connsFull {
			s.connsFull = true
			s.warn(fmt.Sprintf("more than %d traced processes connected at once: further connections are refused (raise it with --max-conns)", s.opts.MaxConns))
		}
		s.mu.Unlock()
		rw.Close()
		return
	}
	s.connected++
	s.children = append(s.children, c)
	s.version++
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		err := c.serve()
		s.mu.Lock()
		c.info.Connected = false
		s.connected--
		// The child's last events are in: the next Snapshot rebuilds the
		// window at once instead of returning one up to 200 ms old.
		s.recent.stale = true
		if err != nil {
			c.info.Err = err.Error()
			s.warn(fmt.Sprintf("child pid %d: %v", c.info.Hello.PID, err))
		}
		if c.hellos > 1 {
			s.link.flush(0) // a replayed recording: several processes
			s.releaseWork(0)
		} else {
			s.link.flush(c.pid)
			s.releaseWork(c.pid)
		}
		if c.hellos > 1 {
			s.resolveMemory(-1, true) // memory.go
		} else {
			s.resolveMemory(c.pid, true)
		}
		s.version++
		s.mu.Unlock()
		rw.Close()
	}()
}

// serve decodes the connection's frames into c until the stream ends; a
// clean end (EOF, or the connection closed by Close) is nil.
func (c *conn) serve() error {
	d := wire.NewDecoder(c.rw)
	for {
		if err := d.Next(c); err != nil {
			if err == io.EOF || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
	}
}

// The wire.Sink methods: each runs with the frame decoded, takes s.mu for
// what it changes and bumps the version.

func (c *conn) Hello(h *msg.Hello, _ bool) error {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	c.info.Hello = *h
	c.pid = int32(h.PID)
	c.hellos++
	s.recent.stale = true // the window names the hellos' devices
	if s.rec != nil {
		s.rec.hello(h)
	}
	s.version++
	return nil
}

func (c *conn) Intern(b []byte) (tracer.StrID, error) {
	s := c.s
	c.nNames++
	c.nNameBytes += int64(len(b))
	if c.nNames > s.opts.MaxNamesPerConn || c.nNameBytes > s.opts.MaxNameBytesPerConn {
		return 0, fmt.Errorf("the connection defined more than %d names or %d bytes of them, the session's limit (raise it with --max-names-per-conn, --max-name-bytes-per-conn); closed", s.opts.MaxNamesPerConn, s.opts.MaxNameBytesPerConn)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.version++
	return s.strs.InternBytes(b), nil
}

// Events links and aggregates a batch (names and times already the
// session's).
func (c *conn) Events(evs []tracer.Event, undefined int) error {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	c.info.Undefined += uint64(undefined)
	s.ingest(c, evs)
	return nil
}

func (c *conn) Counters(cs []tracer.Counter, _ int) error {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	s.addCounters(cs)
	s.version++
	return nil
}

func (c *conn) Drops(d msg.Drops) error {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	c.info.Drops = d
	if s.rec != nil {
		s.rec.drops(s.droppedLocked())
	}
	s.version++
	return nil
}

func (c *conn) Control(ct *msg.Control) error {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if ct.Op == msg.ControlAck {
		s.ack(c, ct)
	}
	if s.rec != nil {
		s.rec.control(ct)
	}
	s.version++
	return nil
}

func (c *conn) Meta(kv []msg.KV) error {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range kv {
		// The Python agent's warnings (a window it could not write, a
		// refused flag name): said with the session's own.
		if e.Key == AgentWarningKey {
			s.warnOnce(fmt.Sprintf("child pid %d: %s", c.info.Hello.PID, e.Value))
		}
	}
	if len(c.info.Meta) < 1000 {
		c.info.Meta = append(c.info.Meta, kv...)
	}
	if s.rec != nil {
		s.rec.meta(kv)
	}
	s.version++
	return nil
}

// TraceFile imports a torch.profiler window the child wrote, in a
// goroutine (importTraceFile).
func (c *conn) TraceFile(tf wire.TraceFile) error {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	s.wg.Add(1)
	go s.importTraceFile(c, tf)
	s.version++
	return nil
}

func (c *conn) Bye(y msg.Bye) error {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	c.info.Bye = &y
	s.version++
	return nil
}

func (s *Session) ack(c *conn, ct *msg.Control) {
	c.info.Flags = slices.Clone(ct.Flags)
	c.info.Tracing = ct.Tracing
	cmd, ok := s.sent[ct.Seq]
	if !ok || ct.Err != "" {
		if ct.Err != "" {
			rf := livestate.Refusal{Seq: cmd.Seq, PID: c.info.Hello.PID, Op: cmd.Op, Key: cmd.Key, Value: cmd.Value,
				Err: ct.Err, AtNs: s.opts.Now().UnixNano()}
			s.refusals = append(s.refusals, rf)
			s.warn(rf.String())
		}
		return
	}
	if cmd.Op == msg.ControlSet {
		s.marks = append(s.marks, livestate.Mark{Step: ct.Step, PID: c.info.Hello.PID, Key: cmd.Key, Value: cmd.Value, AtNs: s.opts.Now().UnixNano(), Seq: cmd.Seq})
	}
}

// Control sends "set flag key=value" to every connected child and returns
// the command's sequence number; acks update each Child's Flags and add a
// Mark. A child that cannot take the frame within 1 s is skipped and the
// error returned.
func (s *Session) Control(key, value string) (uint64, error) {
	return s.send(msg.Control{Op: msg.ControlSet, Key: key, Value: value, Step: -1})
}

// PauseTracing asks every child to stop tracing (the loop keeps running).
func (s *Session) PauseTracing() (uint64, error) {
	return s.send(msg.Control{Op: msg.ControlPause, Step: -1})
}

// ResumeTracing asks every child to trace again.
func (s *Session) ResumeTracing() (uint64, error) {
	return s.send(msg.Control{Op: msg.ControlResume, Step: -1})
}

// StopChildren asks every child to stop its loop cleanly.
func (s *Session) StopChildren() (uint64, error) {
	return s.send(msg.Control{Op: msg.ControlStop, Step: -1})
}

// DetachChildren asks every connected Python agent to leave its process
// (msg.ControlDetach: rlktop attach's agents undo what they installed
// and close their connection; the processes run on). Wait then sees the
// connections end.
func (s *Session) DetachChildren() (uint64, error) {
	return s.send(msg.Control{Op: msg.ControlDetach, Step: -1})
}

func (s *Session) send(ct msg.Control) (uint64, error) {
	seqs, err := s.sendAll([]msg.Control{ct})
	return seqs[0], err
}

// SetFlags asks the children to set every key of kv at their next step
// boundary, written together so that they take effect at the same
// boundary (a comparison's switch between arms); it returns the control
// sequence numbers in kv's order. Errors name the children that could
// not be written to.
func (s *Session) SetFlags(kv []msg.KV) ([]uint64, error) {
	cs := make([]msg.Control, len(kv))
	for i, p := range kv {
		cs[i] = msg.Control{Op: msg.ControlSet, Key: p.Key, Value: p.Value}
	}
	return s.sendAll(cs)
}

func (s *Session) sendAll(cts []msg.Control) ([]uint64, error) {
	s.mu.Lock()
	seqs := make([]uint64, len(cts))
	for i := range cts {
		s.seq++
		cts[i].Seq = s.seq
		seqs[i] = s.seq
		s.sent[s.seq] = cts[i]
	}
	set := cts[0].Op == msg.ControlSet
	detach := cts[0].Op == msg.ControlDetach
	type target struct {
		c   *conn
		pid int64
	}
	var targets []target
	for _, c := range s.children {
		if !c.info.Connected {
			continue
		}
		// The injected GPU tracers cannot set flags inside a program (the
		// process's Python agent, or gotrace in the built-in loop, does).
		if set && (c.info.Hello.Source == "cupti" || c.info.Hello.Source == "rocprof") {
			continue
		}
		// The Python agent and the GPU tracers' libraries (loaded by an
		// attached agent) detach; the built-in loop's tracer knows no such op.
		if detach && !slices.Contains([]string{"pyagent", "cupti", "rocprof"}, c.info.Hello.Source) {
			continue
		}
		targets = append(targets, target{c, c.info.Hello.PID})
	}
	s.mu.Unlock()
	var errs []error
	for _, t := range targets {
		c := t.c
		c.wmu.Lock()
		if d, ok := c.rw.(interface{ SetWriteDeadline(time.Time) error }); ok {
			d.SetWriteDeadline(time.Now().Add(time.Second))
		}
		err := c.w.Controls(cts)
		c.wmu.Unlock()
		if err != nil {
			errs = append(errs, fmt.Errorf("child pid %d: %w", t.pid, err))
		}
	}
	return seqs, errors.Join(errs...)
}

// Children returns every connection's state so far, oldest first (as in
// State.Children), without building a snapshot: cheap enough to poll.
func (s *Session) Children() []livestate.Child {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]livestate.Child, 0, len(s.children))
	for _, c := range s.children {
		ci := c.info
		ci.Flags, ci.Meta = slices.Clone(ci.Flags), slices.Clone(ci.Meta)
		if ci.Bye != nil {
			y := *ci.Bye
			ci.Bye = &y
		}
		out = append(out, ci)
	}
	return out
}

// Wait blocks until every connection added so far has ended, or timeout
// passes; it reports whether they all ended. Then their GPU events have
// been linked with everything they sent.
func (s *Session) Wait(timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		s.mu.Lock()
		open := 0
		for _, c := range s.children {
			if c.info.Connected {
				open++
			}
		}
		s.mu.Unlock()
		if open == 0 {
			return true
		}
		time.Sleep(5 * time.Millisecond)
	}
	return false
}
