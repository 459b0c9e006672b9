package tracer

// Trace is everything one source produced: a file an importer read, a
// recording, or what a live session has collected so far.
type Trace struct {
	Format   string // source format: "kineto", "rlktop", "rocprofv3-csv", "nsys-sqlite", …
	Path     string // file it came from; "" for live sources
	Strings  *Strings
	Events   []Event
	Counters []Counter
	// Memory holds the allocations and frees the source recorded
	// (MemEvent), in source order; nil when it recorded none.
	Memory []MemEvent
	// Contexts is indexed by Event.Ctx; Contexts[0] is the empty context.
	// Link fills it.
	Contexts []Context
	// Calls are the operator calls whose shapes the source recorded
	// (Kineto record_shapes), indexed by Event.Call; Calls[0] is no call
	// and the slice is nil when the source recorded none.
	Calls   []OpCall
	Devices []Device
	Rank    int // distributed rank; -1 unknown
	World   int // distributed world size; 0 unknown
	Dropped uint64
	// StepRule says which rule cut the steps (tracer/steps.ApplyTrace's
	// Rule* texts); "" when no rule ran.
	StepRule string
	// Meta holds source metadata worth showing (schema version, tool
	// version, the run record's fields), verbatim.
	Meta map[string]string
	// Warnings are non-fatal problems met while reading (skipped events,
	// unmatched E events); each says what and where.
	Warnings []string
	// SummaryOnly is true for inputs that hold per-kernel sums but no
	// individual events (nsys stats CSV); Summary then holds the rows.
	SummaryOnly bool
	Summary     []SummaryRow
	// PySamples are the Python agent's stack samples (every thread, ns
	// times, stacks in PyStacks, names in Strings); PyPeriodNs the
	// sampler's nominal interval, ns; PyDropped the samples the agent
	// dropped (its queue full). nil/0 without a sampler.
	PySamples  []PySample
	PyStacks   *PyStacks
	PyPeriodNs int64
	PyDropped  uint64
}

// SummaryRow is one row of a summary-only input: a name with a count and a
// total, no individual events.
type SummaryRow struct {
	Kind    Kind
	Name    string
	Count   int64
	TotalNs int64
	MinNs   int64
	MaxNs   int64
	MeanNs  int64
	P50Ns   int64 // 0 when the source gave none
}

// NewTrace returns an empty trace with its string table and context 0.
func NewTrace(format, path string) *Trace {
	return &Trace{
		Format:   format,
		Path:     path,
		Strings:  NewStrings(),
		Contexts: []Context{{Step: -1}},
		Rank:     -1,
		Meta:     map[string]string{},
	}
}

// Name returns the name of e.
func (t *Trace) Name(e *Event) string { return t.Strings.Get(e.Name) }

// Warnf appends a warning, keeping at most 100 (the rest are counted).
func (t *Trace) Warn(msg string) {
	const max = 100
	switch {
	case len(t.Warnings) < max:
		t.Warnings = append(t.Warnings, msg)
	case len(t.Warnings) == max:
		t.Warnings = append(t.Warnings, "further warnings suppressed")
	}
}
