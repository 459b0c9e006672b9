package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/rlktop/rlktop/internal/escape"
	"github.com/rlktop/rlktop/tracer/attrib"
)

// ByFinding is `rlktop report --by finding`: the ranked findings
// (attrib.EvaluateFindings) instead of a table of the snapshot.
const ByFinding = "finding"

// FindingsDoc is the JSON of `rlktop report --by finding --format json`:
// the source and the ranked findings (attrib.Finding: id, title, kind,
// share 0..1 and what it is a share of, evidence sentences, raw numbers
// by name in ns / shares / counts, top kernels, try, the flag that tests
// it with its current value, invalid, source of the rule).
type FindingsDoc struct {
	Source   string           `json:"source"`
	Format   string           `json:"format"`
	Findings []attrib.Finding `json:"findings"`
}

// FlagTest is how a finding's flag is tested: the `rlktop compare`
// arguments comparing its current value with the suggested one
// ("--flag sdpa=math,flash"; an environment variable not set compares
// its empty value). "" when the finding names no flag.
func FlagTest(f *attrib.Finding) string {
	if f.Flag == nil {
		return ""
	}
	return fmt.Sprintf("--flag %s=%s,%s", f.Flag.Key, f.Flag.Current, f.Flag.Value)
}

// WriteFindings writes the ranked findings fs of snapshot s in o.Format
// (table, md, csv, json); o.Top limits them (0 or less: all). Errors:
// ErrOption for an unknown format; write errors from w.
func WriteFindings(w io.Writer, s *attrib.Snapshot, fs []attrib.Finding, o Options) error {
	if o.Top > 0 && len(fs) > o.Top {
		fs = fs[:o.Top]
	}
	switch o.Format {
	case "", "table", "md":
		md := o.Format == "md"
		var hb strings.Builder
		if err := header(&hb, s, ""); err != nil {
			return err
		}
		var b strings.Builder
		for _, l := range strings.Split(strings.TrimRight(hb.String(), "\n"), "\n") {
			if md {
				l += "  "
			}
			b.WriteString(l + "\n")
		}
		b.WriteString("\n")
		if len(fs) == 0 {
			b.WriteString("no findings: no rule of the findings table fired on this input\n")
		}
		for i := range fs {
			writeFinding(&b, i+1, &fs[i], md)
		}
		_, err := io.WriteString(w, b.String())
		return err
	case "csv":
		cw := csv.NewWriter(w)
		cw.Write([]string{"rank", "id", "title", "kind", "share", "share_of", "invalid", "flag", "value", "current", "evidence", "top", "try", "source"})
		for i, f := range fs {
			var key, val, cur string
			if f.Flag != nil {
				key, val, cur = f.Flag.Key, f.Flag.Value, f.Flag.Current
			}
			cw.Write([]string{strconv.Itoa(i + 1), f.ID, f.Title, f.Kind, strconv.FormatFloat(f.Share, 'f', 6, 64), f.ShareOf,
				strconv.FormatBool(f.Invalid), key, val, cur, strings.Join(f.Evidence, "; "), strings.Join(f.Top, "; "), f.Try, f.Source})
		}
		cw.Flush()
		return cw.Error()
	case "json":
		if fs == nil {
			fs = []attrib.Finding{}
		}
		return encodeJSON(w, FindingsDoc{Source: s.Source, Format: formatName(s), Findings: fs})
	}
	return fmt.Errorf("%w: unknown format %q (use one of %s)", ErrOption, o.Format, strings.Join(Formats(), ", "))
}

func writeFinding(b *strings.Builder, n int, f *attrib.Finding, md bool) {
	esc := escape.Control
	if md {
		esc = escape.Markdown
	}
	share := ""
	if f.ShareOf != "" && f.Share > 0 {
		share = fmt.Sprintf(" — %s of %s", Percent(f.Share), esc(f.ShareOf))
	}
	inv := ""
	if f.Invalid {
		inv = " (INVALID RUN)"
	}
	if md {
		fmt.Fprintf(b, "### %d. %s%s%s\n\n", n, esc(f.Title), inv, share)
		fmt.Fprintf(b, "`%s`\n\n", f.ID)
	} else {
		fmt.Fprintf(b, "%d. %s%s%s  [%s]\n", n, esc(f.Title), inv, share, f.ID)
	}
	item := func(label, text string) {
		if md {
			if label != "" {
				fmt.Fprintf(b, "- **%s** %s\n", label, text)
			} else {
				fmt.Fprintf(b, "- %s\n", text)
			}
			return
		}
		if label != "" {
			fmt.Fprintf(b, "   %s %s\n", label, text)
		} else {
			fmt.Fprintf(b, "   %s\n", text)
		}
	}
	for _, e := range f.Evidence {
		item("", esc(e))
	}
	if len(f.Top) > 0 {
		item("top:", esc(strings.Join(f.Top, "; ")))
	}
	item("try:", esc(f.Try))
	if f.Flag != nil {
		how := "restart the command with it"
		if !f.Flag.Env {
			how = "switched live"
		}
		cur := f.Flag.Current
		if cur == "" {
			cur = "unset"
		}
		item("test:", esc(fmt.Sprintf("%s=%s (now %s; %s): rlktop compare %s; in a live TUI: enter on the finding",
			f.Flag.Key, f.Flag.Value, cur, how, FlagTest(f))))
	}
	item("source:", esc(f.Source))
	b.WriteString("\n")
}
