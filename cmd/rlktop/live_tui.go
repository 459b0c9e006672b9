package main

import (
	"fmt"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/rlktop/rlktop/loop"
	"github.com/rlktop/rlktop/tui"
)

// runTUI starts the live run and the TUI; a poller sends the session's
// snapshot about 10 times a second and the child's state when it changes.
func runTUI(o loop.LiveOptions) error {
	live, err := loop.StartLive(o)
	if live == nil {
		return err
	}
	defer live.Close()
	feed := make(chan tea.Msg, 16)
	done := make(chan struct{})
	go pollLive(live, feed, done)
	m := tui.New(tui.Options{Source: o.Session.Source, Feed: feed})
	if err != nil {
		feed <- tui.ErrMsg{Err: err}
	}
	if live.Banner != "" {
		feed <- tui.StatusMsg{Text: live.Banner, Level: tui.Warn}
	}
	_, runErr := tea.NewProgram(m).Run()
	close(done)
	if runErr != nil {
		return fmt.Errorf("%w (the live view needs a terminal; `rlktop run --headless` prints a report instead)", runErr)
	}
	return nil
}

func pollLive(live *loop.Live, feed chan<- tea.Msg, done <-chan struct{}) {
	defer close(feed)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var lastState string
	for {
		select {
		case <-done:
			return
		case <-tick.C:
		}
		st := live.Session.Snapshot()
		select {
		case feed <- tui.SnapshotMsg{Snapshot: st.Cumulative}:
		default: // the TUI is behind; the next tick brings a newer one
		}
		cs := live.Sup.Status()
		desc := cs.Describe()
		if desc != lastState {
			lastState = desc
			lvl := tui.Info
			if cs.State != loop.Running {
				lvl = tui.Error
				if err := loop.ChildError(cs); err != nil {
					desc = err.Error()
				}
			}
			select {
			case feed <- tui.StatusMsg{Text: "child " + desc, Level: lvl}:
			case <-done:
				return
			}
		}
	}
}
