// Package columnar writes traces as Apache Parquet files, one row per GPU
// operation and one per step, for the engines that answer questions across
// many ranks (DuckDB, Spark, Polars, pandas): `rlktop export --format
// parquet`.
//
// # Schema
//
// The ops file (WriteOps), one row per kernel, memcpy and memset, in the
// order of the sources, then of the trace's events:
//
//	column        type    meaning
//	source        INT32   position of the source in the command's arguments (0-based; a
//	                      rocprofv3 run's several CSV files are one source, a recording
//	                      of several ranked processes one source per process)
//	file          STRING  the source's file as given on the command line (a rocprofv3 run's
//	                      files joined with ","; "" for a live source)
//	rank          INT32   distributed rank (Kineto distributedInfo, the recording's hello); -1 unknown
//	device        INT32   GPU index; -1 for CPU operators shown as kernels (CPU-only traces)
//	stream        INT32   stream / queue id (CPU-only traces: the thread)
//	kind          STRING  "kernel", "memcpy" or "memset"
//	name          STRING  exactly as in the trace (mangled names stay mangled)
//	display_name  STRING  demangled and shortened (attrib.DisplayName)
//	category      STRING  attrib.Rules.Classify of the op with its launch context, as `report` counts it
//	stage         STRING  innermost annotation range open at launch; "" none
//	step          INT64   step open at launch (tracer.Context.Step); -1 none
//	start_ns      INT64   start, ns in the trace's timebase (Kineto: its µs clock × 1000)
//	end_ns        INT64   start_ns + dur_ns
//	dur_ns        INT64   duration, ns
//	correlation   INT64   correlation id shared with the launch call; 0 none
//	bytes         INT64   bytes moved or set (memcpy, memset); 0 for kernels
//
// The steps file (WriteSteps), one row per step of each source, as the
// `report` step table (attrib.StepRow):
//
//	column    type   meaning
//	source    INT32  as above
//	file      STRING as above
//	rank      INT32  as above
//	step      INT64  step number as the source numbered it
//	start_ns  INT64  start of the step range, ns
//	end_ns    INT64  start_ns + dur_ns
//	dur_ns    INT64  wall time of the step range, ns
//	gpu_ns    INT64  summed duration of the GPU ops launched in the step, ns
//	gpu_ops   INT64  GPU ops launched in the step
//
// String columns are dictionary-encoded; every column chunk is compressed
// with zstd; row groups hold at most RowGroupRows rows. sum(dur_ns) per
// category of the ops file equals the categories' total_ns of `rlktop
// report --format json` on the same files (tested with DuckDB, an
// independent reader).
package columnar

import (
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
)

// RowGroupRows bounds the rows of one row group: the writer holds one row
// group's pages in memory before writing them.
const RowGroupRows = 1 << 20

// Op is one row of the ops file (see the package doc for each column).
type Op struct {
	Source      int32  `parquet:"source"`
	File        string `parquet:"file,dict"`
	Rank        int32  `parquet:"rank"`
	Device      int32  `parquet:"device"`
	Stream      int32  `parquet:"stream"`
	Kind        string `parquet:"kind,dict"`
	Name        string `parquet:"name,dict"`
	DisplayName string `parquet:"display_name,dict"`
	Category    string `parquet:"category,dict"`
	Stage       string `parquet:"stage,dict"`
	Step        int64  `parquet:"step"`
	StartNs     int64  `parquet:"start_ns"`
	EndNs       int64  `parquet:"end_ns"`
	DurNs       int64  `parquet:"dur_ns"`
	Correlation int64  `parquet:"correlation"`
	Bytes       int64  `parquet:"bytes"`
}

// Step is one row of the steps file (see the package doc).
type Step struct {
	Source  int32  `parquet:"source"`
	File    string `parquet:"file,dict"`
	Rank    int32  `parquet:"rank"`
	Step    int64  `parquet:"step"`
	StartNs int64  `parquet:"start_ns"`
	EndNs   int64  `parquet:"end_ns"`
	DurNs   int64  `parquet:"dur_ns"`
	GPUNs   int64  `parquet:"gpu_ns"`
	GPUOps  int64  `parquet:"gpu_ops"`
}

