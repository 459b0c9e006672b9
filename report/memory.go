package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/rlktop/rlktop/internal/escape"
	"github.com/rlktop/rlktop/internal/units"
	"github.com/rlktop/rlktop/tracer/attrib"
)

// ByMemory is the memory view: peak per step, temporaries, bytes per
// operator and stage (attrib.Memory).
const ByMemory = "memory"

// NoMemoryText says why an input has no memory view.
const NoMemoryText = "no memory events in this input (torch.profiler records them with profile_memory=True; rlktop's Python agent turns it on in its windows)"

// JSON shapes of "memory" (attrib.Memory); bytes are integers, times ns.
type (
	MemoryDoc struct {
		Events         int              `json:"events"`
		Allocs         int              `json:"allocs"`
		Frees          int              `json:"frees"`
		FreesUnpaired  int              `json:"frees_unpaired"`
		AllocsUnpaired int              `json:"allocs_unpaired"`
		Steps          []MemStepDoc     `json:"steps"`
		Devices        []MemDeviceDoc   `json:"devices"`
		Temporaries    []MemTempDoc     `json:"temporaries"`
		Operators      []MemOperatorDoc `json:"operators"`
		Stages         []MemOperatorDoc `json:"stages"`
	}
	MemStepDoc struct {
		Source             int          `json:"source"`
		Step               int64        `json:"step"`
		Device             int32        `json:"device"` // -1 host memory
		PeakAllocatedBytes int64        `json:"peak_allocated_bytes"`
		PeakReservedBytes  int64        `json:"peak_reserved_bytes"`
		PeakNs             int64        `json:"peak_ns"`
		AtPeak             MemAtPeakDoc `json:"at_peak"`
		HeldBytes          int64        `json:"held_bytes"`
		ReservedEndBytes   int64        `json:"reserved_end_bytes"`
		AllocBytes         int64        `json:"alloc_bytes"`
		Allocs             int          `json:"allocs"`
		TempBytes          int64        `json:"temp_bytes"`
		Temps              int          `json:"temps"`
	}
	MemAtPeakDoc struct {
		Operator string        `json:"operator"`
		Stage    string        `json:"stage"`
		Live     []MemAllocDoc `json:"live"`
	}
	MemAllocDoc struct {
		Operator   string `json:"operator"`
		Stage      string `json:"stage"`
		Step       int64  `json:"step"`
		Bytes      int64  `json:"bytes"`
		StartNs    int64  `json:"start_ns"`
		LifetimeNs int64  `json:"lifetime_ns"` // -1 not freed in the trace
		FreedBy    string `json:"freed_by"`
	}
	MemDeviceDoc struct {
		Source             int     `json:"source"`
		Device             int32   `json:"device"`
		Steps              int     `json:"steps"`
		PeakAllocatedBytes int64   `json:"peak_allocated_bytes"`
		PeakReservedBytes  int64   `json:"peak_reserved_bytes"`
		GrowthBytesPerStep float64 `json:"growth_bytes_per_step"`
		StepPairs          int     `json:"step_pairs"`
		RisingSteps        int     `json:"rising_steps"`
		FragmentationBytes int64   `json:"fragmentation_bytes"`
	}
	MemTempDoc struct {
		Device     int32   `json:"device"`
		Operator   string  `json:"operator"`
		Stage      string  `json:"stage"`
		FreedBy    string  `json:"freed_by"`
		Bytes      int64   `json:"bytes"`
		Count      int     `json:"count"`
		LifetimeNs int64   `json:"lifetime_ns"` // median
		ByteNs     float64 `json:"byte_ns"`
		Steps      int     `json:"steps"`
	}
	MemOperatorDoc struct {
		Device     int32  `json:"device"`
		Operator   string `json:"operator,omitempty"`
		Stage      string `json:"stage"`
		AllocBytes int64  `json:"alloc_bytes"`
		Allocs     int    `json:"allocs"`
		TempBytes  int64  `json:"temp_bytes"`
		Temps      int    `json:"temps"`
		HeldBytes  int64  `json:"held_bytes"`
		Steps      int    `json:"steps"`
	}
)

func memAllocDoc(a attrib.MemAlloc) MemAllocDoc {
	return MemAllocDoc{Operator: a.Op, Stage: a.Stage, Step: a.Step, Bytes: a.Bytes, StartNs: a.StartNs, LifetimeNs: a.LifetimeNs, FreedBy: a.FreedBy}
}

