package main

import (
	"fmt"
	"os"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/rlktop/rlktop/gpu/reading"
	"github.com/rlktop/rlktop/loop"
	"github.com/rlktop/rlktop/tracer/livestate"
	"github.com/rlktop/rlktop/tui"
	"github.com/rlktop/rlktop/views"
)

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
	ctl := loop.NewController(live, o)
	defer ctl.Close()
	_, devStatus, _ := live.Telemetry()
	feed := make(chan tea.Msg, 16)
	done := make(chan struct{})
	go pollLive(ctl, feed, done)
	opts := tui.Options{Source: o.Session.Source, Feed: feed, Controller: ctl, DeviceStatus: devStatus, Untraced: banner,
		Command: !live.Builtin}
	opts.Backends = loop.PanelFlags(o)
	m := tui.New(opts)
	if err != nil {
		feed <- tui.ErrMsg{Err: err}
	}
	_, runErr := tea.NewProgram(m).Run()
	close(done)
	// Quitting while R records ends the recording: say where it is.
	if info, path, ok, err := ctl.StopRecordingAtExit(); ok {
		if err != nil {
			fmt.Fprintf(os.Stderr, "rlktop: recording %s: %v\n", path, err)
		}
		fmt.Fprintf(os.Stderr, "rlktop: recorded %s: %s, %d frames, %s events (rlktop open %s)\n", path,
			views.FormatBytes(info.Bytes), info.Frames, views.FormatCount(int64(info.Events)), path)
	}
	if runErr != nil {
		return fmt.Errorf("%w (the live view needs a terminal; `rlktop run --headless` prints a report instead)", runErr)
	}
	// A command that ended by itself before the user quit: its exit status
	// becomes rlktop's, as in the headless run.
	if !live.Builtin {
		if st := live.Sup.Status(); st.State == livestate.Exited {
			if code := loop.ExitStatus(st); code > 0 {
				return exitError{code: code}
			}
		}
	}
	return nil
}

// tuiFeed turns what loop.Controller.Poll reads into the TUI's messages:
// livestate.Update and DeviceMsg (dropped when the TUI is behind) and status lines
// for a closed connection or a failed child (sent unless done is closed).
type tuiFeed struct {
	feed chan<- tea.Msg
	done <-chan struct{}
}

func (f tuiFeed) try(m tea.Msg) bool {
	select {
	case f.feed <- m:
		return true
	default:
		return false
	}
}

func (f tuiFeed) send(m tea.Msg) bool {
	select {
	case f.feed <- m:
		return true
	case <-f.done:
		return false
	}
}

func (f tuiFeed) Device(s reading.Sample) bool { return f.try(tui.DeviceMsg{Sample: s}) }

func (f tuiFeed) Live(u livestate.Update) bool { return f.try(u) }

// ConnClosed: a connection rlktop closed on an error (corrupt frame,
// protocol violation) is said once, as an error in the status bar.
func (f tuiFeed) ConnClosed(c livestate.Child) bool {
	return f.send(tui.StatusMsg{Text: connErrText(c), Level: tui.Error})
}

func (f tuiFeed) ChildEnded(st livestate.Status, err error) bool {
	text, lvl := "child "+st.Describe(), tui.Warn
	if err != nil {
		text, lvl = "child "+st.Describe()+" (r restarts; the Child panel shows its stderr)", tui.Error
	}
	return f.send(tui.StatusMsg{Text: text, Level: lvl})
}

// pollLive runs ctl's poller into feed (a livestate.Update every 100 ms, a
// tui.DeviceMsg per new telemetry sample, status lines) and closes feed
// when done is closed.
func pollLive(ctl *loop.Controller, feed chan<- tea.Msg, done <-chan struct{}) {
	defer close(feed)
	ctl.Poll(done, tuiFeed{feed: feed, done: done})
}
