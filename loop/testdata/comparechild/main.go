// Command comparechild is the built-in loop's child for loop's tests:
// `comparechild __demo-child [--steps=N] [--flag k=v]…`, the argv
// loop.Live gives the rlktop binary, running demo.RunChild as
// `rlktop __demo-child` does, without building all of rlktop (the
// TUI and importers) for the tests of package loop.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/rlktop/rlktop/loop"
	"github.com/rlktop/rlktop/loop/demo"
)

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(s string) error { *m = append(*m, s); return nil }

func main() {
	if len(os.Args) < 2 || os.Args[1] != loop.DemoChildCommand {
		fmt.Fprintf(os.Stderr, "usage: %s %s [--steps=N] [--flag k=v]...\n", os.Args[0], loop.DemoChildCommand)
		os.Exit(2)
	}
	var flags multi
	var opts demo.ChildOptions
	fs := flag.NewFlagSet(loop.DemoChildCommand, flag.ExitOnError)
	fs.Var(&flags, "flag", "loop flag key=value (repeatable)")
	fs.Int64Var(&opts.Steps, "steps", 0, "stop after this many steps")
	fs.Parse(os.Args[2:])
	cfg := demo.DefaultConfig()
	if err := demo.ParseFlags(&cfg, flags); err != nil {
		fmt.Fprintln(os.Stderr, "comparechild:", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := demo.RunChild(ctx, cfg, opts); err != nil {
		fmt.Fprintln(os.Stderr, "comparechild:", err)
		os.Exit(1)
	}
}
