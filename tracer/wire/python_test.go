package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/wire/msg"
)

// TestPythonDecoder writes a gzip stream with the Go Writer and decodes it
// with testdata/decode_wire.py, an independent decoder written from
// FORMAT.md. The expected figures are computed here from the input events,
// not from the Go decoder.
func TestPythonDecoder(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed: the independent decoder cannot run")
	}
	rng := rand.New(rand.NewPCG(21, 22))
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	w := NewWriter(zw)
	hello := msg.Hello{Source: "cupti", PID: 4321, Rank: 1, World: 2, Host: "gpu7", Device: "NVIDIA H200",
		ClockOffsetNs: -123456789, StartNs: 1_764_000_000_000_000_000, Cmdline: []string{"python3", "train.py"},
		Devices: []tracer.Device{{ID: 0, Name: "NVIDIA H200", Vendor: "nvidia", TotalMemory: 150e9, SMs: 132, ComputeCap: "9.0", Props: map[string]string{"b": "2", "a": "1"}}}}
	w.Hello(&hello)
	var names []string
	var ids []tracer.StrID
	for i := range 30 {
		n := fmt.Sprintf("kernel_%d_ünï", i)
		names = append(names, n)
		ids = append(ids, w.Name(n))
	}
	want := map[string][2]int64{}
	sumStart, sumCorr, sumValue := new(big.Int), new(big.Int), new(big.Int)
	nEv := 0
	for range 20 {
		evs := randomEvents(rng, 500, 1)
		for i := range evs {
			k := rng.IntN(len(ids))
			evs[i].Name = ids[k]
			e := evs[i]
			key := fmt.Sprintf("%s/%d/%d/%d/%d/%d", names[k], e.Kind, e.PID, e.TID, e.Device, e.Stream)
			c := want[key]
			want[key] = [2]int64{c[0] + 1, c[1] + e.Dur}
			sumStart.Add(sumStart, big.NewInt(e.Start))
			sumCorr.Add(sumCorr, new(big.Int).SetUint64(e.Corr))
			sumValue.Add(sumValue, big.NewInt(e.Value))
		}
		nEv += len(evs)
		w.Events(evs)
	}
	w.Drops(msg.Drops{Events: 99, Batches: 3})
	w.Bye(msg.Bye{Reason: "exit"})
	zw.Close()
	path := filepath.Join(t.TempDir(), "s.rlk")
	if err := os.WriteFile(path, gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(py, "testdata/decode_wire.py", path).CombinedOutput()
	if err != nil {
		t.Fatalf("decode_wire.py: %v\n%s", err, out)
	}
	var got struct {
		Version  []int
		Frames   map[string]int
		Hello    map[string]any
		Events   int
		ByName   map[string][2]int64 `json:"by_name"`
		SumStart json.Number         `json:"sum_start"`
		SumCorr  json.Number         `json:"sum_corr"`
		SumValue json.Number         `json:"sum_value"`
		Drops    []uint64
	}
	d := json.NewDecoder(bytes.NewReader(out))
	d.UseNumber()
	if err := d.Decode(&got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got.Version[0] != VersionMajor || got.Events != nEv || got.Frames["events"] != 20 || got.Frames["strings"] != 1 || got.Frames["bye"] != 1 {
		t.Fatalf("python saw %+v", got)
	}
	if got.Hello["source"] != "cupti" || got.Hello["clock_offset_ns"].(json.Number).String() != "-123456789" || got.Hello["host"] != "gpu7" {
		t.Fatalf("hello %+v", got.Hello)
	}
	if len(got.ByName) != len(want) {
		t.Fatalf("%d keys, want %d", len(got.ByName), len(want))
	}
	for k, v := range want {
		if got.ByName[k] != v {
			t.Fatalf("%s: python %v, want %v", k, got.ByName[k], v)
		}
	}
	for _, c := range []struct {
		name string
		got  json.Number
		want *big.Int
	}{{"start", got.SumStart, sumStart}, {"corr", got.SumCorr, sumCorr}, {"value", got.SumValue, sumValue}} {
		if c.got.String() != c.want.String() {
			t.Fatalf("sum of %s: python %s, want %s", c.name, c.got, c.want)
		}
	}
	if len(got.Drops) != 2 || got.Drops[0] != 99 || got.Drops[1] != 3 {
		t.Fatalf("drops %v", got.Drops)
	}
}
