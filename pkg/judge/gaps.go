package judge

import (
	"fmt"
	"strings"
	"time"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// GapsSummary says what results with gaps (status.gaps) cover, naming at most named of them:
// the words of the Gapless condition, the verdict's message and the HTML report.
func GapsSummary(gaps []v1alpha1.RunnerGap, named int) string {
	var n int64
	var parts []string
	for _, g := range gaps {
		n += g.EstimatedUnobserved
		if len(parts) < named {
			parts = append(parts, GapText(g, "runner %d (%s) "))
		}
	}
	noun := "gaps"
	if len(gaps) == 1 {
		noun = "gap"
	}
	return fmt.Sprintf("the results cover the load but %d %s, about %d requests not made or not observed: %s",
		len(gaps), noun, n, strings.Join(parts, "; "))
}

// GapText is one gap in words, after a prefix taking the runner and the cause.
func GapText(g v1alpha1.RunnerGap, prefix string) string {
	out := fmt.Sprintf(prefix, g.Runner, g.Cause)
	from := "the start"
	if g.ObservedUntil != nil {
		from = g.ObservedUntil.UTC().Format(time.RFC3339)
	}
	switch {
	case g.Job == "":
		return out + fmt.Sprintf("unobserved from %s to the end, about %d requests; too late in the load to replace", from, g.EstimatedUnobserved)
	case g.ReplacedAt == nil:
		return out + fmt.Sprintf("unobserved from %s; %s takes over its segment for the remaining %s", from, g.Job, g.Remaining)
	case g.ObservedUntil != nil && !g.ObservedUntil.Before(g.ReplacedAt):
		// The lost runner still answered until its replacement took over: nothing went unseen.
		return out + fmt.Sprintf("observed until %s, when %s took over for the remaining %s", from, g.Job, g.Remaining)
	}
	return out + fmt.Sprintf("unobserved from %s to %s, about %d requests; %s ran the remaining %s",
		from, g.ReplacedAt.UTC().Format(time.RFC3339), g.EstimatedUnobserved, g.Job, g.Remaining)
}
