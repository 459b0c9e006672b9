package tracefile

import (
	"math/rand/v2"
	"testing"
)

// skipFlat ends where skip ends, or fails as skip fails, on every input
// it is given: here random strings over the bytes that matter to either
// (brackets, quotes, backslashes) starting with '{', and a flow event.
func TestSkipFlatSameAsSkip(t *testing.T) {
	const alphabet = `{}[]"\a:,`
	r := rand.New(rand.NewPCG(1, 2))
	inputs := [][]byte{
		[]byte(`{"ph":"f","id":1,"pid":2,"tid":3,"ts":4,"cat":"async_cpu_to_gpu","name":"async_gpu","bp":"e"},`),
		[]byte(`{"a":"}","b":"x"}`),
		[]byte(`{"a":"\"}"}`),
		[]byte(`{"a":1]}`),
	}
	for range 200000 {
		b := make([]byte, 1+r.IntN(12))
		b[0] = '{'
		for i := 1; i < len(b); i++ {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		inputs = append(inputs, b)
	}
	var st []byte
	for _, b := range inputs {
		w1, w2 := kwin{b: b}, kwin{b: b}
		e1, e2 := w1.skip(&st), w2.skipFlat(&st)
		if (e1 == nil) != (e2 == nil) || (e1 == nil && w1.i != w2.i) || (e1 == errKMore) != (e2 == errKMore) {
			t.Fatalf("%q: skip ends at %d (%v), skipFlat at %d (%v)", b, w1.i, e1, w2.i, e2)
		}
		if e1 != nil && e1 != errKMore && e1.Error() != e2.Error() {
			t.Fatalf("%q: skip fails %v, skipFlat %v", b, e1, e2)
		}
	}
}
