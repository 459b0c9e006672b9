package tracefile

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/tracer"
)

// One bad value costs its event only (the whole import stopped):
// the event between two good ones is skipped with a warning naming the
// byte offset (of the bad field, or of the event when a field is missing)
// and the field; the good ones are kept.
func TestKinetoBadValuesSkipped(t *testing.T) {
	good := `{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":2}`
	pre := `[` + good + `,`
	p := int64(len(pre)) // where the bad event starts
	for _, c := range []struct {
		name, bad string
		off       int64 // offset within the bad event
		field     string
		msg       string
	}{
		{"ts true", `{"ph":"X","name":"a","ts":true,"dur":1}`, 26, "ts", "found true"},
		{"ts garbage string", `{"ph":"X","name":"a","ts":"12ms","dur":1}`, 27, "ts", "decimal number"},
		{"ts NaN (Python json)", `{"ph":"X","name":"a","ts":NaN,"dur":1}`, 26, "ts", `found "NaN"`},
		{"dur Infinity", `{"ph":"X","name":"a","ts":3,"dur":Infinity}`, 34, "dur", `found "Infinity"`},
		{"missing ts", `{"ph":"X","name":"a","dur":1}`, 0, "ts", `has no "ts"`},
		{"missing ts on B", `{"ph":"B","name":"a"}`, 0, "ts", `has no "ts"`},
		{"negative dur", `{"ph":"X","name":"a","ts":5,"dur":-1.5}`, 34, "dur", "negative duration -1500 ns"},
		{"no ph", `{"name":"a","ts":5,"dur":1}`, 0, "ph", `has no "ph"`},
		{"empty object", `{}`, 0, "ph", `has no "ph"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := pre + c.bad + `,` + good + `]`
			tr, err := ReadKineto(strings.NewReader(in), "bad.json", Options{})
			if err != nil {
				t.Fatalf("err = %v, want the bad event skipped", err)
			}
			if len(tr.Events) != 2 {
				t.Errorf("%d events kept, want the 2 good ones", len(tr.Events))
			}
			want := fmt.Sprintf("bad.json (byte %d): field %q: ", p+c.off, c.field)
			if len(tr.Warnings) == 0 || !strings.HasPrefix(tr.Warnings[0], want) || !strings.Contains(tr.Warnings[0], c.msg) || !strings.HasSuffix(tr.Warnings[0], "; event skipped") {
				t.Errorf("warnings %q, want one starting %q containing %q", tr.Warnings, want, c.msg)
			}
			if tr.Meta["skipped_bad_events"] != "1" {
				t.Errorf("skipped_bad_events = %q, want 1", tr.Meta["skipped_bad_events"])
			}
		})
	}
}

// A stray value among the events (a bare number, a string, an array)
// costs itself only: skipped with a warning naming its byte and index.
func TestKinetoStrayValueSkipped(t *testing.T) {
	good := `{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":2}`
	for _, bad := range []string{`42`, `"x"`, `[1,{"ph":"X"}]`, `null`} {
		in := `{"traceEvents":[` + good + `,` + bad + `,` + good + `,` + good + `]}`
		tr, err := ReadKineto(strings.NewReader(in), "stray.json", Options{})
		if err != nil {
			t.Fatalf("%s: err = %v, want the value skipped", bad, err)
		}
		if len(tr.Events) != 3 {
			t.Errorf("%s: %d events kept, want the 3 good ones", bad, len(tr.Events))
		}
		want := fmt.Sprintf("stray.json (byte %d): element 1 of the event array is", len(`{"traceEvents":[`+good+`,`))
		if len(tr.Warnings) == 0 || !strings.HasPrefix(tr.Warnings[0], want) {
			t.Errorf("%s: warnings %q, want one starting %q", bad, tr.Warnings, want)
		}
	}
}

// The case: 10,000 kernels of 500 µs, three of them bad (a
// negative dur, a NaN ts, a missing ts): 9,997 kept, 9,997 × 500,000 ns of
// kernel time, three warnings. Past ten bad events one warning counts the
// rest.
func TestKinetoBadEventsCounted(t *testing.T) {
	build := func(n int, bad map[int]string) []byte {
		var b bytes.Buffer
		b.WriteString(`{"traceEvents":[`)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			ts, dur := fmt.Sprint(1000*(i+1)), "500"
			switch bad[i] {
			case "neg":
				dur = "-5"
			case "nan":
				ts = "NaN"
			}
			if bad[i] == "nots" {
				fmt.Fprintf(&b, `{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"dur":%s,"args":{"device":0}}`, dur)
				continue
			}
			fmt.Fprintf(&b, `{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":%s,"dur":%s,"args":{"device":0}}`, ts, dur)
		}
		b.WriteString("]}")
		return b.Bytes()
	}
	tr, err := ReadKineto(bytes.NewReader(build(10000, map[int]string{100: "neg", 200: "nan", 300: "nots"})), "k.json", Options{})
	if err != nil {
		t.Fatal(err)
	}
	var ns int64
	for _, e := range tr.Events {
		if e.Kind == tracer.KindKernel {
			ns += e.Dur
		}
	}
	if len(tr.Events) != 9997 || ns != 9997*500_000 || len(tr.Warnings) != 3 {
		t.Errorf("%d events, %d ns, warnings %q; want 9997, %d ns, 3 warnings", len(tr.Events), ns, tr.Warnings, 9997*500_000)
	}
	bad := map[int]string{}
	for i := range 25 {
		bad[10*i] = "neg"
	}
	tr, err = ReadKineto(bytes.NewReader(build(1000, bad)), "k.json", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Events) != 975 || len(tr.Warnings) != kBadShown+1 || !strings.Contains(tr.Warnings[kBadShown], "15 more events with a bad ts or dur skipped (25 in all)") {
		t.Errorf("%d events, warnings %q", len(tr.Events), tr.Warnings)
	}
}

// Kept but said: GPU work at ts 0 (a Kineto export bug) and 0 ns kernels.
func TestKinetoSuspiciousValuesWarned(t *testing.T) {
	in := `[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":0,"dur":2},` +
		`{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":5,"dur":0},` +
		`{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":9,"dur":1}]`
	tr, err := ReadKineto(strings.NewReader(in), "z.json", Options{})
	if err != nil || len(tr.Events) != 3 {
		t.Fatalf("%v, %d events", err, len(tr.Events))
	}
	w := strings.Join(tr.Warnings, "\n")
	if !strings.Contains(w, "z.json: 1 GPU event at ts 0") || !strings.Contains(w, "z.json: 1 kernel of 0 ns") {
		t.Errorf("warnings %q", tr.Warnings)
	}
}

// Garbage after the JSON is ignored with a warning giving its offset.
func TestKinetoTrailingGarbageWarned(t *testing.T) {
	js := `{"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":2}]}`
	tr, err := ReadKineto(strings.NewReader(js+"\n garbage{"), "g.json", Options{})
	if err != nil || len(tr.Events) != 1 {
		t.Fatalf("%v", err)
	}
	want := fmt.Sprintf("g.json (byte %d): data after the end of the JSON (starting 'g') ignored", len(js)+2)
	if len(tr.Warnings) != 1 || tr.Warnings[0] != want {
		t.Errorf("warnings %q, want %q", tr.Warnings, want)
	}
	if tr, _ := ReadKineto(strings.NewReader(js+"\n\n"), "g.json", Options{}); len(tr.Warnings) != 0 {
		t.Errorf("trailing whitespace warned: %q", tr.Warnings)
	}
}

// TestKinetoTopLevelNaN: the header and the events are read by one
// tokenizer, so a top-level value holding Python json's NaN / Infinity is
// taken as the events' are (it was "malformed JSON" at the top level only);
// a number ending the file is whole.
func TestKinetoTopLevelNaN(t *testing.T) {
	in := `{"score": NaN, "stats": [1, -Infinity, {"x": Infinity}], "traceEvents": [
	 {"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":2,"args":{"v":NaN}}],
	 "last": 5`
	tr, err := readKinetoString(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Events) != 1 || tr.Meta["score"] != "NaN" || tr.Meta["last"] != "5" {
		t.Errorf("%d events, meta %v; want 1 event, score NaN, last 5", len(tr.Events), tr.Meta)
	}
	if len(tr.Warnings) != 1 || !strings.Contains(tr.Warnings[0], "not closed") {
		t.Errorf("warnings %q, want one about the unclosed object", tr.Warnings)
	}
}
