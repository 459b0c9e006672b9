package tracefile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/internal/testutil"
)

// Fuzz targets for the rocprof / rocpd / nsys importers. Each checks that a
// parser never panics and that every failure is a positioned *Error. Seeds:
// tiny hand-written inputs plus the shared real files, read at test time.
// Run one by hand, e.g.
//
//	go test ./tracer/tracefile -run '^$' -fuzz FuzzRocprofCSV -fuzztime 20s

func addSharedSeeds(f *testing.F, sub string, keep func(name string) bool) {
	dir := testutil.SharedTraces(f)
	ents, _ := os.ReadDir(filepath.Join(dir, sub))
	for _, e := range ents {
		if !keep(e.Name()) {
			continue
		}
		if b, err := os.ReadFile(filepath.Join(dir, sub, e.Name())); err == nil {
			f.Add(b)
		}
	}
}

func checkFuzzErr(t *testing.T, err error) {
	var te *Error
	if err != nil && !errors.As(err, &te) {
		t.Fatalf("error is not *tracefile.Error: %T %v", err, err)
	}
}

func FuzzRocprofCSV(f *testing.F) {
	f.Add([]byte("\"Kind\",\"Agent_Id\",\"Kernel_Name\",\"Start_Timestamp\",\"End_Timestamp\"\n\"KERNEL_DISPATCH\",\"Agent 4\",\"k\",1,2"))
	f.Add([]byte("Dispatch_ID,Kernel_Name,GPU_ID,Start_Timestamp,End_Timestamp\n0,\"a [clone .kd]\",2,5,9\n"))
	f.Add([]byte("\"Domain\",\"Function\",\"Start_Timestamp\",\"End_Timestamp\"\n\"MARKER_CORE_API\",\"x\",3,3\n"))
	f.Add([]byte("\"Name\",\"Calls\",\"TotalDurationNs\"\n\"hipFree\",1,2.0e+00\n"))
	f.Add([]byte("\"Kind\",\"Direction\",\"Start_Timestamp\",\"End_Timestamp\"\n\"MEMORY_COPY\",\"MEMORY_COPY_HOST_TO_DEVICE\",1,\"2"))
	addSharedSeeds(f, "rocprof", func(string) bool { return true })
	f.Fuzz(func(t *testing.T, b []byte) {
		if !sniffRocprofV3CSV(b) && !sniffRocprofV1CSV(b) {
			return
		}
		_, err := readRocprofCSV(strings.NewReader(string(b)), "fuzz.csv", Options{})
		checkFuzzErr(t, err)
	})
}

func FuzzNsysStatsCSV(f *testing.F) {
	f.Add([]byte("Start (ns),End (ns),Duration (ns),Name,PID,TID\n1,5,4,main,3,3\n"))
	f.Add([]byte("Processing [a] with [b]...\n\nTime (%),Total Time (ns),Instances,Avg (ns),Name\n1,2,3,4.5,\"k\"\n"))
	f.Add([]byte("Time (%),Total Time (ns),Instances,Style,Range\n1,2e3,1,PushPop,main"))
	addSharedSeeds(f, "nsys", func(n string) bool { return strings.HasSuffix(n, ".csv") })
	f.Fuzz(func(t *testing.T, b []byte) {
		if !sniffNsysStats(b) {
			return
		}
		_, err := readNsysStats(strings.NewReader(string(b)), "fuzz.csv", Options{})
		checkFuzzErr(t, err)
	})
}

// FuzzSQLite feeds mutated databases (nsys and rocpd) through readSQLite's
// temporary-copy path. Each input is written to disk, so it runs slower
// than the text fuzzers.
func FuzzSQLite(f *testing.F) {
	for _, p := range []string{buildNsys3Fixture(f), buildRocpdFixture(f, true, "0000a1b2_c3d4_e5f6_0718_293a4b5c6d7e")} {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !isSQLite(b) {
			return
		}
		_, err := readSQLite(strings.NewReader(string(b)), "", Options{})
		checkFuzzErr(t, err)
	})
}