// NewMemoryDoc converts m (nil: nil); top limits temporaries and
// operator rows (0 = all).
func NewMemoryDoc(m *attrib.Memory, topN int) *MemoryDoc {
	if m == nil {
		return nil
	}
	d := &MemoryDoc{Events: m.Events, Allocs: m.Allocs, Frees: m.Frees, FreesUnpaired: m.FreesUnpaired, AllocsUnpaired: m.AllocsUnpaired,
		Steps: []MemStepDoc{}, Devices: []MemDeviceDoc{}, Temporaries: []MemTempDoc{}, Operators: []MemOperatorDoc{}, Stages: []MemOperatorDoc{}}
	for _, s := range m.Steps {
		sd := MemStepDoc{Source: s.Source, Step: s.Step, Device: s.Device, PeakAllocatedBytes: s.PeakAllocatedBytes, PeakReservedBytes: s.PeakReservedBytes,
			PeakNs: s.PeakNs, AtPeak: MemAtPeakDoc{Operator: s.AtPeak.Op, Stage: s.AtPeak.Stage, Live: []MemAllocDoc{}},
			HeldBytes: s.HeldBytes, ReservedEndBytes: s.ReservedEndBytes, AllocBytes: s.AllocBytes, Allocs: s.Allocs, TempBytes: s.TempBytes, Temps: s.Temps}
		for _, a := range s.AtPeak.Live {
			sd.AtPeak.Live = append(sd.AtPeak.Live, memAllocDoc(a))
		}
		d.Steps = append(d.Steps, sd)
	}
	for _, v := range m.Devices {
		d.Devices = append(d.Devices, MemDeviceDoc{Source: v.Source, Device: v.Device, Steps: v.Steps, PeakAllocatedBytes: v.PeakAllocatedBytes,
			PeakReservedBytes: v.PeakReservedBytes, GrowthBytesPerStep: v.GrowthBytesPerStep, StepPairs: v.StepPairs, RisingSteps: v.RisingSteps, FragmentationBytes: v.FragmentationBytes})
	}
	for _, t := range top(m.Temporaries, topN) {
		d.Temporaries = append(d.Temporaries, MemTempDoc{Device: t.Device, Operator: t.Op, Stage: t.Stage, FreedBy: t.FreedBy, Bytes: t.Bytes,
			Count: t.Count, LifetimeNs: t.LifetimeNs, ByteNs: t.ByteNs, Steps: t.Steps})
	}
	row := func(r attrib.MemOpRow) MemOperatorDoc {
		return MemOperatorDoc{Device: r.Device, Operator: r.Op, Stage: r.Stage, AllocBytes: r.AllocBytes, Allocs: r.Allocs,
			TempBytes: r.TempBytes, Temps: r.Temps, HeldBytes: r.HeldBytes, Steps: r.Steps}
	}
	for _, r := range top(m.Operators, topN) {
		d.Operators = append(d.Operators, row(r))
	}
	for _, r := range m.Stages {
		d.Stages = append(d.Stages, row(r))
	}
	return d
}

// MemDevice names a memory device: "cpu" for host memory, else "gpu N".
func MemDevice(dev int32) string {
	if dev < 0 {
		return "cpu"
	}
	return "gpu " + strconv.Itoa(int(dev))
}

// orNone shows an empty operator or stage.
func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// opOrNone names an allocating or freeing operator: attrib.NoOperator
// for memory events no recorded operator was open around, as the work
// tables name kernels launched outside every operator.
func opOrNone(s string) string {
	if s == "" {
		return attrib.NoOperator
	}
	return s
}

// NoOperatorFreeNote explains "freed by (no operator)" under a
// temporaries table: in PyTorch traces most frees are of this kind.
const NoOperatorFreeNote = "freed by (no operator): no recorded operator was open on the freeing thread, as when Python drops a tensor's last reference between operators"

// SignedBytes is units.Bytes with a sign: "+40.0 MiB", "-1.5 KiB".
func SignedBytes(n int64) string {
	if n < 0 {
		return "-" + units.Bytes(-n)
	}
	return "+" + units.Bytes(n)
}

