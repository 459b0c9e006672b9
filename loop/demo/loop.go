package demo

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/rlktop/rlktop/tracer/gotrace"
)

// ErrNeedsRestart is returned (wrapped) by Loop.Set for a flag that changes
// tensor sizes (envs, width, …): restart the loop with the new Config.
var ErrNeedsRestart = errors.New("flag changes sizes; restart the loop with it")

// Stage names, in the order a collection step runs them.
var StageNames = []string{"env.step", "env.observe", "env.legal_mask", "forward", "sample", "update"}

// StepStats describes one Step.
type StepStats struct {
	Step    int64            // step number, from 0
	Dur     int64            // ns, whole step (update included)
	StageNs map[string]int64 // ns per stage (StageNames); "update" only on update steps
	Updated bool             // an update ran at the end of this step
	// On update steps: the minibatch losses before the AdamW step and the
	// gradient norm before clipping.
	PolicyLoss, ValueLoss, GradNorm float32
	Finished                        int     // games that ended in this step's env.step
	MeanLegal                       float32 // mean legal moves per board
	Flags                           map[string]string
}

// Loop is the built-in self-play training loop. It is not safe for
// concurrent use except Set, Flags and Backends, which may be called from
// any goroutine (a control frame handler).
type Loop struct {
	cfg   Config
	tr    *gotrace.Tracer
	nm    names
	games *Games
	model *Model
	act   *acts
	tacts *acts
	gr    *grads

	mask    []bool
	logits  []float32
	probs   []float32
	sorted  []float32
	cum     []float32
	keys    []uint64
	actions []int32
	pickIdx []int32 // index of the action within the legal list
	ready   bool    // actions hold the previous step's samples
	step    int64

	mu      sync.Mutex
	pending [][2]string
	live    Config // cfg with pending flags applied, for Flags()

	buf sampleBuf
}

type sampleBuf struct {
	n        int
	tok      []int32
	moves    []int32
	nmoves   []int32
	act      []int32
	env      []int32
	player   []int8
	value    []float32
	ret      []float32
	resolved []bool
	adv      []float32
}

// New builds the loop: games, model (weights from cfg.Seed) and every
// buffer. tr may be nil (a disabled tracer is used). Zero fields of cfg take
// DefaultConfig's values; an invalid cfg is an error wrapping ErrBadValue.
func New(cfg Config, tr *gotrace.Tracer) (*Loop, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if tr == nil {
		tr = gotrace.New(16)
		tr.Enable(false)
	}
	g, err := NewGames(cfg.Envs, cfg.Group, cfg.MaxPlies, cfg.Seed)
	if err != nil {
		return nil, err
	}
	m := newModel(cfg)
	B := cfg.Envs
	cap := cfg.UpdateEvery * B
	bm := min(cfg.UpdateBatch, cap)
	l := &Loop{
		cfg: cfg, live: cfg, tr: tr, nm: registerNames(tr), games: g, model: m,
		act: m.newActs(B), tacts: m.newActs(bm), gr: m.newGrads(bm),
		mask: make([]bool, B*Actions), logits: make([]float32, B*Actions), probs: make([]float32, B*Actions),
		sorted: make([]float32, B*Actions), cum: make([]float32, B*Actions), keys: make([]uint64, B*Actions),
		actions: make([]int32, B), pickIdx: make([]int32, B),
		buf: sampleBuf{
			tok: make([]int32, cap*Tokens), moves: make([]int32, cap*MaxLegal), nmoves: make([]int32, cap),
			act: make([]int32, cap), env: make([]int32, cap), player: make([]int8, cap), value: make([]float32, cap),
			ret: make([]float32, cap), resolved: make([]bool, cap), adv: make([]float32, cap),
		},
	}
	return l, nil
}

// Config returns the configuration in force (pending flags not applied).
func (l *Loop) Config() Config { return l.cfg }

