// Command importbench imports one trace with tracefile.Open and prints the
// kernel totals (count, summed ns, busy ns over devices) and the import
// throughput as JSON. scripts/bench-import.sh times it next to python3.
//
//	go run ./scripts/importbench FILE
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/tracefile"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: importbench FILE")
		os.Exit(2)
	}
	path := os.Args[1]
	st, err := os.Stat(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	t0 := time.Now()
	tr, err := tracefile.Open(path, tracefile.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	imported := time.Since(t0)
	type agg struct{ Count, TotalNs int64 }
	per := map[tracer.StrID]*agg{}
	var count, total int64
	devs := map[int32][][2]int64{}
	for i := range tr.Events {
		e := &tr.Events[i]
		switch e.Kind {
		case tracer.KindKernel:
			a := per[e.Name]
			if a == nil {
				a = &agg{}
				per[e.Name] = a
			}
			a.Count++
			a.TotalNs += e.Dur
			count++
			total += e.Dur
		case tracer.KindMemcpy, tracer.KindMemset:
		default:
			continue
		}
		devs[e.Device] = append(devs[e.Device], [2]int64{e.Start, e.End()})
	}
	var busy int64
	for _, ivs := range devs {
		slices.SortFunc(ivs, func(a, b [2]int64) int {
			switch {
			case a[0] < b[0]:
				return -1
			case a[0] > b[0]:
				return 1
			}
			return 0
		})
		cs, ce := ivs[0][0], ivs[0][1]
		for _, iv := range ivs[1:] {
			if iv[0] > ce {
				busy += ce - cs
				cs, ce = iv[0], iv[1]
			} else if iv[1] > ce {
				ce = iv[1]
			}
		}
		busy += ce - cs
	}
	all := time.Since(t0)
	json.NewEncoder(os.Stdout).Encode(map[string]any{
		"file":            path,
		"bytes":           st.Size(),
		"events":          len(tr.Events),
		"kernel_count":    count,
		"kernel_total_ns": total,
		"kernel_names":    len(per),
		"busy_ns":         busy,
		"import_s":        imported.Seconds(),
		"total_s":         all.Seconds(),
		"mb_per_s":        float64(st.Size()) / 1e6 / all.Seconds(),
	})
}