// memGrids are the memory view's tables: per step and device, the top
// temporaries, per operator and stage. human: unit-formatted cells.
func memGrids(m *attrib.Memory, human bool, topN int) (steps, temps, ops grid) {
	b := func(v int64) string {
		if human {
			return units.Bytes(v)
		}
		return strconv.FormatInt(v, 10)
	}
	num := func(v int) string { return strconv.Itoa(v) }
	name := func(s string) string {
		if human {
			return orNone(s)
		}
		return s
	}
	dev := func(d int32) string {
		if human {
			return MemDevice(d)
		}
		return strconv.Itoa(int(d))
	}
	steps.header = []string{"step", "device", "peak allocated", "peak reserved", "held at end", "allocated", "temporaries", "at peak: operator", "stage"}
	if !human {
		steps.header = []string{"step", "device", "peak_allocated_bytes", "peak_reserved_bytes", "held_bytes", "alloc_bytes", "temp_bytes", "at_peak_operator", "at_peak_stage"}
	}
	for _, s := range m.Steps {
		steps.rows = append(steps.rows, []string{strconv.FormatInt(s.Step, 10), dev(s.Device), b(s.PeakAllocatedBytes), b(s.PeakReservedBytes),
			b(s.HeldBytes), b(s.AllocBytes), b(s.TempBytes), name(s.AtPeak.Op), name(s.AtPeak.Stage)})
	}
	temps = tempGrid(top(m.Temporaries, topN), human)
	ops.header = []string{"operator", "stage", "device", "allocated", "allocs", "temporaries", "temps", "held at step end"}
	if !human {
		ops.header = []string{"operator", "stage", "device", "alloc_bytes", "allocs", "temp_bytes", "temps", "held_bytes", "steps"}
	}
	for _, r := range top(m.Operators, topN) {
		op := r.Op
		if human {
			op = opOrNone(op)
		}
		row := []string{op, name(r.Stage), dev(r.Device), b(r.AllocBytes), num(r.Allocs), b(r.TempBytes), num(r.Temps), b(r.HeldBytes)}
		if !human {
			row = append(row, num(r.Steps))
		}
		ops.rows = append(ops.rows, row)
	}
	for _, g := range []*grid{&steps, &temps, &ops} {
		g.right = make([]bool, len(g.header))
		for i, h := range g.header {
			switch h {
			case "operator", "stage", "device", "allocated by", "freed by", "at peak: operator", "freed_by", "at_peak_operator", "at_peak_stage":
			default:
				g.right[i] = true
			}
		}
	}
	return steps, temps, ops
}

// tempGrid is the temporaries table of ts: size, device, count, median
// lifetime, allocating and freeing operator, stage, and bytes × lifetime
// summed (table: bytes·ms; csv: byte_ns).
func tempGrid(ts []attrib.MemTemp, human bool) grid {
	var g grid
	g.header = []string{"temporary", "device", "count", "lifetime", "allocated by", "freed by", "stage", "bytes×lifetime"}
	if !human {
		g.header = []string{"bytes", "device", "count", "lifetime_ns", "operator", "freed_by", "stage", "byte_ns"}
	}
	for _, t := range ts {
		if !human {
			g.rows = append(g.rows, []string{strconv.FormatInt(t.Bytes, 10), strconv.Itoa(int(t.Device)), strconv.Itoa(t.Count),
				strconv.FormatInt(t.LifetimeNs, 10), t.Op, t.FreedBy, t.Stage, strconv.FormatFloat(t.ByteNs, 'f', 0, 64)})
			continue
		}
		g.rows = append(g.rows, []string{units.Bytes(t.Bytes), MemDevice(t.Device), strconv.Itoa(t.Count), Duration(t.LifetimeNs),
			opOrNone(t.Op), opOrNone(t.FreedBy), orNone(t.Stage), units.Bytes(int64(t.ByteNs/1e6)) + "·ms"})
	}
	g.right = make([]bool, len(g.header))
	for i, h := range g.header {
		switch h {
		case "device", "allocated by", "freed by", "stage", "operator", "freed_by":
		default:
			g.right[i] = true
		}
	}
	return g
}

// memDeviceLines says each device's peak, growth and fragmentation.
func memDeviceLines(m *attrib.Memory) []string {
	var out []string
	for _, d := range m.Devices {
		reserved := units.Bytes(d.PeakReservedBytes) + " reserved"
		if d.PeakReservedBytes <= 0 && d.PeakAllocatedBytes > 0 {
			reserved = "no reserved pool recorded" // the source gives no allocator pool figure (or 0: CPU memory has none)
		}
		l := fmt.Sprintf("%s: peak %s allocated, %s over %s", MemDevice(d.Device), units.Bytes(d.PeakAllocatedBytes), reserved, plural(d.Steps, "step"))
		if d.StepPairs > 0 {
			l += fmt.Sprintf("; held at step end grows %s a step (rising in %d of %d pairs of consecutive steps)", SignedBytes(int64(d.GrowthBytesPerStep)), d.RisingSteps, d.StepPairs)
		}
		if d.FragmentationBytes > 0 {
			l += fmt.Sprintf("; reserved minus allocated up to %s", units.Bytes(d.FragmentationBytes))
		}
		out = append(out, l)
	}
	out = append(out, fmt.Sprintf("%s memory events: %s allocations, %s frees (%s of blocks allocated before the trace)", units.Count(int64(m.Events)), units.Count(int64(m.Allocs)), units.Count(int64(m.Frees)), units.Count(int64(m.FreesUnpaired))))
	return out
}

