package demo

import "testing"

// TestRing24 checks the move geometry against a hand count: a corner has 3
// neighbours at distance 1 and 5 at distance 2; the centre 8 and 16.
func TestRing24(t *testing.T) {
	if near8Len[0] != 3 || ring24Len[0] != 8 {
		t.Fatalf("corner: near %d ring %d, want 3, 8", near8Len[0], ring24Len[0])
	}
	if near8Len[40] != 8 || ring24Len[40] != 24 {
		t.Fatalf("centre: near %d ring %d, want 8, 24", near8Len[40], ring24Len[40])
	}
}

func TestStartAndCapture(t *testing.T) {
	g, err := NewGames(1, 1, 200, 1)
	if err != nil {
		t.Fatal(err)
	}
	b := g.Board[:Cells]
	clear(b)
	b[0], b[80] = 1, 1
	b[8], b[72] = 2, 2
	g.ToMove[0], g.Ply[0], g.Count[0] = 0, 0, [2]int16{2, 2}
	g.Legal(nil)
	// Each corner piece reaches 3 clone + 5 jump cells: 16 moves.
	if g.NMoves[0] != 16 {
		t.Fatalf("start has %d legal moves, want 16", g.NMoves[0])
	}
	// Player 0 on 0, player 1 on 2 and 10 (both adjacent to 1) and 80.
	clear(b)
	b[0] = 1
	b[2], b[10], b[80] = 2, 2, 2
	g.Count[0] = [2]int16{1, 3}
	if err := g.Step([]int32{0*Cells + 1}); err != nil {
		t.Fatal(err)
	}
	// Clone to 1 captures 2 and 10: player 0 has 0,1,2,10 = 4, player 1 has 80.
	if b[1] != 1 || b[2] != 1 || b[10] != 1 || b[80] != 2 || g.Count[0] != [2]int16{4, 1} {
		t.Fatalf("capture: b1=%d b2=%d b10=%d count=%v", b[1], b[2], b[10], g.Count[0])
	}
	if g.Done[0] || g.ToMove[0] != 1 {
		t.Fatal("game ended or turn did not pass")
	}
	// Player 1 (only on 80) jumps 80 -> 60 (row 6, col 6): 80 empties.
	if err := g.Step([]int32{80*Cells + 60}); err != nil {
		t.Fatal(err)
	}
	if b[80] != 0 || b[60] != 2 || g.Count[0] != [2]int16{4, 1} {
		t.Fatalf("jump: b80=%d b60=%d count=%v", b[80], b[60], g.Count[0])
	}
}

func TestGameEnds(t *testing.T) {
	g, _ := NewGames(1, 1, 200, 1)
	b := g.Board[:Cells]
	// Player 1's only piece on 2 is captured: game over, player 0 wins.
	clear(b)
	b[0], b[2] = 1, 2
	g.ToMove[0], g.Count[0] = 0, [2]int16{1, 1}
	if err := g.Step([]int32{0*Cells + 1}); err != nil {
		t.Fatal(err)
	}
	if !g.Done[0] || g.Winner[0] != 0 {
		t.Fatalf("done=%v winner=%d, want true, 0", g.Done[0], g.Winner[0])
	}
	// After the restart the board is a fresh game: 2 + opening pieces each.
	if g.Ply[0] > 4 || g.Count[0][0] < 2 || g.Count[0][1] < 2 {
		t.Fatalf("slot not restarted: ply %d count %v", g.Ply[0], g.Count[0])
	}
	// Stuck: player 1 on 0 walled in by player 0 on every cell at distance
	// 1..2 except 1; player 0 fills 1 with a clone from 2 (capturing 0? no:
	// 0 is adjacent to 1, so it is captured and player 1 has no pieces).
	// Instead wall player 1 in with a distance-2 ring fully occupied.
	clear(b)
	for k := 0; k < int(ring24Len[0]); k++ {
		b[ring24[0][k]] = 1
	}
	b[0] = 2
	b[ring24[0][0]] = 0 // cell 1 empty; player 0 fills it from cell 2
	g.ToMove[0] = 0
	g.Count[0] = [2]int16{int16(ring24Len[0]) - 1, 1}
	if err := g.Step([]int32{2*Cells + 1}); err != nil {
		t.Fatal(err)
	}
	// Cell 1 is adjacent to 0, so player 1's only piece is captured.
	if !g.Done[0] || g.Winner[0] != 0 {
		t.Fatalf("capture-out: done=%v winner=%d", g.Done[0], g.Winner[0])
	}
	// Max plies: a game at MaxPlies-1 ends after one move, counted.
	g.MaxPlies = 10
	clear(b)
	b[0], b[80], b[79] = 1, 2, 2
	g.ToMove[0], g.Ply[0], g.Count[0] = 0, 9, [2]int16{1, 2}
	if err := g.Step([]int32{0*Cells + 1}); err != nil {
		t.Fatal(err)
	}
	if !g.Done[0] || g.Winner[0] != -1 { // 2 vs 2: draw
		t.Fatalf("max plies: done=%v winner=%d, want draw", g.Done[0], g.Winner[0])
	}
}