func writerOptions() []parquet.WriterOption {
	return []parquet.WriterOption{
		parquet.Compression(&zstd.Codec{Level: zstd.SpeedDefault}),
		parquet.MaxRowsPerRowGroup(RowGroupRows),
		parquet.CreatedBy("rlktop", "", ""),
	}
}

// WriteOps writes the ops file of the sources (linked traces, in source
// order; rules nil means attrib.DefaultRules) to w and returns the rows
// written. Summary-only traces (nsys stats CSV) have no ops and add none.
// Errors are w's write errors, wrapped.
func WriteOps(w io.Writer, sources []*tracer.Trace, rules *attrib.Rules) (int64, error) {
	ow := NewOpWriter(w, rules)
	for si, t := range sources {
		ow.Source(si, t.Path, t.Rank)
		if err := ow.Add(t.Events, t.Strings, t.Contexts); err != nil {
			return ow.Rows(), err
		}
	}
	return ow.Close()
}

// OpWriter writes the ops file as its events arrive: a streamed trace's
// windows (tracefile.OpenStream) one after the other, so the file is
// written without any trace held whole. Memory: one row group's pages
// (RowGroupRows rows) and the per-name, per-context caches. The rows
// equal WriteOps' for the same sources and events. Not safe for
// concurrent use.
type OpWriter struct {
	pw    *parquet.GenericWriter[Op]
	rules *attrib.Rules
	buf   []Op
	n     int64

	src  int32
	file string
	rank int32
	c    *classifier
}

// opBatch: rows handed to the Parquet writer at once.
const opBatch = 4096

// NewOpWriter returns an OpWriter writing to w with rules (nil:
// attrib.DefaultRules).
func NewOpWriter(w io.Writer, rules *attrib.Rules) *OpWriter {
	if rules == nil {
		rules = attrib.DefaultRules()
	}
	return &OpWriter{pw: parquet.NewGenericWriter[Op](w, writerOptions()...), rules: rules, buf: make([]Op, 0, opBatch)}
}

// Source starts source index (the ops' source column) read from file with
// rank (-1 unknown); the Add calls after it are its events.
func (o *OpWriter) Source(index int, file string, rank int) {
	o.src, o.file, o.rank, o.c = int32(index), file, int32(rank), nil
}