// writeMemory writes the memory view as table, md or csv (JSON has it as
// "memory" in every document). CSV holds the operator rows.
func writeMemory(w io.Writer, s *attrib.Snapshot, o Options) error {
	m := s.Memory
	if o.Format == "csv" {
		if m == nil {
			m = &attrib.Memory{} // the header, no rows: as other views without rows
		}
		_, _, ops := memGrids(m, false, o.Top)
		ops = escapeGrid(ops)
		cw := csv.NewWriter(w)
		if err := cw.Write(ops.header); err != nil {
			return err
		}
		if err := cw.WriteAll(ops.rows); err != nil {
			return err
		}
		cw.Flush()
		return cw.Error()
	}
	md := o.Format == "md"
	var b strings.Builder
	var hb strings.Builder
	if err := header(&hb, s, ""); err != nil {
		return err
	}
	hdr := strings.TrimRight(hb.String(), "\n")
	if md {
		for _, l := range strings.Split(hdr, "\n") {
			b.WriteString(l + "  \n")
		}
	} else {
		b.WriteString(hdr + "\n")
	}
	if m == nil {
		if md {
			fmt.Fprintf(&b, "\n_%s_\n", escape.Markdown(NoMemoryText))
		} else {
			fmt.Fprintf(&b, "\n%s\n", NoMemoryText)
		}
		_, err := io.WriteString(w, b.String())
		return err
	}
	steps, temps, ops := memGrids(m, true, o.Top)
	b.WriteString("\n")
	for _, l := range memDeviceLines(m) {
		if md {
			b.WriteString(escape.Markdown(l) + "  \n")
		} else {
			b.WriteString(l + "\n")
		}
	}
	section := func(title string, g grid, more int) {
		if md {
			fmt.Fprintf(&b, "\n**%s**\n\n", title)
			if len(g.rows) == 0 {
				b.WriteString("_none_\n")
				return
			}
			writeMDGrid(&b, g)
			if more > 0 {
				fmt.Fprintf(&b, "\n_%d more rows not shown_\n", more)
			}
			return
		}
		fmt.Fprintf(&b, "\n%s\n", title)
		if len(g.rows) == 0 {
			b.WriteString("none\n")
			return
		}
		writeTextGrid(&b, escapeGrid(g))
		if more > 0 {
			fmt.Fprintf(&b, "… %d more rows (--top 0 shows all)\n", more)
		}
	}
	cut := func(n int) int {
		if o.Top > 0 {
			return max(n-o.Top, 0)
		}
		return 0
	}
	section("peak per step", steps, 0)
	section("temporaries (allocated and freed inside one step), largest first", temps, cut(len(m.Temporaries)))
	if slices.ContainsFunc(m.Temporaries, func(t attrib.MemTemp) bool { return t.FreedBy == "" }) {
		if md {
			fmt.Fprintf(&b, "\n_%s_\n", escape.Markdown(NoOperatorFreeNote))
		} else {
			fmt.Fprintf(&b, "%s\n", NoOperatorFreeNote)
		}
	}
	if len(m.Temporaries) > 1 {
		section("temporaries by bytes × lifetime (the memory they keep from others)", tempGrid(top(m.TemporariesByByteNs(), 5), true), 0)
	}
	section("per operator and stage", ops, cut(len(m.Operators)))
	if carried := heldBeforeSteps(m); carried > 0 {
		// The step rows' "held at end" is the device's level; an
		// operator's is what it allocated inside the step and still holds.
		l := fmt.Sprintf("held at step end: an operator's counts what it allocated inside the step and still holds at its end; a step's is the device's whole level, which includes blocks allocated before the step (weights, optimizer state, earlier steps' blocks: up to %s here)", units.Bytes(carried))
		if md {
			fmt.Fprintf(&b, "\n_%s_\n", escape.Markdown(l))
		} else {
			fmt.Fprintf(&b, "%s\n", l)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// heldBeforeSteps is the most a step's level at its end
// (MemStep.HeldBytes) holds beyond its own allocations still held then
// (allocated during the step less what was freed inside it): blocks
// carried in from before the step. 0 when nothing was.
func heldBeforeSteps(m *attrib.Memory) int64 {
	var most int64
	for _, st := range m.Steps {
		most = max(most, st.HeldBytes-(st.AllocBytes-st.TempBytes))
	}
	return most
}

// plural says n things: "1 step", "3 steps".
func plural(n int, what string) string { return units.Plural(int64(n), what) }
