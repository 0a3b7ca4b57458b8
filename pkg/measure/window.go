package measure

import "time"

// WindowedAgg folds, over every envelope and series, the windows of metric that lie wholly
// within [from, to): how a part of a run (a peak step) is judged while the run goes on. ok is
// false when no envelope has the metric. Windows line up across runners (their keys are
// unix time over the width), so the runners' shares of one step merge exactly. Gauges are not
// meaningful over a range and are merged as one series.
func WindowedAgg(envs []Envelope, metric string, from, to time.Time) (agg Agg, ok bool) {
	for i := range envs {
		e := &envs[i]
		for _, m := range e.Metrics {
			if m.Name != metric {
				continue
			}
			ok = true
			for _, s := range m.Series {
				for _, w := range s.Windows {
					start := time.Unix(0, w.Key*e.WindowNanos)
					if !start.Before(from) && !start.Add(time.Duration(e.WindowNanos)).After(to) {
						agg.Merge(w.Agg)
					}
				}
			}
		}
	}
	return agg, ok
}
