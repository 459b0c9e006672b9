package tracefile

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/rlktop/rlktop/tracer"
)

// TestCSVRowBudget: a gzipped nsys stats trace of identical kernel rows
// (a hostile shape: 2.3 MB of gzip held 1.7 GiB) stops at the
// row budget with the rows before it kept and an *Error naming the file,
// the limit and how to raise it. The default, MaxCSVRows, counts rows
// decoded whatever the file's stored size (the old rule allowed 1 row per
// 2 stored bytes: 5 M rows from 10 MB); with RLKTOP_MAX_CSV_ROWS or
// SetMaxCSVRows at 1,000 a 3,000-row file keeps 1,000, plain or gzipped
// (a plain file had no limit: 5 M rows took 1.6 GB); at 0 all.
func TestCSVRowBudget(t *testing.T) {
	t.Cleanup(ResetLimits)
	const hdr = "Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),DynSMem (MB),Bytes (MB),Throughput (MBps),SrcMemKd,DstMemKd,Device,Ctx,Strm,Name\n"
	const row = "1000,500,7,1,1,1,256,1,1,32,0.000,0.000,,,,,NVIDIA A100 (0),1,7,vectorAdd(float*, float*, float*, int)\n"
	file := func(n int, gz bool) []byte {
		plain := []byte(hdr + strings.Repeat(row, n))
		if !gz {
			return plain
		}
		var b bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
		zw.Write(plain)
		zw.Close()
		return b.Bytes()
	}
	kernels := func(tr *tracer.Trace) int {
		n := 0
		if tr != nil {
			for i := range tr.Events {
				if tr.Events[i].Kind == tracer.KindKernel {
					n++
				}
			}
		}
		return n
	}
	read := func(b []byte) (*tracer.Trace, error) {
		return Read(bytes.NewReader(b), "stats.csv.gz", int64(len(b)), Options{})
	}

	ResetLimits()
	if n, _ := csvRowBudget(); n != MaxCSVRows {
		t.Errorf("default budget %d, want %d", n, MaxCSVRows)
	}

	small := file(3000, true)
	t.Setenv(MaxCSVRowsEnv, "1000")
	var fe *Error
	if tr, err := read(small); !errors.As(err, &fe) || fe.Path != "stats.csv.gz" || !strings.Contains(err.Error(), MaxCSVRowsEnv+"=1000") || kernels(tr) != 1000 {
		t.Errorf("%s=1000: %d kernels, err %v; want 1000 and an *Error naming the file and the setting", MaxCSVRowsEnv, kernels(tr), err)
	}
	t.Setenv(MaxCSVRowsEnv, "0")
	if tr, err := read(small); err != nil || kernels(tr) != 3000 {
		t.Errorf("%s=0: %d kernels, err %v", MaxCSVRowsEnv, kernels(tr), err)
	}
	SetMaxCSVRows(1000)
	if tr, err := read(small); err == nil || !strings.Contains(err.Error(), "--max-csv-rows=1000") || kernels(tr) != 1000 {
		t.Errorf("--max-csv-rows 1000: %d kernels, err %v", kernels(tr), err)
	}
	// Uncompressed: the same limit.
	plain := file(3000, false)
	if tr, err := Read(bytes.NewReader(plain), "stats.csv", int64(len(plain)), Options{}); err == nil || !strings.Contains(err.Error(), "--max-csv-rows=1000") || kernels(tr) != 1000 {
		t.Errorf("plain file under --max-csv-rows 1000: %d kernels, err %v; want 1000 and the limit", kernels(tr), err)
	}
}
