package tracefile

import (
	"bytes"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/wire"
	"github.com/rlktop/rlktop/tracer/wire/msg"
)

// damageCase is one format with two kinds of damage, each written by the
// test into a file of its own:
//   - bad: one bad record (a value out of range, a row that does not
//     parse, a dangling id) among good ones;
//   - stop: damage that stops the reader (malformed syntax, a cut
//     database, a frame whose CRC fails).
type damageCase struct {
	format    string
	bad, stop func(t *testing.T, dir string) string // returns the file
}

func writeFile(t *testing.T, p string, b []byte) string {
	t.Helper()
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func readShared(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Skipf("real input missing: %v", err)
	}
	return b
}

// cutSQLite copies the database at src keeping only its first half.
func cutSQLite(t *testing.T, src, dst string) string {
	b := readShared(t, src)
	return writeFile(t, dst, b[:len(b)/2])
}

// gzipBadCRC gzips b and changes the trailer's CRC-32: the stopping
// damage of the CSV formats, whose reader takes any bytes as CSV (lazy
// quotes, rows of any length) and skips bad rows.
func gzipBadCRC(t *testing.T, b []byte) []byte {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(b)
	zw.Close()
	out := gz.Bytes()
	out[len(out)-8] ^= 0xff
	return out
}

func damageCases() []damageCase {
	const traces = "/work/shared/traces/"
	csvCase := func(format, src, badRow string) damageCase {
		return damageCase{format: format,
			bad: func(t *testing.T, dir string) string {
				b := bytes.TrimRight(readShared(t, src), "\r\n")
				return writeFile(t, filepath.Join(dir, "bad-"+format+".csv"), append(b, "\n"+badRow+"\n"...))
			},
			stop: func(t *testing.T, dir string) string {
				return writeFile(t, filepath.Join(dir, "stop-"+format+".csv.gz"), gzipBadCRC(t, readShared(t, src)))
			}}
	}
	return []damageCase{
		{format: "kineto",
			// The real H100 trace with one event of negative dur, and cut
			// by garbage inside an event.
			bad: func(t *testing.T, dir string) string {
				b := readShared(t, traces+"kineto/kineto_sync_before_fix.json")
				b = bytes.Replace(b, []byte(`"traceEvents": [`), []byte(`"traceEvents": [{"ph":"X","cat":"kernel","name":"bad","pid":0,"tid":7,"ts":10,"dur":-5},`), 1)
				return writeFile(t, filepath.Join(dir, "bad-kineto.json"), b)
			},
			stop: func(t *testing.T, dir string) string {
				b := readShared(t, traces+"kineto/kineto_sync_before_fix.json")
				i := bytes.LastIndex(b, []byte(`"ph"`))
				b = append(b[:i:i], `@@@`...)
				return writeFile(t, filepath.Join(dir, "stop-kineto.json"), b)
			}},
		{format: "rocprofv3-json",
			// The fixture with a dispatch that ends before it starts, and
			// cut in half.
			bad: func(t *testing.T, dir string) string {
				b := readShared(t, filepath.Join("testdata", "rocprofv3_tool.json"))
				b = bytes.Replace(b, []byte(`"end_timestamp": 2300`), []byte(`"end_timestamp": 1999`), 1)
				return writeFile(t, filepath.Join(dir, "bad-rocprofv3.json"), b)
			},
			stop: func(t *testing.T, dir string) string {
				b := readShared(t, filepath.Join("testdata", "rocprofv3_tool.json"))
				return writeFile(t, filepath.Join(dir, "stop-rocprofv3.json"), b[:len(b)/2])
			}},
		csvCase("rocprofv3-csv", traces+"rocprof/kernel_trace_2025.csv",
			`"KERNEL_DISPATCH","Agent 4",1,1,834304,9,10,"k",9,notanumber,1550151853042437,0,0,8,0,16,64,1,1,1024,1024,1`),
		csvCase("rocprof-csv", traces+"rocprof/MI200_timestamps_rocprofv1style.csv",
			`9,"k [clone .kd]",2,0,0,4159385,4159385,1048576,256,0,0,8,0,16,64,0x0,0x7f,1412702536482286,x,1412702536528996,1412702536542951`),
		csvCase("rocprof-csv", traces+"rocprof/MI300X_timestamps_rocprofv2style.csv",
			`9,60633,1,967084,967084,1048576,256,0,0,4,4,16,64,"k (.kd)",x,716380685161855,0`),
		csvCase("nsys-stats-csv", traces+"nsys/pipit_nbody_nvtx_stats.csv",
			`x,1987944256,1005098329,397831233,607267096,main,3086332,3086332,0,30,99,,:99,main`),
		{format: "rocprof-v1-json",
			bad: func(t *testing.T, dir string) string {
				b := readShared(t, "/tmp/rlktop-real-rocm/hipprog_results.json")
				i := bytes.Index(b, []byte(`,{"ph":"X"`))
				if i < 0 {
					t.Skip("no X event")
				}
				ins := []byte(`,{"ph":"X","name":"bad","pid":2,"tid":1,"ts":"100","dur":"-5","args":{"BeginNs":"100000","EndNs":"90000"}}`)
				b = append(b[:i:i], append(ins, b[i:]...)...)
				return writeFile(t, filepath.Join(dir, "bad-v1.json"), b)
			},
			stop: func(t *testing.T, dir string) string {
				b := readShared(t, "/tmp/rlktop-real-rocm/hipprog_results.json")
				i := bytes.LastIndex(b, []byte(`"ph"`))
				return writeFile(t, filepath.Join(dir, "stop-v1.json"), append(b[:i:i], `@@@`...))
			}},
		{format: "nsys-sqlite",
			// The real nsys 2022 export with a kernel row that ends before
			// it starts, and cut in half.
			bad: func(t *testing.T, dir string) string {
				p := writeFile(t, filepath.Join(dir, "bad-nsys.sqlite"), readShared(t, traces+"nsys/pipit_saxpy_mpi_nsys2022.sqlite"))
				db, err := sql.Open("sqlite", p)
				if err != nil {
					t.Fatal(err)
				}
				execAll(t, db, `INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId, globalPid, demangledName, shortName, registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, gridId, sharedMemoryExecuted)
					SELECT end + 10, end, deviceId, contextId, streamId, correlationId, globalPid, demangledName, shortName, registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, gridId, sharedMemoryExecuted FROM CUPTI_ACTIVITY_KIND_KERNEL LIMIT 1`)
				db.Close()
				return p
			},
			stop: func(t *testing.T, dir string) string {
				return cutSQLite(t, traces+"nsys/pipit_saxpy_mpi_nsys2022.sqlite", filepath.Join(dir, "stop-nsys.sqlite"))
			}},
		{format: "rocpd-sqlite",
			// The fixture with a dispatch naming a kernel_id that does not
			// exist; the real rocprofv3 database cut in half.
			bad: func(t *testing.T, dir string) string {
				const sfx = "0000a1b2_c3d4_e5f6_0718_293a4b5c6d7e"
				p := buildRocpdFixture(t, false, sfx)
				db, err := sql.Open("sqlite", p)
				if err != nil {
					t.Fatal(err)
				}
				execAll(t, db, "INSERT INTO `rocpd_kernel_dispatch_"+sfx+"` (id, guid, track_id, kernel_id, dispatch_id, start_id, end_id, workgroup_size_x, grid_size_x) VALUES (10,'guid-a',2,99,10,7,8,256,1024)")
				db.Close()
				return p
			},
			stop: func(t *testing.T, dir string) string {
				return cutSQLite(t, "/tmp/rlktop-real-rocm/batched_gemm_28_results.db", filepath.Join(dir, "stop-rocpd.db"))
			}},
		{format: "rocprof-v1-sqlite",
			bad: func(t *testing.T, dir string) string {
				p := writeFile(t, filepath.Join(dir, "bad-v1.db"), readShared(t, "/tmp/rlktop-real-rocm/hpctraining_fd_results.db"))
				db, err := sql.Open("sqlite", p)
				if err != nil {
					t.Fatal(err)
				}
				execAll(t, db, `INSERT INTO KERN ("Index", "KernelName", "BeginNs", "EndNs") VALUES (99999, '"bad"', 2000, 1000)`)
				db.Close()
				return p
			},
			stop: func(t *testing.T, dir string) string {
				return cutSQLite(t, "/tmp/rlktop-real-rocm/hpctraining_fd_results.db", filepath.Join(dir, "stop-v1.db"))
			}},
		{format: "rlktop",
			// A recording that names a string id it never defined; and one
			// whose last frame's payload has a byte flipped (CRC fails).
			bad: func(t *testing.T, dir string) string {
				var buf bytes.Buffer
				w := wire.NewWriter(&buf)
				w.Hello(&msg.Hello{Source: "gotrace", PID: 9})
				k := w.Name("k")
				w.Events([]tracer.Event{{Kind: tracer.KindKernel, Name: k, Start: 20, Dur: 5, PID: 9, TID: 1}, {Kind: tracer.KindKernel, Name: 77, Start: 30, Dur: 5, PID: 9, TID: 1}})
				w.Bye(msg.Bye{Reason: "exit"})
				return writeFile(t, filepath.Join(dir, "bad.rlk"), buf.Bytes())
			},
			stop: func(t *testing.T, dir string) string {
				var buf bytes.Buffer
				w := wire.NewWriter(&buf)
				w.Hello(&msg.Hello{Source: "gotrace", PID: 9})
				k := w.Name("k")
				w.Events([]tracer.Event{{Kind: tracer.KindKernel, Name: k, Start: 20, Dur: 5, PID: 9, TID: 1}})
				w.Flush()
				n := buf.Len()
				w.Events([]tracer.Event{{Kind: tracer.KindKernel, Name: k, Start: 40, Dur: 5, PID: 9, TID: 1}})
				w.Flush()
				n2 := buf.Len()
				w.Bye(msg.Bye{Reason: "exit"})
				b := buf.Bytes()
				b[(n+n2)/2] ^= 0xff // inside the second events frame
				return writeFile(t, filepath.Join(dir, "stop.rlk"), b)
			}},
	}
}

