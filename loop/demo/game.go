package demo

import (
	"fmt"
)

// The game is 9x9 Ataxx, batched. Two players (0 and 1) own pieces; a move
// takes one of the mover's pieces to an empty cell at Chebyshev distance 1
// (a clone: the source stays) or 2 (a jump: the source empties), and every
// opponent piece adjacent (8-neighbourhood) to the destination changes sides.
// Rules as in the usual Ataxx description (Wikipedia "Ataxx"), simplified
// where noted:
//   - start: player 0 on a1 and i9, player 1 on i1 and a9 (the corners);
//   - the game ends when a player has no pieces, when the side to move has no
//     legal move (then every empty cell goes to the other player — Ataxx's
//     "fill the board" ending without playing it out), or after MaxPlies
//     plies; the player with more pieces wins (+1), the other loses (-1),
//     equal counts draw (0);
//   - no blocked cells, no pass moves.
//
// Actions are from*Cells + to (from, to in 0..80, row-major), so the action
// space is Cells*Cells = 6561 from→to pairs, of which at most 24 per own
// piece are legal.

// Board and token geometry.
const (
	Side    = 9           // board side
	Cells   = Side * Side // 81 cell tokens
	Globals = 9           // global tokens after the cells
	Tokens  = Cells + Globals
	Actions = Cells * Cells // 6561 from→to pairs

	// Token vocabulary: cell tokens 0 empty, 1 mine, 2 theirs (relative to
	// the side to move); global g with bucket v (0..15) is 3+16*g+v.
	globalBuckets = 16
	Vocab         = 3 + Globals*globalBuckets

	// MaxLegal bounds the legal moves of one position (81 pieces × 24).
	MaxLegal = Cells * 24
)

// ring24[c] lists the cells at Chebyshev distance 1 or 2 from c in
// increasing cell order; near8[c] those at distance 1.
var (
	ring24    [Cells][24]uint8
	ring24Len [Cells]uint8
	near8     [Cells][8]uint8
	near8Len  [Cells]uint8
)

