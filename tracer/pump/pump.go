// Package pump is the drain loop of rlktop's injection libraries
// (tracer/cupti/lib for CUPTI, tracer/rocprof/lib for rocprofiler-sdk),
// in pure Go: each library's C layer queues the records the GPU tool hands
// it, and one goroutine (Run) takes them out through a Source, applies the
// step rule (tracer/steps), sends the events to rlktop through a
// wire.AsyncSender (which never blocks the traced process), reports the
// library's counters as Meta frames and answers rlktop's Control frames
// (Controls). Only the Source, in the library, calls into C.
//
// The C half of the hand-off is include/rlk_handoff.h, which both
// libraries' C layers compile (static inline functions; cgo compiles only
// a package's own .c files): the bounded ring of filled buffers that the
// GPU tool's threads queue without ever waiting on Go, the wait of the
// library's next call, and the exit handshake in which the process's exit
// waits, bounded, until Run has sent what is left (Source.Done).
package pump

import (
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/steps"
	"github.com/rlktop/rlktop/tracer/wire"
	"github.com/rlktop/rlktop/tracer/wire/msg"
)

// State is what Source.Next found.
type State int

const (
	Idle   State = iota // nothing within the wait
	Buffer              // a buffer of records was decoded
	Exit                // the process is exiting: send what is left, then Done
	Inert               // the GPU tool will deliver nothing (not loaded, declined)
)

// Source is one injection library's side of the pump: the calls into its C
// layer and its decoder. Run calls it from one goroutine; Controls calls
// SetTracing and Info from another.
type Source interface {
	// Next waits up to wait for the next buffer of records, decodes it
	// and gives the buffer back to the C layer. A decoding error (the
	// buffer's good records are kept) is logged by Run.
	Next(wait time.Duration) (State, error)
	// Take returns the events decoded since the previous Take (Name ids of
	// the decoder's table, host times as the hello's clock offset
	// expects) and the decoder's strings new since then, in id order.
	Take() (newStrings []string, evs []tracer.Event)
	// Name returns the decoder's string for id (for the step rule).
	Name(id tracer.StrID) string
	// Counters returns the library's counters as Meta pairs, or nil when
	// they did not change since the previous call and force is false.
	Counters(force bool) []msg.KV
	// Info returns the library's state as Meta pairs, and whether tracing
	// is on now.
	Info() (kv []msg.KV, tracing bool)
	// SetTracing switches the GPU tool's tracing on or off; the error says
	// why it could not (in the ack rlktop shows).
	SetTracing(on bool) error
	// Done tells the C layer the pump has finished after Exit or Inert
	// (the process's exit waits for it).
	Done(st State)
}

// MemorySource is a Source whose tool records allocations (CUPTI's
// MEMORY2, rocprofiler-sdk's memory allocation tracing): TakeMemory
// returns those decoded since the previous call; Run sends them as wire
// Memory frames after each buffer's events.
type MemorySource interface {
	TakeMemory() []tracer.MemEvent
}

// Config names the library in messages and sets the loop's figures.
type Config struct {
	// Name prefixes stderr lines: "rlktop <Name>[pid]: …" ("cupti",
	// "rocprof").
	Name string
	// Tracing names what is switched off in messages ("CUPTI tracing").
	Tracing string
	// Tracer names the tracer in refusals of controls it cannot apply
	// ("the CUPTI tracer").
	Tracer string
	// Inert is the Bye reason when the GPU tool delivers nothing
	// ("cupti unavailable").
	Inert string
	// Debug writes Logf lines to stderr.
	Debug bool
	// Delay sleeps after each buffer (a test hook: a slow drain fills the
	// C layer's ring).
	Delay time.Duration
}

// Send sizes and timings.
const (
	ChunkEvents = 8192                    // events per Send: a full sender ring drops at this granularity
	Wait        = 200 * time.Millisecond  // Source.Next's wait
	MetaEvery   = time.Second             // counters at most this often while buffers flow
	ExitFlush   = 2500 * time.Millisecond // sending what is queued at exit (within the libraries' exit wait of 3 s)
)

// Logf writes a diagnostic line when c.Debug is set.
func (c *Config) Logf(format string, a ...any) {
	if c.Debug {
		c.Printf(format, a...)
	}
}

// Printf writes a line to stderr, prefixed "rlktop <Name>[pid]: ".
func (c *Config) Printf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "rlktop %s[%d]: "+format+"\n", append([]any{c.Name, os.Getpid()}, a...)...)
}