// Set applies a live flag (FlagTable: the backend flags, temperature,
// top_p, lr, …) at the next step boundary. Unknown keys and bad values
// return errors wrapping ErrUnknownFlag / ErrBadValue; a valid value of a
// flag that is not live (sizes, seed, update schedule) ErrNeedsRestart.
func (l *Loop) Set(key, value string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.live
	if err := c.ParseFlag(key, value); err != nil {
		return err
	}
	if !FlagTable.IsLive(key) {
		return fmt.Errorf("demo: set %s=%s: %w", key, value, ErrNeedsRestart)
	}
	l.live = c
	l.pending = append(l.pending, [2]string{key, value})
	return nil
}

// Flags returns every flag's value, pending changes included.
func (l *Loop) Flags() map[string]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.live.Flags()
}

// Tracer returns the tracer the loop records into.
func (l *Loop) Tracer() *gotrace.Tracer { return l.tr }

func (l *Loop) applyPending() {
	l.mu.Lock()
	p := l.pending
	l.pending = nil
	l.mu.Unlock()
	for _, kv := range p {
		if err := l.cfg.ParseFlag(kv[0], kv[1]); err == nil {
			l.tr.Instant(l.tr.Name("flag " + kv[0] + "=" + kv[1]))
		}
	}
}

// Step runs one collection step — env.step (the actions sampled by the
// previous step), env.observe, env.legal_mask, forward, sample — and, every
// UpdateEvery steps, an update (advantages, forward, backward, AdamW) on a
// minibatch of the samples collected since the last update. Errors come
// from the game engine (an illegal sampled action would be a bug).
func (l *Loop) Step() (StepStats, error) {
	t0 := time.Now()
	tr, nm := l.tr, &l.nm
	l.applyPending()
	cfg := l.cfg
	st := StepStats{Step: l.step, StageNs: make(map[string]int64, len(StageNames)), Flags: cfg.Flags()}
	tr.StepBegin(l.step)
	mark := t0
	stage := func(name string) {
		now := time.Now()
		st.StageNs[name] = int64(now.Sub(mark))
		mark = now
	}

	tr.RangeBegin(nm.stEnvStep)
	s := tr.Now()
	if l.ready {
		if err := l.games.Step(l.actions); err != nil {
			tr.RangeEnd()
			tr.StepEnd()
			return st, err
		}
		l.resolve()
		for _, d := range l.games.Done {
			if d {
				st.Finished++
			}
		}
	}
	tr.Kernel(nm.envStepK, s)
	tr.RangeEnd()
	stage("env.step")

	tr.RangeBegin(nm.stObserve)
	s = tr.Now()
	l.games.Observe(l.act.tok)
	tr.Kernel(nm.envObserveK, s)
	tr.RangeEnd()
	stage("env.observe")

	tr.RangeBegin(nm.stLegal)
	s = tr.Now()
	if cfg.Head == "materialized" {
		l.games.Legal(l.mask)
	} else {
		l.games.Legal(nil)
	}
	tr.Kernel(nm.envLegalK, s)
	tr.RangeEnd()
	stage("env.legal_mask")
	var nl int
	for _, n := range l.games.NMoves {
		nl += int(n)
	}
	st.MeanLegal = float32(nl) / float32(cfg.Envs)

	tr.RangeBegin(nm.stForward)
	l.model.forward(l.act, cfg.Attention, cfg.QKV, tr, nm)
	stride := l.rowsLogits(cfg.Head)
	tr.RangeEnd()
	stage("forward")

	tr.RangeBegin(nm.stSample)
	l.sample(cfg, stride)
	l.record()
	tr.RangeEnd()
	stage("sample")

	if (l.step+1)%int64(cfg.UpdateEvery) == 0 {
		tr.RangeBegin(nm.stUpdate)
		st.PolicyLoss, st.ValueLoss, st.GradNorm = l.update(cfg)
		st.Updated = true
		tr.RangeEnd()
		stage("update")
	}
	tr.StepEnd()
	st.Dur = int64(time.Since(t0))
	l.step++
	return st, nil
}