func init() {
	for c := 0; c < Cells; c++ {
		r, q := c/Side, c%Side
		for t := 0; t < Cells; t++ {
			tr, tq := t/Side, t%Side
			d := max(abs(tr-r), abs(tq-q))
			if d == 1 || d == 2 {
				ring24[c][ring24Len[c]] = uint8(t)
				ring24Len[c]++
			}
			if d == 1 {
				near8[c][near8Len[c]] = uint8(t)
				near8Len[c]++
			}
		}
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// Games is a batch of n independent Ataxx games that restart automatically
// when they end. All slices are indexed by game; Board is n*Cells.
type Games struct {
	N        int
	MaxPlies int
	Board    []int8  // n*Cells: 0 empty, 1 player 0, 2 player 1
	ToMove   []int8  // side to move, 0 or 1
	Ply      []int32 // plies played in the current game (opening included)
	Count    [][2]int16
	LastFrom []int16 // -1 when no move yet
	LastTo   []int16
	Episode  []int64 // games started in this slot

	// Outputs of the last Step, per game.
	Done   []bool // the game ended with that move (and the slot restarted)
	Winner []int8 // 0, 1, or -1 draw; valid where Done

	// Legal moves of the current positions, from Legal(): Moves[i*MaxLegal:]
	// holds NMoves[i] actions in increasing order.
	Moves  []int32
	NMoves []int32

	seed  uint64
	group int
}

// NewGames returns n games seeded by seed. Games in the same group (slots
// g*group .. g*group+group-1) play the same random opening (0–4 random plies
// from the start position) in their k-th episode, so their outcomes can be
// compared (group-normalised advantages).
func NewGames(n, group, maxPlies int, seed uint64) (*Games, error) {
	if n <= 0 || group <= 0 || maxPlies <= 0 {
		return nil, fmt.Errorf("demo: games: n=%d group=%d max_plies=%d must be positive", n, group, maxPlies)
	}
	g := &Games{
		N: n, MaxPlies: maxPlies,
		Board: make([]int8, n*Cells), ToMove: make([]int8, n), Ply: make([]int32, n),
		Count: make([][2]int16, n), LastFrom: make([]int16, n), LastTo: make([]int16, n),
		Episode: make([]int64, n), Done: make([]bool, n), Winner: make([]int8, n),
		Moves: make([]int32, n*MaxLegal), NMoves: make([]int32, n),
		seed: seed, group: group,
	}
	for i := 0; i < n; i++ {
		g.reset(i)
	}
	return g, nil
}

func (g *Games) reset(i int) {
	b := g.Board[i*Cells : (i+1)*Cells]
	clear(b)
	b[0], b[Cells-1] = 1, 1
	b[Side-1], b[Cells-Side] = 2, 2
	g.ToMove[i] = 0
	g.Ply[i] = 0
	g.Count[i] = [2]int16{2, 2}
	g.LastFrom[i], g.LastTo[i] = -1, -1
	r := newRNG(mix3(g.seed, uint64(i/g.group), uint64(g.Episode[i])))
	g.Episode[i]++
	k := int(r.next() % 5)
	var moves [MaxLegal]int32
	for p := 0; p < k; p++ {
		n := legalMoves(b, g.ToMove[i]+1, moves[:])
		if n == 0 {
			break
		}
		g.apply(i, moves[r.next()%uint64(n)])
	}
}

// apply plays a (already validated) action in game i.
func (g *Games) apply(i int, a int32) {
	b := g.Board[i*Cells : (i+1)*Cells]
	me := g.ToMove[i]
	own, opp := me+1, 2-me
	f, t := int(a)/Cells, int(a)%Cells
	jump := max(abs(f/Side-t/Side), abs(f%Side-t%Side)) == 2
	c := g.Count[i]
	if jump {
		b[f] = 0
	} else {
		c[me]++
	}
	b[t] = own
	for k := 0; k < int(near8Len[t]); k++ {
		n := near8[t][k]
		if b[n] == opp {
			b[n] = own
			c[me]++
			c[1-me]--
		}
	}
	g.Count[i] = c
	g.LastFrom[i], g.LastTo[i] = int16(f), int16(t)
	g.Ply[i]++
	g.ToMove[i] = 1 - me
}

// legalMoves writes the legal actions of owner (1 or 2) on board b into out in
// increasing action order and returns how many.
func legalMoves(b []int8, owner int8, out []int32) int {
	n := 0
	b = b[:Cells]
	for f := 0; f < Cells; f++ {
		if b[f] != owner {
			continue
		}
		base := int32(f * Cells)
		rl := int(ring24Len[f])
		for k := 0; k < rl; k++ {
			t := ring24[f][k]
			if b[t] == 0 {
				out[n] = base + int32(t)
				n++
			}
		}
	}
	return n
}

// hasMove reports whether owner (1 or 2) has any legal move on b.
func hasMove(b []int8, owner int8) bool {
	b = b[:Cells]
	for f := 0; f < Cells; f++ {
		if b[f] != owner {
			continue
		}
		rl := int(ring24Len[f])
		for k := 0; k < rl; k++ {
			if b[ring24[f][k]] == 0 {
				return true
			}
		}
	}
	return false
}

// Step plays actions[i] in every game i, sets Done/Winner, and restarts
// finished games. An illegal action is an error naming the game and action;
// the games are then left partly stepped and should be discarded.
func (g *Games) Step(actions []int32) error {
	if len(actions) != g.N {
		return fmt.Errorf("demo: step: %d actions for %d games", len(actions), g.N)
	}
	for i, a := range actions {
		b := g.Board[i*Cells : (i+1)*Cells]
		own := g.ToMove[i] + 1
		if a < 0 || a >= Actions {
			return fmt.Errorf("demo: step: game %d: action %d outside 0..%d", i, a, Actions-1)
		}
		f, t := int(a)/Cells, int(a)%Cells
		d := max(abs(f/Side-t/Side), abs(f%Side-t%Side))
		if b[f] != own || b[t] != 0 || d < 1 || d > 2 {
			return fmt.Errorf("demo: step: game %d: illegal action %d (from %d to %d) for player %d", i, a, f, t, own-1)
		}
		g.apply(i, a)
		g.Done[i] = false
		c := g.Count[i]
		mover := 1 - g.ToMove[i]
		end := c[0] == 0 || c[1] == 0 || int(g.Ply[i]) >= g.MaxPlies
		if !end && !hasMove(b, g.ToMove[i]+1) {
			// The side to move is stuck: the mover takes every empty cell.
			end = true
			c[mover] += int16(Cells) - c[0] - c[1]
		}
		if end {
			w := int8(-1)
			if c[0] > c[1] {
				w = 0
			} else if c[1] > c[0] {
				w = 1
			}
			g.Done[i], g.Winner[i] = true, w
			g.reset(i)
		}
	}
	return nil
}

// Legal fills Moves/NMoves for the current positions and, if mask is not
// nil, mask[i*Actions+a] = true exactly for the legal actions (mask must
// have N*Actions entries).
func (g *Games) Legal(mask []bool) {
	for i := 0; i < g.N; i++ {
		g.NMoves[i] = int32(legalMoves(g.Board[i*Cells:(i+1)*Cells], g.ToMove[i]+1, g.Moves[i*MaxLegal:(i+1)*MaxLegal]))
	}
	if mask == nil {
		return
	}
	clear(mask[:g.N*Actions])
	for i := 0; i < g.N; i++ {
		m := mask[i*Actions : (i+1)*Actions]
		for _, a := range g.Moves[i*MaxLegal : i*MaxLegal+int(g.NMoves[i])] {
			m[a] = true
		}
	}
}

// LegalOf returns game i's legal actions from the last Legal call.
func (g *Games) LegalOf(i int) []int32 {
	return g.Moves[i*MaxLegal : i*MaxLegal+int(g.NMoves[i])]
}

func bucket(v, hi int) int32 {
	if v < 0 {
		v = 0
	}
	b := v * globalBuckets / (hi + 1)
	if b >= globalBuckets {
		b = globalBuckets - 1
	}
	return int32(b)
}

// Observe writes the token ids of every game into tok (N*Tokens): the 81
// cells relative to the side to move (0 empty, 1 mine, 2 theirs), then 9
// global tokens, each 3+16*g+bucket: side to move, ply, my pieces, their
// pieces, empty cells, last from-row, last to-row, last move was a jump,
// and a constant summary token (the value head reads it).
func (g *Games) Observe(tok []int32) {
	for i := 0; i < g.N; i++ {
		b := g.Board[i*Cells : (i+1)*Cells]
		o := tok[i*Tokens : (i+1)*Tokens]
		me := g.ToMove[i] + 1
		for c := 0; c < Cells; c++ {
			v := b[c]
			switch {
			case v == 0:
				o[c] = 0
			case v == me:
				o[c] = 1
			default:
				o[c] = 2
			}
		}
		c := g.Count[i]
		mine, theirs := int(c[g.ToMove[i]]), int(c[1-g.ToMove[i]])
		lf, lt := int(g.LastFrom[i]), int(g.LastTo[i])
		jump := 0
		if lf >= 0 && max(abs(lf/Side-lt/Side), abs(lf%Side-lt%Side)) == 2 {
			jump = 1
		}
		vals := [Globals]int32{
			int32(g.ToMove[i]),
			bucket(int(g.Ply[i]), g.MaxPlies),
			bucket(mine, Cells),
			bucket(theirs, Cells),
			bucket(Cells-mine-theirs, Cells),
			int32(lf/Side + 1), // -1/9 = 0 for "none"
			int32(lt/Side + 1),
			int32(jump),
			0,
		}
		if lf < 0 {
			vals[5], vals[6] = 0, 0
		}
		for k := 0; k < Globals; k++ {
			o[Cells+k] = 3 + int32(k*globalBuckets) + vals[k]
		}
	}
}
