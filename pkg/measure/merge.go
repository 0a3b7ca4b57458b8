package measure

import (
	"errors"
	"fmt"
	"sort"
	"time"
)

// KeptTags are the tags runners always split series by. Other tags (URLs, names, exact status
// codes) are kept only when a threshold names them, so series stay few and bounded.
// status_class is derived from k6's status tag: "2xx".."5xx", or "error" for status 0 (the
// request failed before a response).
var KeptTags = []string{"scenario", "expected_response", "status_class", "check", "group"}

// BuiltinMetrics are k6 v2's built-in metrics and their types: k6 registers them before a
// script runs, so a threshold on one that got no samples is judged on an empty sink.
var BuiltinMetrics = map[string]MetricType{
	"vus": Gauge, "vus_max": Gauge, "iterations": Counter, "iteration_duration": Trend,
	"dropped_iterations": Counter, "checks": Rate, "group_duration": Trend, "data_sent": Counter,
	"data_received": Counter, "http_reqs": Counter, "http_req_failed": Rate, "http_req_duration": Trend,
	"http_req_blocked": Trend, "http_req_connecting": Trend, "http_req_tls_handshaking": Trend,
	"http_req_sending": Trend, "http_req_waiting": Trend, "http_req_receiving": Trend,
	"ws_sessions": Counter, "ws_msgs_sent": Counter, "ws_msgs_received": Counter, "ws_ping": Trend,
	"ws_session_duration": Trend, "ws_connecting": Trend, "grpc_req_duration": Trend,
}

// Summary is the merged view of N runners.
type Summary struct {
	Runners []RunnerInfo `json:"runners"`
	// Complete is true when every runner sent a final envelope.
	Complete bool      `json:"complete"`
	Start    time.Time `json:"start"`
	End      time.Time `json:"end"`
	// Duration spans the earliest start to the latest end; counter rates
	// use it, as k6 uses the test run duration.
	Duration    time.Duration             `json:"duration"`
	WindowNanos int64                     `json:"window"`
	Accuracy    float64                   `json:"accuracy"`
	Metrics     map[string]*MetricSummary `json:"metrics"`
	Checks      []Check                   `json:"checks,omitempty"`
	// Thresholds holds the scripts' own thresholds evaluated on merged data.
	Thresholds      []ThresholdResult `json:"thresholds,omitempty"`
	OverflowSamples uint64            `json:"overflowSamples,omitempty"`
	Overflows       []Overflow        `json:"overflows,omitempty"`
	// Tags are the tag keys every runner split series by; a threshold on another tag cannot be judged.
	Tags []string `json:"tags,omitempty"`
	// Slowest are the K slowest requests of each window over the fleet (keys in WindowNanos),
	// ascending by window and slowest first within one; SlowestOfRun the run's SlowestOfRun
	// slowest, slowest first. Runners are named.
	Slowest      []SlowRequest `json:"slowest,omitempty"`
	SlowestOfRun []SlowRequest `json:"slowestOfRun,omitempty"`
}

// RunnerInfo describes one merged envelope.
type RunnerInfo struct {
	Name    string `json:"name"`
	Final   bool   `json:"final"`
	Aborted bool   `json:"aborted,omitempty"`
	Error   string `json:"error,omitempty"`
	CPU     CPU    `json:"cpu"`
	// WindowNanos is this runner's own window width, which its CPU windows' keys count in (a
	// replacement that started later may have coarsened less).
	WindowNanos int64 `json:"window,omitempty"`
	// CPUUtilization is CPU seconds over (run seconds * usable cores); near
	// 1 means the generator, not the target, may have been the limit.
	CPUUtilization float64 `json:"cpuUtilization"`
}

// MetricSummary is one metric merged over all runners and series.
type MetricSummary struct {
	Name     string          `json:"name"`
	Type     MetricType      `json:"type"`
	Contains string          `json:"contains,omitempty"`
	Agg      Agg             `json:"-"`
	Stats    Stats           `json:"stats"`
	Series   []SeriesSummary `json:"series"`
	Windows  []WindowStats   `json:"windows,omitempty"`
}