// TestDamageRuleEveryFormat checks, for every format, the one rule for
// damaged input (README "Damaged input"):
//   - a bad record is skipped (or kept) with a warning and the import
//     succeeds: exit status 0;
//   - damage that stops the reader is an *Error naming the file: exit 1;
//
// and that every warning an importer gives names the file.
func TestDamageRuleEveryFormat(t *testing.T) {
	for _, c := range damageCases() {
		t.Run(c.format, func(t *testing.T) {
			dir := t.TempDir()
			p := c.bad(t, dir)
			tr, err := Open(p, Options{})
			if err != nil {
				t.Fatalf("bad record: %v; want the import to succeed with a warning (exit 0)", err)
			}
			if tr.Format != c.format {
				t.Errorf("read as %s", tr.Format)
			}
			if len(tr.Warnings) == 0 {
				t.Errorf("bad record: no warning")
			}
			for _, w := range tr.Warnings {
				if !strings.Contains(w, p) {
					t.Errorf("warning does not name the file %s: %q", p, w)
				}
			}
			p = c.stop(t, dir)
			tr, err = Open(p, Options{})
			var fe *Error
			if !errors.As(err, &fe) || fe.Path != p {
				t.Errorf("stopping damage: err %v (trace %v); want an *Error naming %s (exit 1)", err, tr != nil, p)
			}
			if tr != nil {
				for _, w := range tr.Warnings {
					if !strings.Contains(w, p) {
						t.Errorf("warning does not name the file %s: %q", p, w)
					}
				}
			}
		})
	}
}
