package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/gotrace"
	"github.com/rlktop/rlktop/tracer/wire"
	"github.com/rlktop/rlktop/tracer/wire/msg"
)

// ChildOptions configures RunChild.
type ChildOptions struct {
	// Steps stops the loop after that many steps; 0 runs until ctx ends or
	// rlktop sends Stop.
	Steps int64
	// Conn is the connection to rlktop. Nil: dial $RLKTOP_SOCKET
	// (wire.DialEnv); when that is unset the loop runs untraced.
	Conn io.ReadWriter
	// Log, when set, receives one progress line every LogEvery steps (the
	// supervisor keeps the child's stderr tail for crash reports).
	Log      io.Writer
	LogEvery int64
	// RingEvents is the gotrace ring size (0: gotrace.DefaultCapacity).
	RingEvents int
}

// ParseFlags applies "key=value" strings (as given to --flag) to cfg with
// Config.ParseFlag; the error names the offending entry.
func ParseFlags(cfg *Config, kvs []string) error {
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("demo: flag %q: %w: want key=value", kv, ErrBadValue)
		}
		if err := cfg.ParseFlag(strings.TrimSpace(k), strings.TrimSpace(v)); err != nil {
			return err
		}
	}
	return nil
}

// RunChild is the body of the traced child process that runs the built-in
// loop: it connects to rlktop, sends the hello (pid, host, the CPU device,
// the gotrace clock offset) and the flags as meta, then steps the loop.
// The wire sender's writer drains the gotrace ring (which never blocks: a
// slow rlktop costs dropped, counted events); after every step, in the
// loop's goroutine, the child wakes it and applies the control frames
// that arrived: set (at the next step boundary, acknowledged with the step
// it takes effect at and every flag in force), pause / resume tracing,
// stop. It returns nil after
// Steps steps, a Stop, or ctx's end, each ending the stream with a Bye; a
// loop error is returned after a Bye carrying it.
func RunChild(ctx context.Context, cfg Config, o ChildOptions) error {
	conn := o.Conn
	if conn == nil {
		c, err := wire.DialEnv(5 * time.Second)
		switch {
		case errors.Is(err, wire.ErrNoSocket):
		case err != nil:
			return err
		default:
			conn = c
		}
	}
	// One ring between the loop and the socket: gotrace's, which the
	// sender's writer drains, its names the stream's ids (NameWith).
	tr := gotrace.New(o.RingEvents)
	tr.SetThread(int32(os.Getpid()), gotrace.DefaultTID)
	var s *wire.AsyncSender
	if conn == nil {
		tr.Enable(false)
	} else {
		s = wire.NewAsyncSender(conn, senderCapacity)
		host, _ := os.Hostname()
		s.Hello(&msg.Hello{
			Source: "gotrace", PID: int64(os.Getpid()), Rank: -1, Host: host,
			Device:        fmt.Sprintf("cpu: %d cores (Go demo loop)", runtime.NumCPU()),
			ClockOffsetNs: tr.ClockOffset(), StartNs: time.Now().UnixNano(),
			Cmdline: os.Args, Devices: []tracer.Device{tr.Device()},
		})
		if err := tr.NameWith(s); err != nil {
			return err
		}
		s.AttachEvents(tr)
	}
	l, err := New(cfg, tr)
	if err != nil {
		if s != nil {
			_ = s.Close(msg.Bye{Reason: "error: " + err.Error(), ExitCode: 1}, 2*time.Second)
		}
		return err
	}
	if s != nil {
		s.Meta(flagKVs("flag.", l.Flags()))
		// An unsolicited ack (sequence 0) tells rlktop every flag in force
		// before any step, defaults included.
		s.Ack(&msg.Control{Op: msg.ControlAck, Flags: flagKVs("", l.Flags()), Tracing: true, Step: 0})
	}
	var reportedDrops uint64
	pump := func() {
		if s == nil {
			tr.Drain(func([]tracer.Event) {})
			return
		}
		s.Notify() // the writer drains the ring
		s.Memory(tr.TakeMemory())
		// gotrace's own drops (ring full) join the sender's in Drops frames.
		if d := tr.Dropped(); d > reportedDrops {
			s.AddDropped(d - reportedDrops)
			reportedDrops = d
		}
	}
	bye := func(reason string, code int64) {
		pump()
		if s != nil {
			if d := tr.Dropped(); d > 0 {
				s.Meta([]msg.KV{{Key: "gotrace.dropped_events", Value: fmt.Sprint(d)}})
			}
			_ = s.Close(msg.Bye{Reason: reason, ExitCode: code}, 2*time.Second)
		}
	}
	var controls <-chan msg.Control
	if s != nil {
		controls = s.Controls()
	}
	lastUpd, lastPL, lastVL := int64(-1), float32(0), float32(0) // the latest update's losses
	for step := int64(0); o.Steps == 0 || step < o.Steps; step++ {
		select {
		case <-ctx.Done():
			bye("stop", 0)
			return nil
		default:
		}
		st, err := l.Step()
		if err != nil {
			bye("error: "+err.Error(), 1)
			return err
		}
		if st.Updated {
			lastUpd, lastPL, lastVL = st.Step, st.PolicyLoss, st.ValueLoss
		}
		if o.Log != nil && o.LogEvery > 0 && st.Step%o.LogEvery == 0 {
			fmt.Fprintln(o.Log, logLine(st, lastUpd, lastPL, lastVL))
		}
		pump()
		for stop := false; controls != nil && !stop; {
			select {
			case c, ok := <-controls:
				if !ok {
					// rlktop is gone (closed, killed): the built-in loop is
					// rlktop's own child and exists only to be watched, so it
					// ends too (a user's command runs on; see loop.Supervisor).
					bye("rlktop closed the connection", 0)
					return nil
				}
				ack := msg.Control{Op: msg.ControlAck, Seq: c.Seq, Step: st.Step + 1}
				switch c.Op {
				case msg.ControlSet:
					if err := l.Set(c.Key, c.Value); err != nil {
						ack.Err = err.Error()
					}
				case msg.ControlPause:
					tr.Enable(false)
				case msg.ControlResume:
					tr.Enable(true)
				case msg.ControlStop:
					ack.Flags, ack.Tracing = flagKVs("", l.Flags()), tr.Enabled()
					s.Ack(&ack)
					bye("stop", 0)
					return nil
				default:
					ack.Err = fmt.Sprintf("unsupported control op %v", c.Op)
				}
				ack.Flags, ack.Tracing = flagKVs("", l.Flags()), tr.Enabled()
				s.Ack(&ack)
			default:
				stop = true
			}
		}
	}
	bye("exit", 0)
	return nil
}

// senderCapacity is the sender's own ring (counters, and events sent
// with Send: none, the loop's are drained from gotrace's ring).
const senderCapacity = 1024

func flagKVs(prefix string, m map[string]string) []msg.KV {
	kv := make([]msg.KV, 0, len(m))
	for k, v := range m {
		kv = append(kv, msg.KV{Key: prefix + k, Value: v})
	}
	sort.Slice(kv, func(i, j int) bool { return kv[i].Key < kv[j].Key })
	return kv
}

// logLine is the child's log line for step st: its time and legal-move
// count, and the losses of the latest update (updates run every
// Config.UpdateEvery steps; collection steps have none of their own, and
// printing their zeros made the loop look broken).
func logLine(st StepStats, lastUpd int64, pl, vl float32) string {
	s := fmt.Sprintf("step %d: %.1f ms, legal %.0f", st.Step, float64(st.Dur)/1e6, st.MeanLegal)
	if lastUpd < 0 {
		return s + ", no update yet"
	}
	return s + fmt.Sprintf(", policy loss %.4f, value loss %.4f (update at step %d)", pl, vl, lastUpd)
}
