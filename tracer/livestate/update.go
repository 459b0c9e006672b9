package livestate

import "time"

// Update is one reading of a live run: what loop.Controller's poller
// hands its sink about 10 times a second, and the message the TUI takes
// (tui.Model.Update).
type Update struct {
	State *State
	Child Status
	// Flags are the run's flags in force and pending (loop.Live.FlagState
	// of State: what rlktop set overlaid with the child's last
	// acknowledgement, and the flips not yet in force, refused or failed).
	Flags FlagState
	// At is when State was taken (recording duration, compare clock).
	At time.Time
	// Output holds the child's output lines since the last update the sink
	// took (loop.Supervisor.Output), Partial the lines its streams are
	// still writing; both feed the Output pane.
	Output, Partial []OutputLine
}
