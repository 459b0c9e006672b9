package main

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/rlktop/rlktop/tracer/load"
)

// addStreamFlag adds --stream-min-bytes, the size (decoded, summed over
// the inputs) from which report and export read Kineto files window by
// window (load.Streamable), to f.
func addStreamFlag(f *pflag.FlagSet, lo *load.Options) {
	f.Int64Var(&lo.StreamMinBytes, "stream-min-bytes", 0, fmt.Sprintf("read inputs of at least this many bytes together (decoded) window by window, keeping about one torch.profiler window in memory (0: %d = 256 MiB; negative, e.g. -1: always read whole)", load.DefaultStreamMinBytes))
}

// readWholeSaid is a load.Options.ReadWhole that writes, for a Kineto
// input the stream refused, why it is read whole instead.
func readWholeSaid(errw io.Writer) func(error) {
	return func(err error) {
		fmt.Fprintf(errw, "rlktop: %v; reading the input whole (memory grows with the files)\n", err)
	}
}

// sayDamaged writes each file read only in part with what became of what
// was read before the damage (kept: "the report below holds what was read
// before that point", …).
func sayDamaged(errw io.Writer, ds []load.Damage, kept string) {
	for _, d := range ds {
		fmt.Fprintf(errw, "rlktop: %v\nrlktop: %s: %s\n", d.Err, kept, d.Kept())
	}
}

// exportedKept is sayDamaged's line for export.
const exportedKept = "exporting what was read before the damage"
