package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/rlktop/rlktop/loop"
	"github.com/rlktop/rlktop/loop/demo"
	"github.com/rlktop/rlktop/tracer/session"
	"github.com/rlktop/rlktop/tui"
	"github.com/rlktop/rlktop/views"
)

// backendOrder is the flags panel's order (digit keys 1–5).
var backendOrder = []string{"attention", "qkv", "scan", "sampler", "head"}

// builtinBackends lists the built-in loop's backend flags in panel order
// (any the loop adds later come after, sorted).
func builtinBackends() []views.FlagChoice {
	b := demo.Backends()
	var out []views.FlagChoice
	for _, k := range backendOrder {
		if v, ok := b[k]; ok {
			out = append(out, views.FlagChoice{Key: k, Values: v})
			delete(b, k)
		}
	}
	var rest []string
	for k := range b {
		rest = append(rest, k)
	}
	slices.Sort(rest)
	for _, k := range rest {
		out = append(out, views.FlagChoice{Key: k, Values: b[k]})
	}
	return out
}

// runTUI starts the live run and the TUI: a poller sends the session's
// state about 10 times a second, a telemetry poller the device samples.
// listen (nil: none) opens run --listen's TCP listener; its line joins
// the banner under the header.
func runTUI(o loop.LiveOptions, listen func(*loop.Live) (string, error)) error {
	live, err := loop.StartLive(o)
	if live == nil {
		return err
	}
	banner := live.Banner
	if listen != nil {
		note, lerr := listen(live)
		if lerr != nil {
			live.Close()
			return lerr
		}
		if note != "" {
			banner = strings.TrimPrefix(banner+" · "+note, " · ")
		}
	}
	ctl := newLiveController(live, o)
	defer ctl.close()
	_, devStatus, _ := live.Telemetry()
	feed := make(chan tea.Msg, 16)
	done := make(chan struct{})
	go pollLive(live, ctl, feed, done)
	opts := tui.Options{Source: o.Session.Source, Feed: feed, Controller: ctl, DeviceStatus: devStatus, Untraced: banner,
		Command: !live.Builtin}
	if live.Builtin {
		opts.Backends = builtinBackends()
	} else if !o.NoAgent {
		opts.Backends = agentBackends()
	}
	m := tui.New(opts)
	if err != nil {
		feed <- tui.ErrMsg{Err: err}
	}
	_, runErr := tea.NewProgram(m).Run()
	close(done)
	// Quitting while R records ends the recording: say where it is.
	if info, path, ok := ctl.stopRecordingAtExit(); ok {
		fmt.Fprintf(os.Stderr, "rlktop: recorded %s: %s, %d frames, %s events (rlktop open %s)\n", path,
			views.FormatBytes(info.Bytes), info.Frames, views.FormatCount(int64(info.Events)), path)
	}
	if runErr != nil {
		return fmt.Errorf("%w (the live view needs a terminal; `rlktop run --headless` prints a report instead)", runErr)
	}
	// A command that ended by itself before the user quit: its exit status
	// becomes rlktop's, as in the headless run.
	if !live.Builtin {
		if st := live.Sup.Status(); st.State == loop.Exited {
			if code := loop.ExitStatus(st); code > 0 {
				return exitError{code: code}
			}
		}
	}
	return nil
}

// pollLive sends a tui.LiveMsg every 100 ms (dropped when the TUI is
// behind), a tui.DeviceMsg for each new telemetry sample (loop.Live
// samples the GPUs and the child and records the counters), and a status
// line when the child fails. It closes feed when done is closed.
func pollLive(live *loop.Live, ctl *liveController, feed chan<- tea.Msg, done <-chan struct{}) {
	defer close(feed)
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
			select {
			case feed <- tui.DeviceMsg{Sample: smp}:
			default: // the next sample comes in 500 ms
			}
		}
		cs := live.Sup.Status()
		state := live.Session.Snapshot()
		out, partial := live.Sup.Output(outSeq)
		msg := tui.LiveMsg{State: state, Child: cs, Flags: live.FlagsIn(state), At: time.Now(), Output: out, Partial: partial}
		select {
		case feed <- msg:
			if n := len(out); n > 0 {
				outSeq = out[n-1].Seq // sent: ask for what follows next time
			}
		default: // the TUI is behind; the next tick brings a newer one (and these lines again)
		}
		// A connection rlktop closed on an error (corrupt frame, protocol
		// violation) is said once, as an error in the status bar.
		for i, c := range state.Children {
			if c.Err != "" && !connErrs[i] {
				connErrs[i] = true
				select {
				case feed <- tui.StatusMsg{Text: connErrText(c), Level: tui.Error}:
				case <-done:
					return
				}
			}
		}
		desc := cs.Describe()
		if desc != lastState {
			lastState = desc
			if cs.State != loop.Running && cs.State != loop.NotStarted && !ctl.comparing.Load() {
				text, lvl := "child "+desc, tui.Warn
				if err := loop.ChildError(cs); err != nil {
					text, lvl = "child "+desc+" (r restarts; the Child panel shows its stderr)", tui.Error
				}
				select {
				case feed <- tui.StatusMsg{Text: text, Level: lvl}:
				case <-done:
					return
				}
			}
		}
	}
}

