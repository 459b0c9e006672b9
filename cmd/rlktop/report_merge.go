package main

import (
	"fmt"
	"io"
	"os"

	"github.com/rlktop/rlktop/report"
)

// readReportDocs reads the arguments of `rlktop report` when they are JSON
// reports (`rlktop report --format json` outputs, report.IsDoc) instead of
// traces: ok is false, with no error, when none is one (the arguments are
// traces); all must be, or it is an error naming the first that is not.
func readReportDocs(paths []string) (docs []*report.Doc, ok bool, err error) {
	for i, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, false, nil // the trace importers say what is wrong
		}
		head := make([]byte, 4096)
		n, _ := io.ReadFull(f, head)
		f.Close()
		if !report.IsDoc(head[:n]) {
			if i == 0 {
				return nil, false, nil
			}
			return nil, false, fmt.Errorf("%s is not a JSON report but %s is: give JSON reports only (rlktop report --format json outputs, one per rank) or traces only", p, paths[0])
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, false, err
		}
		d, err := report.ParseDoc(data, p)
		if err != nil {
			return nil, false, err
		}
		docs = append(docs, d)
	}
	return docs, true, nil
}
