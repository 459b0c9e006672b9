package pyagent

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/wire"
)

// encoderServer is the agent's encoder (_wire.py) under the host's
// python3, one request a line: JSON [name, [[start, dur, tid, value]...],
// key, value, path] in, the base64 of its strings, events, meta and
// trace-file frames out (or "ERR ..." when the encoder raised).
const encoderServer = `
import sys, json, base64, traceback
from rlktop import _wire as w
for line in sys.stdin:
    try:
        name, evs, k, v, path = json.loads(line)
        out = w.preamble() + w.strings([(1, name)])
        out += w.events([(w.K_RANGE, 1, s, d, 4242, t, val) for s, d, t, val in evs])
        out += w.meta([(k, v)]) + w.tracefile("kineto", path, 1, 2)
        sys.stdout.write(base64.b64encode(bytes(out)).decode() + "\n")
    except Exception:
        sys.stdout.write("ERR " + repr(traceback.format_exc()) + "\n")
    sys.stdout.flush()
`

// FuzzPythonEncoder feeds the agent's wire encoder what a script can hand
// it (any stage name, metric key and value, any times, durations and
// values) and decodes its frames with the Go reader: every frame decodes,
// to the values given (names as JSON carries them: invalid UTF-8 replaced;
// a negative duration as 0; times as int64). An input the encoder cannot
// encode would stop the agent's sender: the program would go on
// untraced.
func FuzzPythonEncoder(f *testing.F) {
	py, err := exec.LookPath("python3")
	if err != nil {
		f.Skip("python3 not installed: the agent's encoder cannot run")
	}
	dir := f.TempDir()
	for name, b := range Files() {
		if err := writeFile(filepath.Join(dir, filepath.FromSlash(name)), b); err != nil {
			f.Fatal(err)
		}
	}
	cmd := exec.Command(py, "-c", encoderServer)
	cmd.Env = append(cmd.Environ(), "PYTHONPATH="+dir)
	in, _ := cmd.StdinPipe()
	outp, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { in.Close(); cmd.Wait() })
	out := bufio.NewReaderSize(outp, 1<<20)
	f.Add("collect", int64(1700000000000000000), int64(5000), int64(1700000000100000000), int32(4243), int64(7), "metric.loss", "0.5", "/tmp/rlktop-kineto-x/window-1.json")
	f.Add("ünï\x00code", int64(9223372036854775807), int64(-1), int64(-9223372036854775808), int32(-1), int64(-9223372036854775808), "", "", "")
	f.Fuzz(func(t *testing.T, name string, s1, d, s2 int64, tid int32, v int64, key, val, path string) {
		// What Python receives is what JSON carries.
		req, _ := json.Marshal([]any{name, [][]int64{{s1, d, int64(tid), v}, {s2, 0, int64(tid), 0}}, key, val, path})
		var back []any
		json.Unmarshal(req, &back)
		name, key, val, path = back[0].(string), back[2].(string), back[3].(string), back[4].(string)
		in.Write(append(req, '\n'))
		line, err := out.ReadString('\n')
		if err != nil {
			t.Fatalf("encoder gone: %v", err)
		}
		if strings.HasPrefix(line, "ERR ") {
			t.Fatalf("the encoder raised on %s: %s", req, line)
		}
		raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(line))
		if err != nil {
			t.Fatal(err)
		}
		r := wire.NewReader(bytes.NewReader(raw))
		wantDur := max(d, 0)
		for range 4 {
			fr, err := r.Next()
			if err != nil {
				t.Fatalf("frame: %v (input %s)", err, req)
			}
			switch fr.Type {
			case wire.TypeStrings:
				fr.Strings(func(id uint32, b []byte) error {
					if id != 1 || string(b) != name {
						t.Errorf("name %d %q, want 1 %q", id, b, name)
					}
					return nil
				})
			case wire.TypeEvents:
				evs, err := fr.Events(nil)
				if err != nil || len(evs) != 2 {
					t.Fatalf("events %v %v (input %s)", evs, err, req)
				}
				want := []tracer.Event{
					{Kind: tracer.KindRange, Name: 1, Start: s1, Dur: wantDur, Value: v, PID: 4242, TID: tid, Device: -1},
					{Kind: tracer.KindRange, Name: 1, Start: s2, PID: 4242, TID: tid, Device: -1},
				}
				for i := range want {
					if evs[i] != want[i] {
						t.Errorf("event %d: %+v, want %+v", i, evs[i], want[i])
					}
				}
			case wire.TypeMeta:
				kv, err := fr.Meta()
				if err != nil || len(kv) != 1 || kv[0].Key != key || kv[0].Value != val {
					t.Errorf("meta %v %v, want %q=%q", kv, err, key, val)
				}
			case wire.TypeTraceFile:
				tf, err := fr.TraceFile()
				if err != nil || tf.Path != path {
					t.Errorf("trace file %+v %v, want path %q", tf, err, path)
				}
			}
		}
	})
}
