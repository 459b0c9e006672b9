package main

import (
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// outputWidth is the columns text written to w may take: $COLUMNS when it
// is a positive number, else the width of the terminal w is, else 0 (a
// file or a pipe: no limit, so that scripts and `less -S` get whole
// lines).
func outputWidth(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(f.Fd()) {
		return 0
	}
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	if n, _, err := term.GetSize(f.Fd()); err == nil && n > 0 {
		return n
	}
	return 0
}

// helpWidth is the width --help wraps its flags at: the terminal's, or 80
// columns where the help goes to a file or a pipe.
func helpWidth(w io.Writer) int {
	if n := outputWidth(w); n > 0 {
		return n
	}
	return 80
}

// wrapHelp makes every command's --help wrap its flag descriptions at
// helpWidth (cobra's default template writes each on one line, up to 250
// columns here).
func wrapHelp(root *cobra.Command) {
	cobra.AddTemplateFunc("wrappedFlagUsages", func(fs *pflag.FlagSet) string {
		return fs.FlagUsagesWrapped(helpWidth(root.OutOrStdout()))
	})
	root.SetUsageTemplate(wrappedUsageTemplate(root.UsageTemplate()))
}

// wrappedUsageTemplate is cobra's usage template t with its flag lists
// drawn by wrappedFlagUsages.
func wrappedUsageTemplate(t string) string {
	t = strings.ReplaceAll(t, ".LocalFlags.FlagUsages", "wrappedFlagUsages .LocalFlags")
	return strings.ReplaceAll(t, ".InheritedFlags.FlagUsages", "wrappedFlagUsages .InheritedFlags")
}
