// Command kinetorepl writes a large Kineto trace made of copies of a real
// one (times and ids shifted per copy; see tracefile.ReplicateKineto), for
// scripts/bench-import.sh.
//
//	go run ./scripts/kinetorepl -copies 9 [-one-window] SRC.json[.gz] OUT.json
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/klauspost/compress/gzip"
	"github.com/rlktop/rlktop/tracer/tracefile"
)

func main() {
	copies := flag.Int("copies", 9, "number of copies of the source's events")
	oneWindow := flag.Bool("one-window", false, "write every copy's CPU events first, then every copy's launches and GPU ops: the shape of one long torch.profiler window")
	flag.Parse()
	if flag.NArg() != 2 {
		fmt.Fprintln(os.Stderr, "usage: kinetorepl [-copies N] [-one-window] SRC OUT")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), flag.Arg(1), *copies, *oneWindow); err != nil {
		fmt.Fprintln(os.Stderr, "kinetorepl:", err)
		os.Exit(1)
	}
}

func run(src, out string, copies int, oneWindow bool) error {
	raw, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if len(raw) > 2 && raw[0] == 0x1f && raw[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			return err
		}
		if raw, err = io.ReadAll(zr); err != nil {
			return err
		}
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	replicate := tracefile.ReplicateKineto
	if oneWindow {
		replicate = tracefile.ReplicateKinetoOneWindow
	}
	n, err := replicate(f, raw, copies)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	fmt.Printf("wrote %s: %d bytes (%d copies of %s)\n", out, n, copies, src)
	return nil
}
