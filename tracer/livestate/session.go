package livestate

import (
	"maps"
	"slices"
	"time"

	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/wire/msg"
)

// Child is one connected (or formerly connected) traced process.
type Child struct {
	Hello     msg.Hello
	Connected bool
	Events    uint64    // events received
	Drops     msg.Drops // cumulative, as last reported
	Flags     []msg.KV  // flags in force (last ack)
	Tracing   bool      // tracing on (last ack; true until told otherwise)
	Bye       *msg.Bye  // how it ended, when it said
	Err       string    // the error that ended the connection, "" when clean
	Undefined uint64    // events naming an undefined string id
	Meta      []msg.KV  // Meta frames the child sent, in order
}

// State is an immutable picture of the session. Nothing in it is mutated
// after session.Session.Snapshot returns it.
type State struct {
	// Cumulative holds everything since the session (or last Reset) began.
	Cumulative *attrib.Snapshot
	// Recent holds the GPU events launched in the last RecentNs of trace
	// time (and the steps in it).
	Recent   *attrib.Snapshot
	RecentNs int64
	// Steps are the most recent completed steps, oldest first (at most
	// session.Options.MaxSteps).
	Steps []StepTime
	// StepCount counts every step received.
	StepCount int64
	// StepsPerSec is the completion rate over the window: steps ended in
	// the last RecentNs divided by the time they span; 0 with < 2 steps.
	StepsPerSec float64
	Marks       []Mark
	// Refusals are the control commands children refused, oldest first
	// (also said in Warnings; kept across session.Session.Reset).
	Refusals []Refusal
	// Dropped is the sum of the children's cumulative drop counts (events).
	Dropped  uint64
	Children []Child
	// Events counts every event received from all children.
	Events   uint64
	Pending  int // GPU events waiting for their launch context
	Warnings []string
	// Counters holds the latest sample of each counter track (children's
	// Counters frames and session.Session.AddCounters), sorted by name then device.
	Counters []CounterValue
	// Outputs summarise the Python agent's per-step outputs (metrics, NaN
	// checks, torch.compile frames, input wait) over the steps kept, as
	// attrib.Outputs does for a file; nil without any.
	Outputs []attrib.OutputRow
	// Recording is nil when not recording.
	Recording *RecordingInfo
	// Timeline is the window's GPU ops per device and stream, with the CPU
	// ranges and launch calls and the steps around them (at most
	// session.Options.TimelineOps ops); rebuilt with Window.
	Timeline *attrib.Timeline
}

// CounterValue is the latest sample of one counter track.
type CounterValue struct {
	Name   string
	Device int32 // -1 host-wide
	TS     int64 // host CLOCK_REALTIME ns
	Value  float64
}

// RecordingInfo describes a running or finished recording.
type RecordingInfo struct {
	Path    string // set by session.Session.RecordFile
	Started time.Time
	Bytes   int64 // compressed bytes written so far
	Frames  int64 // received frames re-encoded into the recording
	Events  uint64
	// Steps counts the step events written: fewer than the session's
	// StepCount when the recording started after the first steps came
	// (attach starts it once the agent has said hello).
	Steps int64
	Err   string // the write error that stopped the recording, "" none
}

// RankSteps is a distributed job's steps as compare counts them: when two
// or more processes whose hello names a world of more than one (ranks)
// have reported steps, one StepTime per step number that every one of
// those ranks has finished (among st.Steps, the most recent), in step
// order, with the start of the lowest rank's step and the duration of the
// slowest rank's (a synchronous step is as long as its slowest rank); PID
// is the lowest rank's. nil otherwise (one process, or no ranks), so
// callers keep counting one process's steps.
func (st *State) RankSteps() []StepTime { return st.RankStepsOf(nil) }

// RankStepsOf is RankSteps over the processes keep accepts (nil: all), e.g.
// the ranks a restarted command started, not those of the run before.
func (st *State) RankStepsOf(keep func(pid int32) bool) []StepTime {
	rank := map[int32]int64{}
	for _, c := range st.Children {
		if c.Hello.World > 1 && (keep == nil || keep(int32(c.Hello.PID))) {
			rank[int32(c.Hello.PID)] = c.Hello.Rank
		}
	}
	by := map[int32]map[int64]StepTime{}
	for _, s := range st.Steps {
		if _, ok := rank[s.PID]; !ok {
			continue
		}
		if by[s.PID] == nil {
			by[s.PID] = map[int64]StepTime{}
		}
		if _, dup := by[s.PID][s.Step]; !dup {
			by[s.PID][s.Step] = s
		}
	}
	if len(by) < 2 {
		return nil
	}
	var low int32
	first := true
	for pid := range by {
		if first || rank[pid] < rank[low] || (rank[pid] == rank[low] && pid < low) {
			low, first = pid, false
		}
	}
	var out []StepTime
	for _, n := range slices.Sorted(maps.Keys(by[low])) {
		s := by[low][n]
		all := true
		for _, steps := range by {
			o, ok := steps[n]
			if !ok {
				all = false
				break
			}
			s.DurNs = max(s.DurNs, o.DurNs)
		}
		if all {
			out = append(out, s)
		}
	}
	return out
}

// StepsPerRank is the step count to show for the run: StepCount (every
// step received), or with several processes in the cumulative snapshot's
// Ranks (the ranks of a job) the most steps one of them ran, its whole
// run (attrib.SourceRow.Steps) — ranks step together, so StepCount counts
// each step once per rank ("steps 798" for two ranks
// of 399). Without that summary (no events of two processes in the window
// yet), StepCount over the number of children whose hello names a world
// of more than one.
func (st *State) StepsPerRank() int64 {
	if st.Cumulative != nil && st.Cumulative.Ranks != nil && len(st.Cumulative.Ranks.Sources) > 1 {
		n := 0
		for _, r := range st.Cumulative.Ranks.Sources {
			n = max(n, r.Steps)
		}
		return int64(n)
	}
	ranks := 0
	for _, c := range st.Children {
		if c.Hello.World > 1 {
			ranks++
		}
	}
	return st.StepCount / int64(max(ranks, 1))
}
