package tracefile

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/rlktop/rlktop/tracer"
)

// TestCSVRowBudget: a gzipped nsys stats trace of n identical kernel rows
// (the issue-16 trial's shape: 2.3 MB of gzip held 1.7 GiB) stops at the
// row budget with the rows before it kept and an *Error naming the file,
// the limit and how to raise it. 700,000 rows gzip to well under 1 MB, so
// the default is the MinCSVRows (524,288) floor; with RLKTOP_MAX_CSV_ROWS or
// SetMaxCSVRows at 1,000 a 3,000-row file keeps 1,000; at 0 all. The
// same rows uncompressed have no limit.
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

	big := file(700_000, true)
	if int64(len(big))/CSVBytesPerRow > MinCSVRows {
		t.Fatalf("%d bytes: the test needs the floor to apply", len(big))
	}
	tr, err := read(big)
	var fe *Error
	if !errors.As(err, &fe) || fe.Path != "stats.csv.gz" || !strings.Contains(err.Error(), fmt.Sprintf("more than %d rows", MinCSVRows)) || !strings.Contains(err.Error(), MaxCSVRowsEnv) {
		t.Fatalf("err = %v, want an *Error naming the file, the %d-row limit and %s", err, MinCSVRows, MaxCSVRowsEnv)
	}
	if n := kernels(tr); n != MinCSVRows {
		t.Errorf("kept %d kernels, want the %d rows before the limit", n, MinCSVRows)
	}

	small := file(3000, true)
	t.Setenv(MaxCSVRowsEnv, "1000")
	if tr, err := read(small); err == nil || !strings.Contains(err.Error(), MaxCSVRowsEnv+"=1000") || kernels(tr) != 1000 {
		t.Errorf("%s=1000: %d kernels, err %v", MaxCSVRowsEnv, kernels(tr), err)
	}
	t.Setenv(MaxCSVRowsEnv, "0")
	if tr, err := read(small); err != nil || kernels(tr) != 3000 {
		t.Errorf("%s=0: %d kernels, err %v", MaxCSVRowsEnv, kernels(tr), err)
	}
	SetMaxCSVRows(1000)
	if tr, err := read(small); err == nil || !strings.Contains(err.Error(), "--max-csv-rows=1000") || kernels(tr) != 1000 {
		t.Errorf("--max-csv-rows 1000: %d kernels, err %v", kernels(tr), err)
	}
	// Uncompressed: no row limit.
	plain := file(3000, false)
	if tr, err := Read(bytes.NewReader(plain), "stats.csv", int64(len(plain)), Options{}); err != nil || kernels(tr) != 3000 {
		t.Errorf("plain file under --max-csv-rows 1000: %d kernels, err %v", kernels(tr), err)
	}
}