// TestLegalBruteForce compares the legal list with a check of all 6561
// from→to pairs against the rule text, on positions from random play.
func TestLegalBruteForce(t *testing.T) {
	g, _ := NewGames(16, 4, 120, 7)
	r := newRNG(3)
	acts := make([]int32, g.N)
	mask := make([]bool, g.N*Actions)
	for step := 0; step < 60; step++ {
		g.Legal(mask)
		for i := 0; i < g.N; i++ {
			b := g.Board[i*Cells : (i+1)*Cells]
			own := g.ToMove[i] + 1
			var want []int32
			for f := 0; f < Cells; f++ {
				for to := 0; to < Cells; to++ {
					dr, dc := abs(f/9-to/9), abs(f%9-to%9)
					d := max(dr, dc)
					if b[f] == own && b[to] == 0 && (d == 1 || d == 2) {
						want = append(want, int32(f*Cells+to))
					}
				}
			}
			got := g.LegalOf(i)
			if len(got) != len(want) {
				t.Fatalf("step %d game %d: %d legal, brute force %d", step, i, len(got), len(want))
			}
			for k := range want {
				if got[k] != want[k] || !mask[i*Actions+int(want[k])] {
					t.Fatalf("step %d game %d: move %d: %d vs %d", step, i, k, got[k], want[k])
				}
			}
			n := 0
			for _, m := range mask[i*Actions : (i+1)*Actions] {
				if m {
					n++
				}
			}
			if n != len(want) {
				t.Fatalf("mask has %d set, want %d", n, len(want))
			}
			// Piece counts match the board.
			var c [2]int16
			for _, v := range b {
				if v > 0 {
					c[v-1]++
				}
			}
			if c != g.Count[i] {
				t.Fatalf("count %v, board has %v", g.Count[i], c)
			}
			acts[i] = got[r.next()%uint64(len(got))]
		}
		if err := g.Step(acts); err != nil {
			t.Fatal(err)
		}
	}
}

func TestDeterministic(t *testing.T) {
	run := func() []int8 {
		g, _ := NewGames(8, 2, 60, 42)
		r := newRNG(9)
		acts := make([]int32, g.N)
		for s := 0; s < 100; s++ {
			g.Legal(nil)
			for i := range acts {
				l := g.LegalOf(i)
				acts[i] = l[r.next()%uint64(len(l))]
			}
			if err := g.Step(acts); err != nil {
				t.Fatal(err)
			}
		}
		return append([]int8(nil), g.Board...)
	}
	a, b := run(), run()
	for i := range a {
		if a[i] != b[i] {
			t.Fatal("same seed, different games")
		}
	}
}

// BenchmarkEnvStep: one env step = Step + Observe + Legal (list and mask)
// for one game, over 256 games in random self-play; reports env_steps/s.
func BenchmarkEnvStep(b *testing.B) {
	const n = 256
	g, _ := NewGames(n, 8, 200, 1)
	r := newRNG(2)
	acts := make([]int32, n)
	tok := make([]int32, n*Tokens)
	mask := make([]bool, n*Actions)
	g.Legal(mask)
	b.ReportAllocs()
	c0 := processCPU()
	for b.Loop() {
		for i := range acts {
			l := g.LegalOf(i)
			acts[i] = l[r.next()%uint64(len(l))]
		}
		if err := g.Step(acts); err != nil {
			b.Fatal(err)
		}
		g.Observe(tok)
		g.Legal(mask)
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "env_steps/s")
	b.ReportMetric(float64(n)*float64(b.N)/(float64(processCPU()-c0)/1e9), "env_steps/cpu_s")
}

func TestIllegalMoveError(t *testing.T) {
	g, _ := NewGames(1, 1, 200, 1)
	if err := g.Step([]int32{Actions}); err == nil {
		t.Fatal("out-of-range action accepted")
	}
	g2, _ := NewGames(1, 1, 200, 1)
	b := g2.Board[:Cells]
	// A move from an empty cell is illegal whatever the opening was.
	for f := 0; f < Cells; f++ {
		if b[f] == 0 {
			if err := g2.Step([]int32{int32(f*Cells + f)}); err == nil {
				t.Fatal("move from empty cell accepted")
			}
			return
		}
	}
}