// rowsLogits runs the chosen move head into l.logits and returns the row
// stride (Actions for materialized, MaxLegal for gatherdot).
func (l *Loop) rowsLogits(head string) int {
	s := l.tr.Now()
	if head == "materialized" {
		l.model.headMaterialized(l.logits, l.mask, l.act)
		l.tr.Kernel(l.nm.headMat, s)
		return Actions
	}
	l.model.headGather(l.logits, l.games.Moves, l.games.NMoves, l.act)
	l.tr.Kernel(l.nm.headGather, s)
	return MaxLegal
}

// sample draws one action per board from the temperature / top-p
// distribution of l.logits (rows of stride) into l.actions.
func (l *Loop) sample(cfg Config, stride int) {
	tr, nm := l.tr, &l.nm
	B := cfg.Envs
	n := make([]int32, B)
	for i := range n {
		if stride == Actions {
			n[i] = Actions
		} else {
			n[i] = l.games.NMoves[i]
		}
	}
	s := tr.Now()
	softmaxRows(l.probs, l.logits, stride, n, cfg.Temperature)
	s = tr.Kernel(nm.toppSoftmax, s)
	sortRows(l.keys, l.sorted, l.probs, stride, n)
	s = tr.Kernel(nm.toppSort, s)
	for b := 0; b < B; b++ {
		c := l.cum[b*stride : b*stride+int(n[b])]
		copy(c, l.sorted[b*stride:])
		if cfg.Scan == "sklansky" {
			scanSklansky(c)
		} else {
			scanSerial(c)
		}
	}
	if cfg.Scan == "sklansky" {
		s = tr.Kernel(nm.scanSklansky, s)
	} else {
		s = tr.Kernel(nm.scanSerial, s)
	}
	for b := 0; b < B; b++ {
		c := l.cum[b*stride : b*stride+int(n[b])]
		so := l.sorted[b*stride : b*stride+int(n[b])]
		k := cutoff(c, so, cfg.TopP)
		r := newRNG(mix3(cfg.Seed, uint64(l.step), uint64(b)))
		var pos int
		if cfg.Sampler == "gumbel" {
			pos = drawGumbel(so, k, &r)
		} else {
			pos = drawMultinomial(c, k, r.uniform())
		}
		idx := int32(l.keys[b*stride+pos] & 0xffffffff)
		legal := l.games.LegalOf(b)
		if stride == Actions {
			l.actions[b] = idx
			j, _ := slices.BinarySearch(legal, idx)
			l.pickIdx[b] = int32(j)
		} else {
			l.actions[b] = legal[idx]
			l.pickIdx[b] = idx
		}
	}
	if cfg.Sampler == "gumbel" {
		tr.Kernel(nm.sampleG, s)
	} else {
		tr.Kernel(nm.sampleMult, s)
	}
	l.ready = true
}

// record appends this step's boards, legal lists, actions and values to the
// update buffer.
func (l *Loop) record() {
	b := &l.buf
	for e := 0; e < l.cfg.Envs; e++ {
		i := b.n
		if i >= len(b.nmoves) {
			return
		}
		copy(b.tok[i*Tokens:(i+1)*Tokens], l.act.tok[e*Tokens:])
		lg := l.games.LegalOf(e)
		copy(b.moves[i*MaxLegal:], lg)
		b.nmoves[i] = int32(len(lg))
		b.act[i] = l.pickIdx[e]
		b.env[i] = int32(e)
		b.player[i] = l.games.ToMove[e]
		b.value[i] = l.act.value[e]
		b.resolved[i] = false
		b.n++
	}
}

// resolve gives every buffered sample of a game that just ended its return:
// +1 for the winner's moves, −1 for the loser's, 0 for a draw.
func (l *Loop) resolve() {
	b := &l.buf
	for i := 0; i < b.n; i++ {
		e := b.env[i]
		if b.resolved[i] || !l.games.Done[e] {
			continue
		}
		w := l.games.Winner[e]
		switch {
		case w < 0:
			b.ret[i] = 0
		case int8(w) == b.player[i]:
			b.ret[i] = 1
		default:
			b.ret[i] = -1
		}
		b.resolved[i] = true
	}
}
