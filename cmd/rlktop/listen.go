package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rlktop/rlktop/internal/fileout"
	"github.com/rlktop/rlktop/loop"
	"github.com/rlktop/rlktop/tracer/cupti/launch"
	"github.com/rlktop/rlktop/tracer/wire"
)

// Ranks on other hosts: `rlktop run --listen HOST:PORT`
// makes the live session also accept connections over TCP, with a fresh
// 128-bit token (tracer/wire.ListenTCP); `rlktop agent-env --connect ADDR`
// on another host prints the environment that makes the ranks started
// there (Python agent, CUDA injection library) connect to it.

func init() {
	var connect, cacheDir string
	var untraced bool
	cmd := &cobra.Command{
		Use:   "agent-env --connect tcp:HOST:PORT#TOKEN",
		Short: "print the environment that makes processes on this host report to a session on another host",
		Long: `agent-env prints shell export lines (RLKTOP_SOCKET, PYTHONPATH with rlktop's
Python agent first, and the CUDA injection variables when a driver and the
tracer library are here) for the processes of one training job started on
this host, so that they report to the session of 'rlktop run --listen' on
another host, as separate sources with their ranks (RANK, OMPI_COMM_WORLD_RANK
or SLURM_PROCID in their environment). On the second node:

    eval "$(rlktop agent-env --connect 'tcp:10.0.0.1:29600#3f…')"
    torchrun --nnodes 2 --node-rank 1 … train.py

The address, token included, is what 'rlktop run --listen' printed (or wrote
to its --listen-file). Anyone who has the token can send events to the
session: pass it the way you pass other secrets.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			hostport, token, hasToken := strings.Cut(strings.TrimPrefix(connect, "tcp:"), "#")
			if !strings.HasPrefix(connect, "tcp:") || !hasToken || strings.TrimSpace(token) == "" || hostport == "" {
				return fmt.Errorf("--connect %q: give the address 'rlktop run --listen' printed, tcp:HOST:PORT#TOKEN (%w)", connect, wire.ErrAuth)
			}
			plan, err := launch.Prepare(launch.Options{Socket: connect, Trace: !untraced, CacheDir: cacheDir, Env: []string{}})
			if err != nil {
				return err
			}
			dir, err := launch.ShimDir(cacheDir)
			if err != nil {
				return fmt.Errorf("the Python agent: %w", err)
			}
			out := cmd.OutOrStdout()
			for _, kv := range plan.Env {
				k, v, _ := strings.Cut(kv, "=")
				fmt.Fprintf(out, "export %s=%s\n", k, shellQuote(v))
			}
			fmt.Fprintf(out, "export PYTHONPATH=%s${PYTHONPATH:+:$PYTHONPATH}\n", shellQuote(dir))
			if plan.Banner != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "rlktop: %s (the Python agent still reports steps, stages and torch.profiler windows)\n", plan.Banner)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&connect, "connect", "", "the session's address from 'rlktop run --listen': tcp:HOST:PORT#TOKEN")
	f.StringVar(&cacheDir, "cache-dir", "", "where to extract the agent and the injection library (default: the user cache directory)")
	f.BoolVar(&untraced, "untraced", false, "no CUDA injection library, the Python agent only")
	rootCmd.AddCommand(cmd)
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// listenRanks opens --listen's TCP listener on live's session and returns
// the line telling the user how ranks on other hosts connect ("" without
// --listen). With --listen-file it also writes the address there (mode
// 0600).
func (rf *runFlags) listenRanks(live *loop.Live) (string, error) {
	if rf.listen == "" {
		return "", nil
	}
	addr, err := live.Session.ListenTCP(rf.listen)
	if err != nil {
		return "", fmt.Errorf("--listen %s: %w", rf.listen, err)
	}
	if rf.listenFile != "" {
		// A private temporary file renamed into place: a link or another
		// user's file planted at the name is replaced, never written to.
		if err := fileout.WritePrivate(rf.listenFile, []byte(addr+"\n")); err != nil {
			return "", fmt.Errorf("--listen-file: %w", err)
		}
	}
	return fmt.Sprintf("ranks on other hosts: eval \"$(rlktop agent-env --connect '%s')\" before starting them", addr), nil
}
