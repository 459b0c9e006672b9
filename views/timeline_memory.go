package views

import (
	"strings"

	"github.com/rlktop/rlktop/tracer/attrib"
)

// memLane is the Timeline's memory lane: the allocated bytes of the
// device with the highest peak (Snapshot.Memory.Levels) over the visible
// range, one block height per cell (the highest level in the cell, in
// eighths of the device's peak), the cell holding the peak drawn as ▲.
type memLane struct {
	levels []attrib.MemLevel // one device's, time order
	peak   int64
	device int32
}

// setMemory keeps the level series of s's device with the highest peak
// (none for several sources: their clocks are their own).
func (t *Timeline) setMemory(s *attrib.Snapshot) {
	t.mem = memLane{}
	if s == nil || s.Memory == nil {
		return
	}
	m := s.Memory
	best := int64(-1)
	for _, d := range m.Devices {
		if d.Source == 0 && d.PeakAllocatedBytes > best {
			best, t.mem.device = d.PeakAllocatedBytes, d.Device
		}
	}
	for _, l := range m.Levels {
		if l.Source == 0 && l.Device == t.mem.device {
			t.mem.levels = append(t.mem.levels, l)
			t.mem.peak = max(t.mem.peak, l.Bytes)
		}
	}
}

// memRows is 1 when the lane is drawn.
func (t *Timeline) memRows() int {
	if len(t.mem.levels) == 0 || t.mem.peak <= 0 || t.multi() || t.h < 10 {
		return 0
	}
	return 1
}

// memRow draws the lane over gw cells of pc ns from t.from: in each cell
// the highest level reached in it, or the level carried into it.
func (t *Timeline) memRow(gw int, pc int64) string {
	ls := t.mem.levels
	cells := make([]int64, gw)
	for i := range cells {
		cells[i] = -1
	}
	carried := int64(-1)
	peakCell := -1
	for _, l := range ls {
		if l.TS < t.from {
			carried = l.Bytes
			continue
		}
		c := int((l.TS - t.from) / pc)
		if c >= gw {
			break
		}
		cells[c] = max(cells[c], l.Bytes)
		if l.Bytes == t.mem.peak && peakCell < 0 {
			peakCell = c
		}
	}
	var b strings.Builder
	last := carried
	for c, v := range cells {
		if v < 0 {
			v = last
		} else {
			last = v
		}
		switch {
		case c == peakCell:
			b.WriteString(t.st.Timeline.Selected.Render("▲"))
		case v < 0:
			b.WriteByte(' ')
		default:
			i := int(v * 7 / t.mem.peak)
			b.WriteRune(sparkRunes[min(max(i, 0), 7)])
		}
	}
	return b.String()
}