// SeriesSummary is one tag combination merged over all runners.
type SeriesSummary struct {
	Tags    map[string]string `json:"tags,omitempty"`
	Agg     Agg               `json:"-"`
	Stats   Stats             `json:"stats"`
	Windows []WindowStats     `json:"windows,omitempty"`
}

// WindowStats are the stats of one time window.
type WindowStats struct {
	Start time.Time `json:"start"`
	Stats Stats     `json:"stats"`
}

// Stats are the numbers a report shows. Which are meaningful depends on the
// metric type: counters Count/Sum/Rate (per second), rates Rate (share of
// non-zero samples)/Passes/Fails, gauges Value/Min/Max/Avg, trends the rest.
// A gauge's Avg is the mean of its samples; for vus and vus_max (fleetGauges)
// it is the sum over runners of each runner's mean (fleetMeans).
type Stats struct {
	Count  uint64  `json:"count"`
	Sum    float64 `json:"sum,omitempty"`
	Rate   float64 `json:"rate,omitempty"`
	Value  float64 `json:"value,omitempty"`
	Passes uint64  `json:"passes,omitempty"`
	Fails  uint64  `json:"fails,omitempty"`
	Min    float64 `json:"min,omitempty"`
	Max    float64 `json:"max,omitempty"`
	Avg    float64 `json:"avg,omitempty"`
	Med    float64 `json:"med,omitempty"`
	P90    float64 `json:"p90,omitempty"`
	P95    float64 `json:"p95,omitempty"`
	P99    float64 `json:"p99,omitempty"`
	// Shares (0..100) of trend samples above and below the average.
	AboveAvgPercent float64 `json:"aboveAvgPercent,omitempty"`
	BelowAvgPercent float64 `json:"belowAvgPercent,omitempty"`
}

// Check is one k6 check over all runners.
type Check struct {
	Name   string `json:"name"`
	Group  string `json:"group,omitempty"`
	Passes uint64 `json:"passes"`
	Fails  uint64 `json:"fails"`
}

// ComputeStats derives Stats from an Agg; seconds is the span counter rates
// are taken over.
func ComputeStats(typ MetricType, a *Agg, seconds float64) Stats {
	s := Stats{Count: a.Count, Sum: a.Sum, Min: a.Min, Max: a.Max}
	switch typ {
	case Counter:
		if seconds > 0 {
			s.Rate = a.Sum / seconds
		}
	case Rate:
		s.Passes, s.Fails = a.NonZero, a.Count-a.NonZero
		if a.Count > 0 {
			s.Rate = float64(a.NonZero) / float64(a.Count)
		}
	case Gauge:
		s.Value = a.Last
		s.Avg = a.Avg()
	case Trend:
		s.Avg = a.Avg()
		s.Med = a.Quantile(0.5)
		s.P90 = a.Quantile(0.9)
		s.P95 = a.Quantile(0.95)
		s.P99 = a.Quantile(0.99)
		if a.Count > 0 && a.Hist != nil {
			below, above := a.Hist.CountBelowAbove(s.Avg)
			s.BelowAvgPercent = 100 * float64(below) / float64(a.Count)
			s.AboveAvgPercent = 100 * float64(above) / float64(a.Count)
		}
	}
	return s
}

// fleetGauges measure each runner's own share, so the fleet's value is their sum (fleet-wide
// VUs is the sum of each runner's VUs). Any other gauge (a script's own) is one quantity every
// runner observes: its latest value wins, as in one k6.
var fleetGauges = map[string]bool{"vus": true, "vus_max": true}

// combineRunners adds b, the data of another runner, into a: fleet gauges are summed over
// runners; everything else merges as if all samples came from one runner.
func combineRunners(name string, typ MetricType, a *Agg, b Agg) {
	if typ != Gauge || !fleetGauges[name] || a.Count == 0 {
		a.Merge(b)
		return
	}
	last := a.Last + b.Last
	a.Merge(b)
	a.Last = last
}

