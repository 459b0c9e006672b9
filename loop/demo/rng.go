package demo

// rng is SplitMix64 (Steele, Lea, Flood 2014): tiny, fast, and fully
// determined by its seed, so every draw of the loop is reproducible.
type rng struct{ s uint64 }

func newRNG(seed uint64) rng { return rng{s: seed} }

func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// uniform returns a float32 in (0, 1): 24 random bits, offset by half a step
// so that neither 0 nor 1 occurs (log(u) is finite).
func (r *rng) uniform() float32 {
	return (float32(r.next()>>40) + 0.5) * (1.0 / (1 << 24))
}

// normal returns a standard normal float32 (Box–Muller).
func (r *rng) normal() float32 {
	u1, u2 := float64(r.uniform()), float64(r.uniform())
	return float32(sqrt64(-2*log64(u1)) * cos64(2*3.141592653589793*u2))
}

// mix3 hashes three words into a seed.
func mix3(a, b, c uint64) uint64 {
	r := newRNG(a ^ 0x5851f42d4c957f2d)
	r.s ^= r.next() + b*0x2545f4914f6cdd1d
	r.s ^= r.next() + c*0x9e3779b97f4a7c15
	return r.next()
}
