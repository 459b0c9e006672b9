package loop

import "github.com/rlktop/rlktop/tracer/attrib"

// SuggestPlan is what `rlktop compare --suggest` runs: one comparison per
// flag-testable finding, in the findings' rank order; a flag already
// planned by a higher-ranked finding is not run twice.
type SuggestPlan struct {
	Findings []attrib.Finding // the testable ones, ranked
}

// PlanSuggestions picks, from ranked findings, those that name a flag.
func PlanSuggestions(fs []attrib.Finding) SuggestPlan {
	var p SuggestPlan
	seen := map[string]bool{}
	for _, f := range fs {
		if f.Flag == nil || seen[f.Flag.Key+"="+f.Flag.Value] {
			continue
		}
		seen[f.Flag.Key+"="+f.Flag.Value] = true
		p.Findings = append(p.Findings, f)
	}
	return p
}