// Add writes the GPU ops (kernel, memcpy, memset) of evs, the current
// source's next events, linked against ctxs (theirs alone: context IDs
// may restart from call to call, as each tracefile.Capture has its own)
// with names in strs (the source's one table). Errors are the writer's,
// wrapped.
func (o *OpWriter) Add(evs []tracer.Event, strs *tracer.Strings, ctxs []tracer.Context) error {
	if o.c == nil {
		o.c = newClassifier(strs, ctxs, o.rules)
	}
	o.c.setContexts(ctxs)
	for i := range evs {
		e := &evs[i]
		if e.Kind != tracer.KindKernel && e.Kind != tracer.KindMemcpy && e.Kind != tracer.KindMemset {
			continue
		}
		v, step := o.c.of(e)
		var bytes int64
		if e.Kind != tracer.KindKernel {
			bytes = e.Value
		}
		o.buf = append(o.buf, Op{
			Source: o.src, File: o.file, Rank: o.rank, Device: e.Device, Stream: e.Stream,
			Kind: v.kind, Name: v.name, DisplayName: v.disp, Category: v.cat, Stage: v.stage, Step: step,
			StartNs: e.Start, EndNs: e.End(), DurNs: e.Dur, Correlation: int64(e.Corr), Bytes: bytes,
		})
		if len(o.buf) == opBatch {
			if err := o.flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

func (o *OpWriter) flush() error {
	if _, err := o.pw.Write(o.buf); err != nil {
		return fmt.Errorf("parquet ops: %w", err)
	}
	o.n += int64(len(o.buf))
	o.buf = o.buf[:0]
	return nil
}

// Rows returns the rows written so far.
func (o *OpWriter) Rows() int64 { return o.n }

// Close writes the rows still buffered and the file's footer, and returns
// the rows written. The underlying writer is not closed.
func (o *OpWriter) Close() (int64, error) {
	if err := o.flush(); err != nil {
		return o.n, err
	}
	if err := o.pw.Close(); err != nil {
		return o.n, fmt.Errorf("parquet ops: %w", err)
	}
	return o.n, nil
}

// WriteSteps writes the steps file of the sources to w: each source's
// steps as an attrib.Aggregator of that source alone counts them (the
// `report` step table). It returns the rows written.
func WriteSteps(w io.Writer, sources []*tracer.Trace, rules *attrib.Rules) (int64, error) {
	sets := make([]StepSet, len(sources))
	for si, t := range sources {
		a := attrib.NewAggregator(rules)
		a.AddTrace(t)
		sets[si] = StepSet{File: t.Path, Rank: t.Rank, Rows: a.Snapshot().Steps}
	}
	return WriteStepSets(w, sets)
}

// StepSet is one source's steps for WriteStepSets: its file, rank (-1
// unknown) and step rows (attrib.Snapshot.Steps of that source alone).
type StepSet struct {
	File string
	Rank int
	Rows []attrib.StepRow
}

// WriteStepSets writes the steps file of sets (set i is source i) to w
// and returns the rows written.
func WriteStepSets(w io.Writer, sets []StepSet) (int64, error) {
	pw := parquet.NewGenericWriter[Step](w, writerOptions()...)
	var n int64
	for si, set := range sets {
		rows := make([]Step, 0, len(set.Rows))
		for _, s := range set.Rows {
			rows = append(rows, Step{Source: int32(si), File: set.File, Rank: int32(set.Rank), Step: s.Step,
				StartNs: s.StartNs, EndNs: s.StartNs + s.DurNs, DurNs: s.DurNs, GPUNs: s.KernelNs, GPUOps: s.Count})
		}
		if _, err := pw.Write(rows); err != nil {
			return n, fmt.Errorf("parquet steps: %w", err)
		}
		n += int64(len(rows))
	}
	if err := pw.Close(); err != nil {
		return n, fmt.Errorf("parquet steps: %w", err)
	}
	return n, nil
}

// opInfo is what an op's row takes from its name and launch context.
type opInfo struct {
	kind, name, disp, cat, stage string
}

// classifier caches opInfo per (name, operator and range stack, kind): a
// trace has few distinct names and stacks and many ops (a long capture
// has a few hundred contexts per step, but they share a few hundred
// stacks: tracer.Stacks); the category comes from an attrib.Classifier,
// which matches the rules once per name and once per stack. The step is
// the context's.
type classifier struct {
	strs   *tracer.Strings
	ctxs   []tracer.Context
	cats   *attrib.Classifier
	stacks tracer.Stacks
	cache  map[classKey]*opInfo
	disp   map[tracer.StrID]string // DisplayName per name
}

type classKey struct {
	name  tracer.StrID
	stack int32
	kind  tracer.Kind
}

func newClassifier(strs *tracer.Strings, ctxs []tracer.Context, rules *attrib.Rules) *classifier {
	return &classifier{strs: strs, ctxs: ctxs, cats: attrib.NewClassifier(rules, strs, ctxs), cache: map[classKey]*opInfo{}, disp: map[tracer.StrID]string{}}
}

// setContexts takes the contexts of the next events: new ones (IDs
// restart: each window and part of a streamed trace has its own); what is
// cached per stack stays.
func (c *classifier) setContexts(ctxs []tracer.Context) {
	c.ctxs = ctxs
	c.cats.SetContexts(ctxs)
	c.stacks.Forget()
}

func (c *classifier) of(e *tracer.Event) (v *opInfo, step int64) {
	step = -1
	var ctx *tracer.Context
	if e.Ctx != 0 && int(e.Ctx) < len(c.ctxs) {
		ctx = &c.ctxs[e.Ctx]
		step = ctx.Step
	}
	k := classKey{e.Name, -1, e.Kind}
	if len(c.ctxs) > 0 {
		k.stack = c.stacks.Of(c.ctxs, e.Ctx)
	}
	if v := c.cache[k]; v != nil {
		return v, step
	}
	v = &opInfo{kind: e.Kind.String(), name: c.strs.Get(e.Name)}
	if ctx != nil {
		if n := len(ctx.Ranges); n > 0 {
			v.stage = c.strs.Get(ctx.Ranges[n-1])
		}
	}
	v.cat = c.cats.Category(e.Kind, e.Name, e.Ctx)
	d, ok := c.disp[e.Name]
	if !ok {
		d = attrib.DisplayName(v.name)
		c.disp[e.Name] = d
	}
	v.disp = d
	c.cache[k] = v
	return v, step
}
