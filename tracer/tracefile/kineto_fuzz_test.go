package tracefile

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/rlktop/rlktop/internal/testutil"
)

// FuzzKineto feeds arbitrary bytes to the Kineto importer: it must never
// panic or hang, every error must be a *Error, and any trace it returns must
// hold only non-negative durations. Seeds: the shared malformed fixtures and
// the small shared Kineto traces (read in place), a few hand-written inputs,
// and crashers kept under testdata/fuzz/FuzzKineto.
func FuzzKineto(f *testing.F) {
	shared := testutil.SharedTraces(f)
	for _, pat := range []string{"malformed/*.json", "kineto/kineto_sync_*.json"} {
		files, _ := filepath.Glob(filepath.Join(shared, pat))
		for _, p := range files {
			b, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	// A real compact-layout trace (the fast path), decompressed.
	if raw, err := os.ReadFile(filepath.Join(shared, "kineto", "hta_triton_example.json.gz")); err == nil {
		if zr, err := gzip.NewReader(bytes.NewReader(raw)); err == nil {
			if b, err := io.ReadAll(zr); err == nil {
				f.Add(b)
			}
		}
	}
	for _, s := range []string{
		`{"traceEvents":[{"ph":"X","cat":"kernel","name":"k\"1","pid":0,"tid":7,"ts":1.5,"dur":2,"args":{"device":0,"stream":7,"correlation":3}},{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":1,"dur":1,"args":{"correlation":3}},{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":0.5,"dur":3,"args":{"Input Dims":[[1,2]]}}]}`,
		``,
		`[`,
		`[{"ph":"X","ts":1,"dur":2,"name":"a"},`,
		`{"traceEvents":[{"ph":"B","ts":"1.5","pid":"p","tid":"t","name":"\ud83d\ude00"},{"ph":"E","ts":2e0}]}`,
		`{"traceEvents":[{"ph":"C","ts":1,"name":"c","args":{"v":1.5,"w":"x"}}],"deviceProperties":[{"id":0}]}`,
		`[{"ph":"X","cat":"kernel","ts":0.0005,"dur":1e-3,"args":{"device":1,"stream":2,"correlation":3}}]`,
		`{"foo":1}`,
		`[1,2]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		tr, err := ReadKineto(bytes.NewReader(in), "fuzz.json", Options{})
		if err != nil {
			var fe *Error
			if !errors.As(err, &fe) {
				t.Fatalf("error %v is %T, not *Error", err, err)
			}
			if fe.Offset > int64(len(in)) {
				t.Fatalf("error offset %d beyond input length %d", fe.Offset, len(in))
			}
		}
		if tr != nil {
			for i := range tr.Events {
				if tr.Events[i].Dur < 0 {
					t.Fatalf("negative Dur in event %d", i)
				}
			}
		}
	})
}