// liveController implements tui.Controller over a *loop.Live.
type liveController struct {
	live *loop.Live
	opts loop.LiveOptions
	// CompareSteps is the counted steps per arm of a TUI comparison.
	compareSteps int

	mu  sync.Mutex
	rec *os.File
	// recPath is the recording's absolute path while one runs.
	recPath string
	// comparing is set while Compare has the live child stopped.
	comparing atomic.Bool
	cmpWG     sync.WaitGroup // a running Compare; close waits for it
}

func newLiveController(l *loop.Live, o loop.LiveOptions) *liveController {
	return &liveController{live: l, opts: o, compareSteps: 10}
}

func (c *liveController) SetFlag(key, value string) error {
	_, err := c.live.SetFlag(key, value)
	return err
}

func (c *liveController) SetTracing(on bool) error {
	var err error
	if on {
		_, err = c.live.Session.ResumeTracing()
	} else {
		_, err = c.live.Session.PauseTracing()
	}
	return err
}

func (c *liveController) Restart() error { return c.live.Restart() }

// StartRecording creates rlktop-YYYYmmdd-HHMMSS.rlk in the working
// directory (never overwriting one) and tees the session into it; the
// session gzip-compresses and flushes frame by frame.
func (c *liveController) StartRecording() (string, error) {
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

func (c *liveController) StopRecording() (session.RecordingInfo, error) {
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
// (with A′ for noise; the other flags as in force now), then restarts the
// live child.
func (c *liveController) Compare(ctx context.Context, key string, values []string, progress func(string), onStep func(loop.StepLabel)) (*loop.CompareResult, error) {
	specs := []loop.FlagSpec{{Key: key, Values: values}}
	inForce := c.live.Flags()
	fixed := map[string]string{}
	for k, v := range c.opts.Flags {
		fixed[k] = v
	}
	for _, b := range backendOrder {
		if v, ok := inForce[b]; ok {
			fixed[b] = v
		}
	}
	delete(fixed, key)
	keys := make([]string, 0, len(fixed))
	for k := range fixed {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		specs = append(specs, loop.FlagSpec{Key: k, Values: []string{fixed[k]}})
	}
	arms, err := loop.Arms(specs)
	if err != nil {
		return nil, err
	}
	c.comparing.Store(true)
	c.cmpWG.Add(1)
	defer c.cmpWG.Done()
	defer c.comparing.Store(false)
	// Stop the live child cleanly (it finishes its step), then restart
	// it after the comparison.
	if c.live.Sup.Status().State == loop.Running {
		if _, err := c.live.Session.StopChildren(); err == nil {
			wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			c.live.Sup.Wait(wctx)
			cancel()
		}
		c.live.Sup.Stop(3 * time.Second)
	}
	defer c.live.Restart()
	return loop.Compare(ctx, loop.CompareOptions{
		Arms: arms, Exe: c.opts.Exe, Steps: c.compareSteps, Noise: true,
		Rules: c.opts.Session.Rules, Progress: progress, OnStep: onStep,
		// A command is compared as `rlktop compare -- CMD` would (live
		// agent switches, else restarts with the arm's environment).
		Command: c.opts.Command, Tracer: c.opts.Tracer, NoAgent: c.opts.NoAgent,
		TorchRanges: c.opts.TorchRanges, Untraced: c.opts.Untraced,
	})
}

// stopRecordingAtExit ends a recording the user left running when quitting;
// ok is false when none ran.
func (c *liveController) stopRecordingAtExit() (session.RecordingInfo, string, bool) {
	c.mu.Lock()
	running := c.rec != nil
	path := c.recPath
	c.mu.Unlock()
	if !running {
		return session.RecordingInfo{}, "", false
	}
	info, err := c.StopRecording()
	if err != nil {
		fmt.Fprintf(os.Stderr, "rlktop: recording %s: %v\n", path, err)
	}
	return info, path, true
}

// close waits (up to 15 s) for a cancelled comparison to stop its child,
// stops a recording and closes the live run.
func (c *liveController) close() {
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
