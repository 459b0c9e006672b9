package demo

import (
	"math"

	"github.com/rlktop/rlktop/tracer/gotrace"
)

// Probe batch: ProbeBoards fixed positions, reached by ProbePlies seeded
// random plies from the start position (independent of Config.Seed), so
// that every arm evaluates the same inputs.
const (
	ProbeBoards = 8
	ProbePlies  = 20
	probeSeed   = 0x70726f6265
)

// Probe evaluates the fixed probe batch with the loop's current weights and
// backends (attention, qkv, head) and returns, board after board, the
// logits of the legal moves in increasing action order, followed by the
// ProbeBoards value-head outputs. The layout does not depend on the
// backends, so two arms' probes compare element by element (CompareProbe).
// It records no trace events and leaves the loop's state untouched.
func (l *Loop) Probe() ([]float32, error) {
	g, err := NewGames(ProbeBoards, 1, 1<<30, probeSeed)
	if err != nil {
		return nil, err
	}
	r := newRNG(probeSeed)
	acts := make([]int32, ProbeBoards)
	for p := 0; p < ProbePlies; p++ {
		g.Legal(nil)
		for i := range acts {
			lg := g.LegalOf(i)
			acts[i] = lg[r.next()%uint64(len(lg))]
		}
		if err := g.Step(acts); err != nil {
			return nil, err
		}
	}
	mask := make([]bool, ProbeBoards*Actions)
	g.Legal(mask)
	m := l.model
	a := m.newActs(ProbeBoards)
	g.Observe(a.tok)
	tr := gotrace.New(1)
	tr.Enable(false)
	nm := registerNames(tr)
	m.forward(a, l.cfg.Attention, l.cfg.QKV, tr, &nm)
	var out []float32
	if l.cfg.Head == "materialized" {
		full := make([]float32, ProbeBoards*Actions)
		m.headMaterialized(full, mask, a)
		for b := 0; b < ProbeBoards; b++ {
			for _, act := range g.LegalOf(b) {
				out = append(out, full[b*Actions+int(act)])
			}
		}
	} else {
		comp := make([]float32, ProbeBoards*MaxLegal)
		m.headGather(comp, g.Moves, g.NMoves, a)
		for b := 0; b < ProbeBoards; b++ {
			out = append(out, comp[b*MaxLegal:b*MaxLegal+int(g.NMoves[b])]...)
		}
	}
	return append(out, a.value...), nil
}

// Probe builds a loop from cfg (initial weights from cfg.Seed) and returns
// its probe (see Loop.Probe).
func Probe(cfg Config) ([]float32, error) {
	l, err := New(cfg, nil)
	if err != nil {
		return nil, err
	}
	return l.Probe()
}

// ProbeDiff compares two probes element by element.
type ProbeDiff struct {
	Len     int     // elements compared (the shorter length)
	MaxAbs  float64 // max |a−b| over pairs where neither is NaN
	MaxULP  int64   // max ULPDistance over the same pairs
	NaN     int     // pairs where either side is NaN
	Bitwise bool    // same length and every element has the same bits
}

// CompareProbe compares probes a and b; differing lengths compare the
// common prefix and report Bitwise false.
func CompareProbe(a, b []float32) ProbeDiff {
	n := min(len(a), len(b))
	d := ProbeDiff{Len: n, Bitwise: len(a) == len(b)}
	for i := 0; i < n; i++ {
		x, y := a[i], b[i]
		if math.Float32bits(x) != math.Float32bits(y) {
			d.Bitwise = false
		}
		if x != x || y != y {
			d.NaN++
			continue
		}
		d.MaxAbs = max(d.MaxAbs, math.Abs(float64(x)-float64(y)))
		d.MaxULP = max(d.MaxULP, ULPDistance(x, y))
	}
	return d
}

// ULPDistance is the number of float32 steps between x and y: the
// difference of their positions on the ordered line of float32 values
// (+0 and −0 share position 0, so their distance is 0; the smallest
// positive and negative subnormals are 2 apart). Infinities are the
// positions just past the largest finite values. NaN inputs give
// math.MaxInt64.
func ULPDistance(x, y float32) int64 {
	if x != x || y != y {
		return math.MaxInt64
	}
	pos := func(f float32) int64 {
		b := int64(math.Float32bits(f))
		if b&(1<<31) != 0 {
			return -(b &^ (1 << 31))
		}
		return b
	}
	d := pos(x) - pos(y)
	if d < 0 {
		d = -d
	}
	return d
}
