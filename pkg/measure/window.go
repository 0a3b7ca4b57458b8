package measure

import "time"

// How finely a run is measured over time follows its length, so a short run still draws a
// curve and a long one stays bounded: a run of known length gets WindowsPerRun windows at most
// and half that at least, whole fractions of a second or whole seconds that divide a minute
// (windows start on round times); past DefaultCollectorConfig.MaxWindows a collector doubles
// the width (Collector.coarsen), which keeps 30 to 60 windows however long the run.
const (
	// DefaultWindow is the width when the run's length is unknown or long: the collector's
	// default (DefaultCollectorConfig.Window).
	DefaultWindow = 10 * time.Second
	// MinWindow is the narrowest window a runner accepts.
	MinWindow = 100 * time.Millisecond
	// WindowsPerRun is how many windows a run of known length aims at: at most this many, at
	// least half, which leaves the collector's cap (60 by default, past which widths double)
	// room for the paused start and the linger before teardown without raising it, so an
	// envelope stays within DefaultLimits, which are sized for 60 windows.
	WindowsPerRun = 40
	// OpenEndedWindow is where a run whose length only a limit bounds (a scenario that ends
	// when its iterations are done) starts: narrow enough for 20 windows in 2.5 s, and the
	// collector's doubling (250 ms, 500 ms, 1 s, 2 s, ...) keeps 30 to 60 however long it runs.
	OpenEndedWindow = 125 * time.Millisecond
)

// tidyWindows are the widths a window of a run of known length may take.
var tidyWindows = []time.Duration{
	MinWindow, 200 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2 * time.Second, 3 * time.Second, 5 * time.Second, DefaultWindow,
}

// WindowFor is the window for a run of that length: the smallest tidy width that gives at most
// WindowsPerRun windows, so 20 to 40 for a run of 2 s to 400 s (fewer below 2 s: MinWindow);
// DefaultWindow when the length is unknown (0) or 400 s and more (past 600 s the collector
// doubles it, keeping 30 to 60).
func WindowFor(length time.Duration) time.Duration {
	if length <= 0 {
		return DefaultWindow
	}
	want := length / WindowsPerRun
	for _, w := range tidyWindows {
		if w >= want {
			return w
		}
	}
	return DefaultWindow
}

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
