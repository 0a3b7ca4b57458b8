package decide

import (
	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/statusbound"
)

const (
	maxResultWarnings = 16   // status.results.warnings' MaxItems
	maxWarningLength  = 1024 // and its items' MaxLength
)

// AddWarnings appends warnings to status.results.warnings once each, within the API's bounds.
func AddWarnings(s *Scope, warnings []string) {
	if len(warnings) == 0 {
		return
	}
	r := s.Results().DeepCopy()
	if r == nil {
		r = &v1alpha1.Results{}
	}
	r.Warnings = MergeWarnings(r.Warnings, warnings)
	s.Decided.Results = r
}

// MergeWarnings is kept followed by the new warnings not already in it, at most
// maxResultWarnings, each within maxWarningLength.
func MergeWarnings(kept, more []string) []string {
	out := make([]string, 0, min(len(kept)+len(more), maxResultWarnings))
	seen := map[string]bool{}
	for _, w := range append(append([]string{}, kept...), more...) {
		w = statusbound.Cut(w, maxWarningLength)
		if seen[w] || len(out) == maxResultWarnings {
			continue
		}
		seen[w] = true
		out = append(out, w)
	}
	return out
}
