package compare

import (
	"fmt"

	"fleetbench.dev/fleetbench/api/v1alpha1"
)

// maxUndecidedNote bounds the note quoted for each undecided row: the verdict's message names
// several of them.
const maxUndecidedNote = 160

// Undecided names what a comparison could not judge: each row that is TooFewSamples or NoData,
// with its note, or the comparison itself when it has no row at all (the baseline's record was
// deleted or could not be read, or neither run had a comparable metric). A row that decided
// nothing is not a pass: the verdict applies spec.baseline.onUndecided to these. Nil when
// every row was judged.
func Undecided(c v1alpha1.Comparison) []string {
	var out []string
	for _, r := range c.Metrics {
		if r.Decision != v1alpha1.ComparisonTooFewSamples && r.Decision != v1alpha1.ComparisonNoData {
			continue
		}
		name := r.Name
		if r.Stat != "" {
			name += " " + r.Stat
		}
		s := fmt.Sprintf("%s %s", name, r.Decision)
		if r.Note != "" {
			s += " (" + truncate(r.Note, maxUndecidedNote) + ")"
		}
		out = append(out, s)
	}
	if len(c.Metrics) == 0 && (c.Decision == v1alpha1.ComparisonNoData || c.Decision == v1alpha1.ComparisonTooFewSamples) {
		s := "the whole comparison " + string(c.Decision)
		if c.Message != "" {
			s += " (" + truncate(c.Message, 2*maxUndecidedNote) + ")"
		}
		out = append(out, s)
	}
	return out
}
