package report

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/tracer/attrib"
)

// TestWriteRun: the lines after the table, by hand, with and without steps
// and flags; CSV stays one table;
// JSON carries steps and flags, and a kernel name's '<' raw (not \u003c).
func TestWriteRun(t *testing.T) {
	sum := attrib.StepSummary{Count: 3, MedianNs: 999_700, P10Ns: 812, P90Ns: 45_600_000}
	flags := map[string]string{"tf32": "on", "attention": "math"}
	var b strings.Builder
	if err := WriteRun(&b, snap(), sum, flags, Options{Format: "table"}); err != nil {
		t.Fatal(err)
	}
	if want := "\nsteps: 3  median 1.00 ms  p10 812 ns  p90 45.6 ms\nflags: attention=math tf32=on\n"; !strings.HasSuffix(b.String(), want) {
		t.Errorf("table ends %q, want %q", b.String()[max(0, b.Len()-80):], want)
	}
	b.Reset()
	if err := WriteRun(&b, snap(), attrib.StepSummary{}, nil, Options{Format: "table"}); err != nil {
		t.Fatal(err)
	}
	if want := "\nsteps: 0 reported\nflags: none reported\n"; !strings.HasSuffix(b.String(), want) {
		t.Errorf("without steps or flags the table ends %q, want %q", b.String()[max(0, b.Len()-80):], want)
	}
	b.Reset()
	if err := WriteRun(&b, snap(), sum, flags, Options{Format: "csv"}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "steps:") {
		t.Errorf("csv has lines after its table:\n%s", b.String())
	}
	s := snap()
	s.Kernels[0].Name = "k<float>"
	b.Reset()
	if err := WriteRun(&b, s, sum, flags, Options{Format: "json"}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Steps    attrib.StepSummary `json:"steps"`
		StepRows []json.RawMessage  `json:"step_rows"`
		Flags    map[string]string  `json:"flags"`
	}
	if err := json.Unmarshal([]byte(b.String()), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Steps.MedianNs != 999_700 || doc.Flags["tf32"] != "on" || len(doc.StepRows) != len(s.Steps) {
		t.Errorf("json: %+v", doc)
	}
	if !strings.Contains(b.String(), `"k<float>"`) {
		t.Error(`json: kernel name not raw ("k<float>")`)
	}
}
