package judge

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/measure"
)

// Progress is how far a run has come, from its runners' windows merged so far: totals since
// the start, and the rate and p95 of the last complete window (a window still filling would
// understate the rate). expected is zero when only the script knows the load's length.
func Progress(s *measure.Summary, start, now time.Time, expected time.Duration) v1alpha1.Progress {
	req := requestsOf(s)
	p := v1alpha1.Progress{
		Elapsed:           roundDuration(now.Sub(start)).String(),
		Requests:          int64(req.total),
		Failed:            int64(req.failed),
		ErrorPercent:      percent(float64(req.failed), req.total),
		RequestsPerSecond: "0.00",
		UpdateTime:        metav1.NewTime(now),
	}
	tl := BuildTimeline(s, nil)
	width := time.Duration(s.WindowNanos)
	for i := len(tl.Windows) - 1; i >= 0; i-- {
		w := tl.Windows[i]
		if w.Start.Add(width).After(s.End) && i > 0 {
			continue
		}
		p.RequestsPerSecond = fmt.Sprintf("%.2f", w.RequestsPerSecond)
		if w.Requests > 0 {
			p.P95 = Millis(w.P95)
		}
		break
	}
	p.Summary = p.Elapsed
	if expected > 0 {
		p.Expected = roundDuration(expected).String()
		done := min(100*now.Sub(start).Seconds()/expected.Seconds(), 100)
		p.Summary = fmt.Sprintf("%s/%s %.0f%%", p.Elapsed, p.Expected, max(done, 0))
	}
	return p
}

func roundDuration(d time.Duration) time.Duration { return max(d, 0).Round(time.Second) }
