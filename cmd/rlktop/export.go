package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/rlktop/rlktop/tracer/tracefile"
)

func init() {
	var (
		out  string
		opts tracefile.ExportOptions
	)
	cmd := &cobra.Command{
		Use:   "export FILE -o OUT.json[.gz]",
		Short: "write a trace or recording as Chrome trace-event JSON (Perfetto, chrome://tracing, HTA)",
		Long: `export reads FILE in any format rlktop opens (rlktop recordings, Kineto /
Chrome trace JSON, …) and writes Chrome trace-event JSON that Perfetto UI,
chrome://tracing and Holistic Trace Analysis open. OUT ending in .gz is
gzip-compressed.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return fmt.Errorf("export: no output file: add -o OUT.json or -o OUT.json.gz")
			}
			t, damage := tracefile.Open(args[0], tracefile.Options{})
			if t == nil {
				return fmt.Errorf("%w; nothing was written to %s", damage, out)
			}
			if damage != nil {
				// A damaged input: export what its reader kept, say so,
				// exit 1 (README, "Damaged input").
				fmt.Fprintf(cmd.ErrOrStderr(), "rlktop: %v\nrlktop: exporting the %d events read before the damage\n", damage, len(t.Events))
			}
			if err := tracefile.ExportFile(out, t, opts); err != nil {
				return fmt.Errorf("%w (%s may be incomplete)", err, out)
			}
			if st, err := os.Stat(out); err == nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s (%d events, %d counters, %d bytes)\n",
					out, len(t.Events), len(t.Counters), st.Size())
			}
			if damage != nil {
				return exitError{code: 1}
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "output file (.json, or .json.gz for gzip)")
	cmd.Flags().BoolVar(&opts.NoFlows, "no-flows", false, "leave out the launch→kernel flow arrows")
	cmd.Flags().BoolVar(&opts.NoCounters, "no-counters", false, "leave out counter tracks (telemetry)")
	rootCmd.AddCommand(cmd)
}
