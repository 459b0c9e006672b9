// Command rlktop is top for the kernels of a training loop.
//
// Each subcommand lives in its own file and adds itself to rootCmd in init;
// this file holds only the root. Wiring only: no logic here.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

var rootCmd = &cobra.Command{
	Use:           "rlktop",
	Short:         "top for the kernels of a training loop",
	SilenceUsage:  true,
	SilenceErrors: true,
}

// exitError carries a process exit status through cobra.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func main() {
	setupCLI(rootCmd)
	if err := rootCmd.Execute(); err != nil {
		if ee, ok := err.(exitError); ok {
			os.Exit(ee.code)
		}
		fmt.Fprintln(os.Stderr, "rlktop:", err)
		os.Exit(1)
	}
}