// setFleetMeans sets the Avg of windows (of width wide, ascending, as windowStats gives them)
// to the sum, over runners, of each runner's mean of metric name in that window (of its series
// whose tag key is *series, or of all its series when series is nil), and returns the same sum
// over the whole run. A gauge holds its value until its next sample, so a runner without a
// sample in a window after its first sampled one and up to its end counts with its previous
// mean: k6 samples vus and vus_max once a second until just before it stops its outputs, and a
// window narrower than that, or one its tick missed by a millisecond, would otherwise drop that
// runner's VUs from the fleet's. Runners are summed in envelope order, so the result is
// deterministic; each runner's mean is exact (its samples' sum over their count).
func setFleetMeans(envs []Envelope, name string, series *string, wide int64, windows []WindowStats) (total float64) {
	sums := make([]float64, len(windows))
	keyOf := func(i int) int64 { return floorDiv(windows[i].Start.UnixNano(), wide) }
	var points []fleetPoint
	for i := range envs {
		e := &envs[i]
		var runnerTotal Agg
		points = runnerMeans(e, name, series, wide, &runnerTotal, points[:0])
		if runnerTotal.Count == 0 || len(points) == 0 {
			continue
		}
		total += runnerTotal.Avg()
		last := max(points[len(points)-1].key, floorDiv(e.EndUnixNano-1, wide)) // the window it ended in
		next := 0
		for w := sort.Search(len(windows), func(w int) bool { return keyOf(w) >= points[0].key }); w < len(windows); w++ {
			k := keyOf(w)
			if k > last {
				break
			}
			for next+1 < len(points) && points[next+1].key <= k {
				next++
			}
			sums[w] += points[next].mean
		}
	}
	for i := range windows {
		windows[i].Stats.Avg = sums[i]
	}
	return total
}

// fleetPoint is one runner's mean of a gauge in the window of key.
type fleetPoint struct {
	key  int64
	mean float64
}

// runnerMeans appends to points one runner's means of metric name (its series selected as
// setFleetMeans says) per window of width wide, ascending, and folds the series' totals into
// total. One series in windows of that width (the usual case: vus has no tags) is read as it
// is; otherwise its windows are merged per key first.
func runnerMeans(e *Envelope, name string, series *string, wide int64, total *Agg, points []fleetPoint) []fleetPoint {
	var selected []*Series
	for mi := range e.Metrics {
		if e.Metrics[mi].Name != name {
			continue
		}
		for si := range e.Metrics[mi].Series {
			if es := &e.Metrics[mi].Series[si]; series == nil || sortedTagKey(es.Tags) == *series {
				selected = append(selected, es)
				total.Merge(es.Total)
			}
		}
	}
	if len(selected) == 1 && e.WindowNanos == wide {
		for _, w := range selected[0].Windows {
			points = append(points, fleetPoint{w.Key, w.Avg()})
		}
		return points
	}
	merged := map[int64]*Agg{}
	for _, es := range selected {
		for _, w := range es.Windows {
			aggAt(merged, floorDiv(w.Key*e.WindowNanos, wide)).Merge(w.Agg)
		}
	}
	for k, a := range merged {
		points = append(points, fleetPoint{k, a.Avg()})
	}
	sort.Slice(points, func(a, b int) bool { return points[a].key < points[b].key })
	return points
}

type seriesAcc struct {
	tags    map[string]string
	total   Agg
	windows map[int64]*Agg
}

type metricAcc struct {
	m       *MetricSummary
	series  map[string]*seriesAcc
	total   Agg
	windows map[int64]*Agg
}

