package loop

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/rlktop/rlktop/loop/demo"
	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/gotrace"
	"github.com/rlktop/rlktop/tracer/wire"
)

// DemoChildCommand is the hidden subcommand of the rlktop binary that runs
// the built-in loop as the traced child process.
const DemoChildCommand = "__demo-child"

// DemoChildOptions configure RunDemoChild.
type DemoChildOptions struct {
	Flags []string // "key=value" demo flags (sizes and backends)
	Steps int64    // stop after this many steps; 0 = until told to stop
}

// RunDemoChild runs the built-in RL loop in this process, traced by
// gotrace, sending wire frames to the rlktop listening at $RLKTOP_SOCKET.
// Control frames set backend flags (applied at the next step boundary and
// acknowledged with that step's number), pause or resume tracing, or stop.
// It returns when ctx ends, Steps steps ran, a stop arrived or the loop
// failed. It never blocks on a slow rlktop: events that do not fit the
// sender's queue are dropped and counted.
func RunDemoChild(ctx context.Context, opts DemoChildOptions) error {
	cfg := demo.DefaultConfig()
	for _, kv := range opts.Flags {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("demo flag %q: want key=value", kv)
		}
		if err := cfg.ParseFlag(k, v); err != nil {
			return err
		}
	}
	conn, err := wire.DialEnv(5 * time.Second)
	if err != nil {
		return err
	}
	tr := gotrace.New(0)
	tr.SetThread(int32(os.Getpid()), gotrace.DefaultTID)
	lp, err := demo.New(cfg, tr)
	if err != nil {
		conn.Close()
		return err
	}
	snd := wire.NewAsyncSender(conn, 1<<17)
	host, _ := os.Hostname()
	snd.Hello(&wire.Hello{
		Source:        "gotrace",
		PID:           int64(os.Getpid()),
		Rank:          -1,
		Host:          host,
		Device:        fmt.Sprintf("cpu: built-in loop, %d cores", runtime.NumCPU()),
		ClockOffsetNs: tr.ClockOffset(),
		StartNs:       time.Now().UnixNano(),
		Cmdline:       os.Args,
		Devices:       []tracer.Device{{ID: 0, Name: "CPU (built-in loop)", Vendor: "cpu"}},
	})
	snd.Meta(kvs(lp.Flags(), "flag."))
	// An unsolicited ack (sequence 0) tells rlktop every flag in force.
	snd.Ack(&wire.Control{Op: wire.ControlAck, Flags: sortedKV(lp.Flags()), Tracing: true, Step: 0})

	var names []tracer.StrID // gotrace NameID → sender id
	send := func() {
		for _, n := range tr.Names(len(names)) {
			names = append(names, snd.Name(n))
		}
		tr.Drain(func(batch []tracer.Event) {
			for i := range batch {
				if int(batch[i].Name) < len(names) {
					batch[i].Name = names[batch[i].Name]
				}
			}
			snd.Send(batch)
		})
	}

	exit := 0
	reason := "done"
	var stepErr error
	next := int64(0) // number of the next step
loop:
	for opts.Steps == 0 || next < opts.Steps {
		// Control frames are applied here, between steps, so a flag takes
		// effect at step `next` exactly.
		for {
			var c wire.Control
			var ok bool
			select {
			case c, ok = <-snd.Controls():
			default:
			}
			if !ok {
				break
			}
			ack := wire.Control{Op: wire.ControlAck, Seq: c.Seq, Step: next}
			switch c.Op {
			case wire.ControlSet:
				if err := lp.Set(c.Key, c.Value); err != nil {
					ack.Err = err.Error()
				}
			case wire.ControlPause:
				tr.Enable(false)
			case wire.ControlResume:
				tr.Enable(true)
			case wire.ControlStop:
				reason = "stopped by rlktop"
				ack.Tracing = tr.Enabled()
				ack.Flags = sortedKV(lp.Flags())
				snd.Ack(&ack)
				break loop
			}
			ack.Tracing = tr.Enabled()
			ack.Flags = sortedKV(lp.Flags())
			snd.Ack(&ack)
		}
		if ctx.Err() != nil {
			reason = "interrupted"
			break
		}
		if _, err := lp.Step(); err != nil {
			stepErr, exit, reason = err, 1, err.Error()
			break
		}
		next++
		send()
	}
	send()
	// A Close error means rlktop went away; the loop itself was fine, so
	// only the loop's own failure is returned.
	_ = snd.Close(wire.Bye{Reason: reason, ExitCode: int64(exit)}, 5*time.Second)
	return stepErr
}

func sortedKV(m map[string]string) []wire.KV {
	out := make([]wire.KV, 0, len(m))
	for k, v := range m {
		out = append(out, wire.KV{Key: k, Value: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

func kvs(m map[string]string, prefix string) []wire.KV {
	kv := sortedKV(m)
	for i := range kv {
		kv[i].Key = prefix + kv[i].Key
	}
	return kv
}
