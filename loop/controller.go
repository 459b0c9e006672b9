package loop

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rlktop/rlktop/gpu/reading"
	"github.com/rlktop/rlktop/tracer/livestate"
	"github.com/rlktop/rlktop/tracer/session"
)

// Controller carries out a live TUI's requests over a *Live: flags,
// tracing, restart, recording and comparisons. Its method set is
// tui.Controller's (it satisfies that interface structurally; loop does
// not import tui). Poll feeds the TUI the live state.
type Controller struct {
	live *Live
	opts LiveOptions
	// CompareSteps is the counted steps per arm of a comparison (default
	// 10).
	CompareSteps int

	mu  sync.Mutex
	rec *os.File
	// recPath is the recording's absolute path while one runs.
	recPath string
	// comparing is set while Compare has the live child stopped.
	comparing atomic.Bool
	cmpWG     sync.WaitGroup // a running Compare; Close waits for it
}

// NewController returns the controller of live l started with options o
// (a comparison runs the same command, tracer and flags).
func NewController(l *Live, o LiveOptions) *Controller {
	return &Controller{live: l, opts: o, CompareSteps: 10}
}

// SetFlag applies key=value (Live.SetFlag).
func (c *Controller) SetFlag(key, value string) error {
	_, err := c.live.SetFlag(key, value)
	return err
}

// SetTracing pauses (false) or resumes (true) tracing in the child.
func (c *Controller) SetTracing(on bool) error {
	var err error
	if on {
		_, err = c.live.Session.ResumeTracing()
	} else {
		_, err = c.live.Session.PauseTracing()
	}
	return err
}

// Restart restarts the child with the flags in force (Live.Restart).
func (c *Controller) Restart() error { return c.live.Restart() }

// Comparing reports whether Compare has the live child stopped now.
func (c *Controller) Comparing() bool { return c.comparing.Load() }

// StartRecording creates rlktop-YYYYmmdd-HHMMSS.rlk in the working
// directory (never overwriting one) and tees the session into it; the
// session gzip-compresses and flushes frame by frame. It returns the
// file's absolute path; session.ErrRecording while one runs.
func (c *Controller) StartRecording() (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rec != nil {
		return "", session.ErrRecording
	}
	name := time.Now().Format("rlktop-20060102-150405.rlk")
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", fmt.Errorf("creating the recording: %w", err)
	}
	if err := c.live.Session.Record(f); err != nil {
		f.Close()
		os.Remove(name)
		return "", err
	}
	c.rec = f
	if abs, err := filepath.Abs(name); err == nil {
		name = abs
	}
	c.recPath = name
	return name, nil
}

// StopRecording ends the recording and closes its file.
func (c *Controller) StopRecording() (livestate.RecordingInfo, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	info, err := c.live.Session.StopRecording()
	if c.rec != nil {
		err = errors.Join(err, c.rec.Close())
		c.rec = nil
	}
	return info, err
}

// Compare stops the live child, compares key's values in a separate run
// (with A′ for noise; the other flags as in force now: LiveOptions.Flags,
// then the built-in loop's backend flags in force), then restarts the live child. A
// command is compared as `rlktop compare -- CMD` would (live agent
// switches, else restarts with the arm's environment).
func (c *Controller) Compare(ctx context.Context, key string, values []string, progress func(string), onStep func(livestate.StepLabel)) (*livestate.CompareResult, error) {
	if c.opts.Attach != 0 {
		// This comparison stops and restarts the child; an attached process
		// is compared in place by compare --attach instead.
		return nil, fmt.Errorf("comparing inside the TUI restarts the process, which rlktop does not do to one it attached to: quit (q detaches) and run `rlktop compare --attach %d --flag %s=%s`", c.opts.Attach, key, strings.Join(values, ","))
	}
	specs := []livestate.FlagSpec{{Key: key, Values: values}}
	inForce := c.live.Flags()
	fixed := maps.Clone(c.opts.Flags)
	if fixed == nil {
		fixed = map[string]string{}
	}
	for _, b := range BuiltinBackends() {
		if v, ok := inForce[b.Key]; ok {
			fixed[b.Key] = v
		}
	}
	delete(fixed, key)
	for _, k := range slices.Sorted(maps.Keys(fixed)) {
		specs = append(specs, livestate.FlagSpec{Key: k, Values: []string{fixed[k]}})
	}
	arms, err := Arms(specs)
	if err != nil {
		return nil, err
	}
	c.comparing.Store(true)
	c.cmpWG.Add(1)
	defer c.cmpWG.Done()
	defer c.comparing.Store(false)
	// Stop the live child cleanly (it finishes its step), then restart
	// it after the comparison.
	c.live.StopChild(ctx, 5*time.Second, 3*time.Second)
	defer c.live.Restart()
	return Compare(ctx, CompareOptions{
		Arms: arms, Exe: c.opts.Exe, Steps: c.CompareSteps, Noise: true,
		Rules: c.opts.Session.Rules, Progress: progress, OnStep: onStep,
		Command: c.opts.Command, Tracer: c.opts.Tracer, NoAgent: c.opts.NoAgent,
		TorchRanges: c.opts.TorchRanges, Untraced: c.opts.Untraced,
	})
}