// Merge merges the envelopes of N runners. Envelopes are validated first;
// metrics must agree on type across envelopes.
func Merge(envs ...Envelope) (Summary, error) {
	if len(envs) == 0 {
		return Summary{}, errors.New("merge: no envelopes")
	}
	s := Summary{Complete: true, Metrics: map[string]*MetricSummary{}, Accuracy: RelativeAccuracy}
	var start, end int64
	for i := range envs {
		e := &envs[i]
		if err := e.Validate(); err != nil {
			return Summary{}, fmt.Errorf("merge: envelope %d (%s): %w", i, e.Runner, err)
		}
		if i == 0 || e.StartUnixNano < start {
			start = e.StartUnixNano
		}
		if i == 0 || e.EndUnixNano > end {
			end = e.EndUnixNano
		}
		s.WindowNanos = max(s.WindowNanos, e.WindowNanos)
		s.Accuracy = max(s.Accuracy, e.Accuracy)
		s.Complete = s.Complete && e.Final
		s.OverflowSamples += e.OverflowSamples
		s.Overflows = appendOverflows(s.Overflows, e.Overflows)
		s.Tags = commonTags(s.Tags, e.Tags, i == 0)
	}
	s.Start, s.End = time.Unix(0, start), time.Unix(0, end)
	s.Duration = s.End.Sub(s.Start)

	// Map a source window onto the (possibly wider) common window grid by
	// its start time; with widths that are multiples of each other this is
	// exact.
	rekey := func(e *Envelope, k int64) int64 { return floorDiv(k*e.WindowNanos, s.WindowNanos) }

	accs := map[string]*metricAcc{}
	thresholds := map[string][]string{}
	for i := range envs {
		e := &envs[i]
		s.Runners = append(s.Runners, runnerInfo(e))
		for key, exprs := range e.Thresholds {
			for _, x := range exprs {
				if !contains(thresholds[key], x) {
					thresholds[key] = append(thresholds[key], x)
				}
			}
		}
		for mi := range e.Metrics {
			em := &e.Metrics[mi]
			acc := accs[em.Name]
			if acc == nil {
				acc = &metricAcc{
					m:       &MetricSummary{Name: em.Name, Type: em.Type, Contains: em.Contains},
					series:  map[string]*seriesAcc{},
					windows: map[int64]*Agg{},
				}
				accs[em.Name] = acc
			} else if acc.m.Type != em.Type {
				return Summary{}, fmt.Errorf("merge: metric %q is a %s in one envelope and a %s in envelope %d (%s)",
					em.Name, acc.m.Type, em.Type, i, e.Runner)
			}
			// Within one runner, series combine like samples (a gauge's
			// latest value wins); the runner's result then adds to the fleet.
			var runnerTotal Agg
			runnerWindows := map[int64]*Agg{}
			for si := range em.Series {
				es := &em.Series[si]
				key := sortedTagKey(es.Tags)
				sa := acc.series[key]
				if sa == nil {
					sa = &seriesAcc{tags: es.Tags, windows: map[int64]*Agg{}}
					acc.series[key] = sa
				}
				combineRunners(em.Name, em.Type, &sa.total, es.Total)
				runnerTotal.Merge(es.Total)
				for wi := range es.Windows {
					w := &es.Windows[wi]
					k := rekey(e, w.Key)
					combineRunners(em.Name, em.Type, aggAt(sa.windows, k), w.Agg)
					aggAt(runnerWindows, k).Merge(w.Agg)
				}
			}
			combineRunners(em.Name, em.Type, &acc.total, runnerTotal)
			for k, w := range runnerWindows {
				combineRunners(em.Name, em.Type, aggAt(acc.windows, k), *w)
			}
		}
	}

	for name, acc := range accs {
		m := acc.m
		m.Agg = acc.total
		m.Stats = ComputeStats(m.Type, &m.Agg, s.Duration.Seconds())
		m.Windows = s.windowStats(m.Type, acc.windows)
		fleet := m.Type == Gauge && fleetGauges[name]
		if fleet {
			m.Stats.Avg = setFleetMeans(envs, name, nil, s.WindowNanos, m.Windows)
		}
		keys := make([]string, 0, len(acc.series))
		for k := range acc.series {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			sa := acc.series[k]
			ss := SeriesSummary{
				Tags:    sa.tags,
				Agg:     sa.total,
				Stats:   ComputeStats(m.Type, &sa.total, s.Duration.Seconds()),
				Windows: s.windowStats(m.Type, sa.windows),
			}
			switch {
			case fleet && len(keys) == 1: // the metric's own
				ss.Stats.Avg = m.Stats.Avg
				for i := range ss.Windows {
					ss.Windows[i].Stats.Avg = m.Windows[i].Stats.Avg
				}
			case fleet:
				ss.Stats.Avg = setFleetMeans(envs, name, &k, s.WindowNanos, ss.Windows)
			}
			m.Series = append(m.Series, ss)
		}
		s.Metrics[name] = m
	}
	s.Checks = checks(s.Metrics["checks"])
	s.Slowest, s.SlowestOfRun = mergeSlowest(envs, s.WindowNanos, SlowestOfRun)
	s.Thresholds = s.EvaluateThresholds(thresholds)
	for i := range s.Runners {
		r := &s.Runners[i]
		if sec := envs[i].End().Sub(envs[i].Start()).Seconds(); sec > 0 && r.CPU.Cores > 0 {
			r.CPUUtilization = (r.CPU.UserSeconds + r.CPU.SystemSeconds) / (sec * r.CPU.Cores)
		}
	}
	return s, nil
}

