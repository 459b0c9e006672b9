package wire

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/wire/msg"
)

func seedStream() []byte {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.Hello(&msg.Hello{Source: "gotrace", PID: 7, Rank: -1, Host: "h", Cmdline: []string{"a"},
		Devices: []tracer.Device{{ID: 0, Name: "d", Props: map[string]string{"k": "v"}}}})
	w.Name("attn_fused_fwd")
	w.Events(randomEvents(rand.New(rand.NewPCG(9, 9)), 30, 2))
	w.Counters([]tracer.Counter{{TS: 1, Name: 1, Value: 2}})
	w.Control(&msg.Control{Op: msg.ControlAck, Seq: 1, Flags: []msg.KV{{Key: "a", Value: "b"}}})
	w.Drops(msg.Drops{Events: 5, Batches: 1})
	w.Meta([]msg.KV{{Key: "k", Value: "v"}})
	w.Bye(msg.Bye{Reason: "x"})
	return buf.Bytes()
}

// decodeAll runs every decoder on every frame of data, as a session and the
// recording importer would.
func decodeAll(data []byte) {
	r := NewReader(bytes.NewReader(data))
	names := NewNames(tracer.NewStrings())
	var evs []tracer.Event
	var cs []tracer.Counter
	for {
		f, err := r.Next()
		if err != nil {
			return
		}
		decodePayload(&f, names, evs, cs)
	}
}

func decodePayload(f *Frame, names *Names, evs []tracer.Event, cs []tracer.Counter) {
	switch f.Type {
	case TypeHello:
		f.Hello()
	case TypeStrings:
		f.Strings(func(id uint32, s []byte) error { names.Define(id, s); return nil })
	case TypeEvents:
		evs, _ = f.Events(evs[:0])
		names.MapEvents(evs)
	case TypeCounters:
		f.Counters(cs[:0])
	case TypeControl:
		f.Control()
	case TypeDrops:
		f.Drops()
	case TypeMeta:
		f.Meta()
	case TypeBye:
		f.Bye()
	}
}

// FuzzDecode feeds arbitrary bytes to the reader and, through the first
// byte, straight to each payload decoder (so the fuzzer need not forge
// CRCs). Nothing may panic; allocation stays bounded by the input size.
func FuzzDecode(f *testing.F) {
	s := seedStream()
	f.Add(s)
	f.Add(s[:len(s)/2])
	f.Add([]byte("RLKW\x01\x00\x00\x00"))
	for _, t := range []Type{TypeHello, TypeStrings, TypeEvents, TypeCounters, TypeControl, TypeDrops, TypeMeta, TypeBye} {
		f.Add(append([]byte{byte(t)}, 0xff, 0xff, 0xff, 0x0f))
	}
	// Payloads of the seed stream as direct decoder input.
	r := NewReader(bytes.NewReader(s))
	for {
		fr, err := r.Next()
		if err != nil {
			break
		}
		f.Add(append([]byte{byte(fr.Type)}, fr.Payload...))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		decodeAll(data)
		if len(data) > 0 {
			fr := Frame{Type: Type(data[0]), Payload: data[1:]}
			evs, err := fr.Events(nil)
			if err == nil && len(evs) > len(data) {
				t.Fatalf("%d events from %d bytes", len(evs), len(data))
			}
			decodePayload(&fr, NewNames(tracer.NewStrings()), nil, nil)
		}
	})
}
