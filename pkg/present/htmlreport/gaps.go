package htmlreport

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/judge"
)

// namedGaps is how many gaps the Gaps section's sentence names, as the verdict's message does
// (the table lists them all).
const namedGaps = 5

// withGaps shades each of status.gaps on the charts over time: from the end of what the lost
// runner's kept results cover (observedUntil; the load's start when none was kept, as
// estimatedUnobserved counts) to when its replacement started (the load's end when it was
// too late to replace, or while the replacement still starts).
func withGaps(charts []Chart, run *v1alpha1.TestRun, tl *judge.Timeline) []Chart {
	gaps := run.Status.Gaps
	if len(gaps) > v1alpha1.MaxReplacementsLimit { // the CRD's bound; a status is not trusted to keep it
		gaps = gaps[:v1alpha1.MaxReplacementsLimit]
	}
	if len(gaps) == 0 {
		return charts
	}
	start, end := loadBounds(run, tl)
	spans := make([]Span, 0, len(gaps))
	for _, g := range gaps {
		spans = append(spans, gapSpan(g, start, end))
	}
	for i := range charts {
		if charts[i].Kind == KindTime {
			charts[i].Spans = append(charts[i].Spans, spans...)
		}
	}
	return charts
}

// loadBounds are the load's start and end as the timeline has them, else as status does.
func loadBounds(run *v1alpha1.TestRun, tl *judge.Timeline) (start, end time.Time) {
	if tl != nil {
		start, end = tl.LoadStart, tl.LoadEnd
	}
	if start.IsZero() && run.Status.StartTime != nil {
		start = run.Status.StartTime.Time
	}
	if end.IsZero() && run.Status.CompletionTime != nil {
		end = run.Status.CompletionTime.Time
	}
	return start, end
}

func gapSpan(g v1alpha1.RunnerGap, loadStart, loadEnd time.Time) Span {
	from := g.LostAt.Time
	switch {
	case g.ObservedUntil != nil:
		from = g.ObservedUntil.Time
	case !loadStart.IsZero():
		from = loadStart
	}
	to, label := g.LostAt.Time, fmt.Sprintf("runner %d lost (%s), ", g.Runner, g.Cause)
	switch {
	case g.ReplacedAt != nil:
		to = g.ReplacedAt.Time
		label += "replaced after " + replacedAfter(g)
	case g.Job == "":
		label += "not replaced (too late in the load)"
	default:
		label += "replacement starting"
	}
	if g.ReplacedAt == nil && loadEnd.After(to) {
		to = loadEnd
	}
	if to.Before(from) {
		to = from
	}
	label += fmt.Sprintf("; ~%d requests unobserved", g.EstimatedUnobserved)
	return Span{From: unixSeconds(from), To: unixSeconds(to), Label: label}
}

// replacedAfter is the time from the loss seen to the replacement started, in whole seconds.
func replacedAfter(g v1alpha1.RunnerGap) string {
	if g.ReplacedAt == nil {
		return "–"
	}
	return max(g.ReplacedAt.Sub(g.LostAt.Time), 0).Round(time.Second).String()
}

// gapsView is the report's Gaps section: what the results cover, and one row per gap.
type gapsView struct {
	Summary string
	Rows    []gapRow
}

type gapRow struct {
	v1alpha1.RunnerGap
	From, To, After string
}

// newGapsView is the Gaps section of a run with gaps, or of a run whose Gapless condition says
// it has none; nil for a run that cannot have any.
func newGapsView(run *v1alpha1.TestRun) *gapsView {
	gaps := run.Status.Gaps
	if len(gaps) > v1alpha1.MaxReplacementsLimit {
		gaps = gaps[:v1alpha1.MaxReplacementsLimit]
	}
	if len(gaps) == 0 {
		if c := meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionGapless); c != nil {
			return &gapsView{Summary: c.Message}
		}
		return nil
	}
	v := &gapsView{Summary: judge.GapsSummary(gaps, namedGaps)}
	for _, g := range gaps {
		r := gapRow{RunnerGap: g, From: "the start", To: "the end", After: replacedAfter(g)}
		if g.ObservedUntil != nil {
			r.From = utc(g.ObservedUntil.Time)
		}
		switch {
		case g.ReplacedAt != nil:
			r.To = utc(g.ReplacedAt.Time)
		case g.Job != "":
			r.To = "(replacement starting)"
		}
		v.Rows = append(v.Rows, r)
	}
	return v
}