// Connect dials rlktop at $RLKTOP_SOCKET (wire.DialEnv, within timeout)
// and returns a sender whose ring holds events events. When nobody is
// there to send to (no variable, nobody listening, refused), it says so on
// stderr, switches tracing off (src.SetTracing(false)) so that the process
// pays nothing, and returns nil: Run then only gives buffers back.
func Connect(cfg Config, src Source, timeout time.Duration, events int) *wire.AsyncSender {
	conn, err := wire.DialEnv(timeout)
	if err != nil {
		cfg.Printf("%v; %s switched off", err, cfg.Tracing)
		src.SetTracing(false)
		return nil
	}
	return wire.NewAsyncSender(conn, events)
}

// Run drains src for the life of the process, sending to s (nil: nobody to
// send to; the buffers are still drained and given back). It returns after
// Exit or Inert, having sent the last counters, the library's state and a
// Bye, and called src.Done. It never returns early on an error of its own:
// when the connection breaks (rlktop went away) it switches tracing off,
// so that the process stops paying for tracing nobody reads, and goes on
// giving buffers back.
func Run(cfg Config, src Source, s *wire.AsyncSender) {
	var relay *wire.Relay // decoder string ids → stream ids, chunked sends
	if s != nil {
		relay = wire.NewRelay(s, ChunkEvents)
	}
	stepRule := steps.FromEnv(os.Getenv, func(err error) {
		cfg.Printf("%v; using the default step ranges", err)
	})
	var lastMeta time.Time
	for {
		// Read before Next: an Idle that began before the detach's flush
		// filled the ring must not close the connection.
		detaching := detachAsked.Load()
		st, err := src.Next(Wait)
		if err != nil {
			cfg.Logf("%v", err)
		}
		if st == Buffer {
			strs, evs := src.Take()
			stepRule.Apply(evs, src.Name)
			evs = append(evs, stepRule.Windows(evs)...)
			if cfg.Delay > 0 {
				time.Sleep(cfg.Delay)
			}
			if relay != nil {
				relay.Send(strs, evs)
			}
			if ms, ok := src.(MemorySource); ok && s != nil {
				s.Memory(ms.TakeMemory())
			}
		}
		if s != nil && s.Err() != nil {
			cfg.Printf("lost the connection to rlktop (%v); %s switched off", s.Err(), cfg.Tracing)
			src.SetTracing(false)
			s, relay = nil, nil
		}
		if s != nil && st == Idle && detaching {
			// Detached, and the ring is empty: the last counters, the
			// state and a Bye, then nothing more is sent (the library
			// stays loaded: a Go runtime cannot be unloaded).
			if kv := src.Counters(true); kv != nil {
				s.Meta(kv)
			}
			kv, _ := src.Info()
			s.Meta(kv)
			_ = s.Close(msg.Bye{Reason: "detached", ExitCode: -1}, ExitFlush)
			cfg.Logf("detached: %s switched off", cfg.Tracing)
			s, relay = nil, nil
		}
		final := st == Exit || st == Inert
		if s != nil && (st != Buffer || time.Since(lastMeta) > MetaEvery) {
			if kv := src.Counters(final); kv != nil {
				s.Meta(kv)
			}
			lastMeta = time.Now()
		}
		if final {
			if s != nil {
				kv, _ := src.Info()
				s.Meta(kv)
				reason := "exit"
				if st == Inert {
					reason = cfg.Inert
				}
				_ = s.Close(msg.Bye{Reason: reason, ExitCode: -1}, ExitFlush)
			}
			src.Done(st)
			return
		}
	}
}

// detachAsked is set by Controls when rlktop detached (one pump per
// library, one library per process): Run then closes the connection once
// the ring is empty.
var detachAsked atomic.Bool

// Controls answers rlktop's Control frames on s until the connection ends:
// pause and resume switch tracing off and on (src.SetTracing); detach (the
// library was loaded into a process rlktop attached to) switches tracing
// off for good, acks and closes the connection with a Bye "detached";
// flags cannot be set inside the traced program, so set and stop are
// refused (rlktop restarts the command with the other arm's environment
// instead). Each ack carries the tracing state and is followed by the
// library's state as Meta.
func Controls(cfg Config, src Source, s *wire.AsyncSender) {
	for c := range s.Controls() {
		ack := msg.Control{Op: msg.ControlAck, Seq: c.Seq, Step: -1}
		switch c.Op {
		case msg.ControlPause, msg.ControlResume:
			if err := src.SetTracing(c.Op == msg.ControlResume); err != nil {
				ack.Err = err.Error()
			}
		case msg.ControlDetach:
			// Off for good: the flush in SetTracing hands the last buffers
			// to the ring; Run sends them, then closes (detachAsked).
			if err := src.SetTracing(false); err != nil {
				ack.Err = err.Error()
			}
			detachAsked.Store(true)
		default:
			ack.Err = cfg.Tracer + " cannot " + c.Op.String() + " inside the traced process; rlktop restarts the command instead"
		}
		kv, tracing := src.Info()
		ack.Tracing = tracing
		s.Ack(&ack)
		s.Meta(kv)
	}
}