// appendOverflows adds the overflows of one runner, one per metric.
func appendOverflows(all, more []Overflow) []Overflow {
	for _, o := range more {
		seen := false
		for _, a := range all {
			seen = seen || a.Metric == o.Metric
		}
		if !seen {
			all = append(all, o)
		}
	}
	return all
}

// commonTags is the intersection of the runners' tag keys; an envelope that does not list its
// tags (an older runner) kept KeptTags.
func commonTags(common, tags []string, first bool) []string {
	if len(tags) == 0 {
		tags = KeptTags
	}
	if first {
		return append([]string(nil), tags...)
	}
	var out []string
	for _, t := range common {
		if contains(tags, t) {
			out = append(out, t)
		}
	}
	return out
}

// windowStats turns window aggregates into stats; a counter's rate uses the
// part of the window that lies inside the run.
func (s *Summary) windowStats(typ MetricType, ws map[int64]*Agg) []WindowStats {
	keys := make([]int64, 0, len(ws))
	for k := range ws {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	out := make([]WindowStats, 0, len(keys))
	for _, k := range keys {
		from := max(k*s.WindowNanos, s.Start.UnixNano())
		to := min((k+1)*s.WindowNanos, s.End.UnixNano())
		sec := float64(max(to-from, 0)) / float64(time.Second)
		out = append(out, WindowStats{Start: time.Unix(0, k*s.WindowNanos), Stats: ComputeStats(typ, ws[k], sec)})
	}
	return out
}

func checks(m *MetricSummary) []Check {
	if m == nil {
		return nil
	}
	byKey := map[[2]string]*Check{}
	var order [][2]string
	for _, sr := range m.Series {
		k := [2]string{sr.Tags["group"], sr.Tags["check"]}
		c := byKey[k]
		if c == nil {
			c = &Check{Group: k[0], Name: k[1]}
			byKey[k] = c
			order = append(order, k)
		}
		c.Passes += sr.Agg.NonZero
		c.Fails += sr.Agg.Count - sr.Agg.NonZero
	}
	out := make([]Check, 0, len(order))
	for _, k := range order {
		out = append(out, *byKey[k])
	}
	return out
}

func runnerInfo(e *Envelope) RunnerInfo {
	return RunnerInfo{Name: e.Runner, Final: e.Final, Aborted: e.Aborted, Error: e.Error, CPU: e.CPU, WindowNanos: e.WindowNanos}
}

func aggAt(m map[int64]*Agg, k int64) *Agg {
	a := m[k]
	if a == nil {
		a = &Agg{}
		m[k] = a
	}
	return a
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