// StopRecordingAtExit ends a recording the user left running when
// quitting: ok is false when none ran; otherwise path is the file and err
// StopRecording's error (info is what was written either way).
func (c *Controller) StopRecordingAtExit() (info livestate.RecordingInfo, path string, ok bool, err error) {
	c.mu.Lock()
	running := c.rec != nil
	path = c.recPath
	c.mu.Unlock()
	if !running {
		return livestate.RecordingInfo{}, "", false, nil
	}
	info, err = c.StopRecording()
	return info, path, true, err
}

// Close waits (up to 15 s) for a cancelled comparison to stop its child,
// stops a recording and closes the live run.
func (c *Controller) Close() {
	waited := make(chan struct{})
	go func() { c.cmpWG.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(15 * time.Second):
	}
	c.mu.Lock()
	if c.rec != nil {
		c.live.Session.StopRecording()
		c.rec.Close()
		c.rec = nil
	}
	c.mu.Unlock()
	c.live.Close()
}

// PollSink receives what Controller.Poll reads. Device and Live must not
// block: false means the receiver is behind and the value is dropped (a
// dropped update's output lines come again in the next one). ConnClosed
// and ChildEnded may block; false stops the poller.
type PollSink interface {
	// Device takes a new telemetry sample (one per new Sample.TS).
	Device(reading.Sample) bool
	// Live takes the state, about 10 times a second.
	Live(livestate.Update) bool
	// ConnClosed is told once per connection rlktop closed on an error
	// (Child.Err: a corrupt frame, a protocol violation).
	ConnClosed(livestate.Child) bool
	// ChildEnded is told when the child's status (Status.Describe) changes
	// to other than running or not started, outside a comparison; err is
	// ChildError's (nil for a clean exit).
	ChildEnded(st livestate.Status, err error) bool
}

// Poll reads the live run every 100 ms into sink until done is closed or
// a blocking sink call returns false.
func (c *Controller) Poll(done <-chan struct{}, sink PollSink) {
	live := c.live
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var lastState string
	var lastTS int64
	var outSeq uint64          // the child's output lines sent up to this Seq
	connErrs := map[int]bool{} // indexes of State.Children whose Err was said
	for {
		select {
		case <-done:
			return
		case <-tick.C:
		}
		if smp, _, ok := live.Telemetry(); ok && smp.TS != lastTS {
			lastTS = smp.TS
			sink.Device(smp) // dropped when behind: the next sample comes in 500 ms
		}
		cs := live.Sup.Status()
		state := live.Session.Snapshot()
		out, partial := live.Sup.Output(outSeq)
		u := livestate.Update{State: state, Child: cs, Flags: live.FlagState(state), At: time.Now(), Output: out, Partial: partial}
		if sink.Live(u) {
			if n := len(out); n > 0 {
				outSeq = out[n-1].Seq // sent: ask for what follows next time
			}
		}
		for i, ch := range state.Children {
			if ch.Err != "" && !connErrs[i] {
				connErrs[i] = true
				if !sink.ConnClosed(ch) {
					return
				}
			}
		}
		desc := cs.Describe()
		if desc != lastState {
			lastState = desc
			if cs.State != livestate.Running && cs.State != livestate.NotStarted && !c.comparing.Load() {
				if !sink.ChildEnded(cs, ChildError(cs)) {
					return
				}
			}
		}
	}
}
