package main

import (
	"context"
	"os"
	"os/signal"
	"runtime"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/rlktop/rlktop/loop"
	"github.com/rlktop/rlktop/loop/demo"
)

func init() {
	var flags []string
	var opts demo.ChildOptions
	cmd := &cobra.Command{
		Use:    loop.DemoChildCommand,
		Short:  "run the built-in RL loop as a traced child (started by rlktop itself)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg := demo.DefaultConfig()
			if err := demo.ParseFlags(&cfg, flags); err != nil {
				return err
			}
			// One thread unless the user chose otherwise: gonum's parallel
			// GEMM spends about 4× the CPU on the loop's small matrices
			// (5 ms vs 1.26 ms for the QKV GEMM at 32 games, measured in
			// loop/demo), and a single-threaded loop times more steadily.
			if os.Getenv("GOMAXPROCS") == "" {
				runtime.GOMAXPROCS(1)
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			opts.Log = os.Stderr
			return demo.RunChild(ctx, cfg, opts)
		},
	}
	cmd.Flags().StringArrayVar(&flags, "flag", nil, "loop flag key=value (repeatable)")
	cmd.Flags().Int64Var(&opts.Steps, "steps", 0, "stop after this many steps (0: until stopped)")
	cmd.Flags().Int64Var(&opts.LogEvery, "log-every", 10, "a progress line on stderr every this many steps")
	rootCmd.AddCommand(cmd)
}
