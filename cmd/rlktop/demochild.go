package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/rlktop/rlktop/loop"
)

func init() {
	var opts loop.DemoChildOptions
	cmd := &cobra.Command{
		Use:    loop.DemoChildCommand,
		Short:  "run the built-in RL loop as a traced child (started by rlktop itself)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return loop.RunDemoChild(ctx, opts)
		},
	}
	cmd.Flags().StringArrayVar(&opts.Flags, "flag", nil, "loop flag key=value (repeatable)")
	cmd.Flags().Int64Var(&opts.Steps, "steps", 0, "stop after this many steps (0: until stopped)")
	rootCmd.AddCommand(cmd)
}
