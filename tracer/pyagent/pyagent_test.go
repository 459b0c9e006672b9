package pyagent

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/flagtab"
	"github.com/rlktop/rlktop/tracer/wire"
	"github.com/rlktop/rlktop/tracer/wire/msg"
)

// TestFlagsMatchPython: the agent's Python code reads the built-in flags
// of Flags — the names, in the same order (the flags panel's), with the
// same choices — from the module Files writes (python3 imports
// rlktop._flags and prints its BUILTIN as JSON), and every built-in flag
// is a live choice flag (the agent applies each at a step boundary).
func TestFlagsMatchPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed: the agent's flag table cannot be read")
	}
	dir := t.TempDir()
	for name, b := range Files() {
		if err := writeFile(filepath.Join(dir, filepath.FromSlash(name)), b); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(py, "-c", "import json; from rlktop import _flags; print(json.dumps(list(_flags.BUILTIN.items())))")
	cmd.Env = append(cmd.Environ(), "PYTHONPATH="+dir)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3 reading the agent's flags: %v", err)
	}
	var items [][]json.RawMessage
	if err := json.Unmarshal(out, &items); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var names []string
	for _, it := range items {
		var name string
		var choices []string
		if len(it) != 2 || json.Unmarshal(it[0], &name) != nil || json.Unmarshal(it[1], &choices) != nil {
			t.Fatalf("python BUILTIN item %s: want [name, [choices…]]", it)
		}
		names = append(names, name)
		if f, ok := Flags.Lookup(name); !ok || !slices.Equal(choices, f.Choices) {
			t.Errorf("flag %s: python choices %v, Go %v", name, choices, f.Choices)
		}
	}
	if !slices.Equal(names, Flags.Names()) {
		t.Errorf("python BUILTIN %v, Go %v", names, Flags.Names())
	}
	for _, f := range Flags {
		if f.Kind != flagtab.Choice || !f.Live {
			t.Errorf("flag %s: kind %v live %v, want a live choice flag", f.Name, f.Kind, f.Live)
		}
	}
}

// TestPythonEncoderDecodesInGo runs the agent's wire encoder (py/rlktop/
// _wire.py, written from FORMAT.md) under the host's python3 and decodes
// its output with the Go reader: hello, strings, events, an ack, a
// trace-file frame and bye, with values chosen here.
func TestPythonEncoderDecodesInGo(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed: the agent's encoder cannot run")
	}
	dir := t.TempDir()
	for name, b := range Files() {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := writeFile(p, b); err != nil {
			t.Fatal(err)
		}
	}
	script := `
import sys
from rlktop import _wire as w
out = w.preamble()
out += w.hello(4242, 1, 2, "host", "cpu: 2 cores", 0, 1700000000000000000, ["python3", "train.py"])
out += w.strings([(1, "step"), (2, "collect"), (3, "ünïcode")])
out += w.events([(w.K_STEP, 1, 1700000000000000000, 250000000, 4242, 4242, 7),
                 (w.K_RANGE, 2, 1700000000100000000, 5000, 4242, 4243, 0),
                 (w.K_RANGE, 3, 1699999999000000000, 0, 4242, 4242, 0)])
out += w.control_ack(9, {"sdpa": "flash", "compile": "on"}, True, 12, "")
out += w.tracefile("kineto", "/tmp/rlktop-kineto-x/window-1.json", 1, 2)
out += w.bye("exit", -1)
sys.stdout.buffer.write(bytes(out))
`
	cmd := exec.Command(py, "-c", script)
	cmd.Env = append(cmd.Environ(), "PYTHONPATH="+dir)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python encoder: %v", err)
	}
	r := wire.NewReader(bytes.NewReader(out))
	var types []wire.Type
	names := map[uint32]string{}
	for {
		f, err := r.Next()
		if err != nil {
			break
		}
		types = append(types, f.Type)
		switch f.Type {
		case wire.TypeHello:
			h, err := f.Hello()
			if err != nil || h.Source != "pyagent" || h.PID != 4242 || h.Rank != 1 || h.World != 2 || h.StartNs != 1700000000000000000 || !slices.Equal(h.Cmdline, []string{"python3", "train.py"}) {
				t.Errorf("hello %+v %v", h, err)
			}
		case wire.TypeStrings:
			f.Strings(func(id uint32, b []byte) error { names[id] = string(b); return nil })
		case wire.TypeEvents:
			evs, err := f.Events(nil)
			if err != nil || len(evs) != 3 {
				t.Fatalf("events %v %v", evs, err)
			}
			want := []tracer.Event{
				{Start: 1700000000000000000, Dur: 250000000, Value: 7, Name: 1, PID: 4242, TID: 4242, Device: -1, Kind: tracer.KindStep},
				{Start: 1700000000100000000, Dur: 5000, Name: 2, PID: 4242, TID: 4243, Device: -1, Kind: tracer.KindRange},
				{Start: 1699999999000000000, Name: 3, PID: 4242, TID: 4242, Device: -1, Kind: tracer.KindRange},
			}
			for i := range want {
				if evs[i] != want[i] {
					t.Errorf("event %d: %+v, want %+v", i, evs[i], want[i])
				}
			}
		case wire.TypeControl:
			c, err := f.Control()
			if err != nil || c.Op != msg.ControlAck || c.Seq != 9 || c.Step != 12 || !c.Tracing ||
				!slices.Equal(c.Flags, []msg.KV{{Key: "compile", Value: "on"}, {Key: "sdpa", Value: "flash"}}) {
				t.Errorf("ack %+v %v", c, err)
			}
		case wire.TypeTraceFile:
			tf, err := f.TraceFile()
			if err != nil || tf != (wire.TraceFile{Format: "kineto", Path: "/tmp/rlktop-kineto-x/window-1.json", FirstStep: 1, LastStep: 2}) {
				t.Errorf("tracefile %+v %v", tf, err)
			}
		}
	}
	wantTypes := []wire.Type{wire.TypeHello, wire.TypeStrings, wire.TypeEvents, wire.TypeControl, wire.TypeTraceFile, wire.TypeBye}
	if !slices.Equal(types, wantTypes) {
		t.Errorf("frames %v, want %v", types, wantTypes)
	}
	if names[3] != "ünïcode" {
		t.Errorf("string 3 = %q", names[3])
	}
}
