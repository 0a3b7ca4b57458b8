package shift

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/judge/compare"
)

// Order is how kept runs are put in sequence: OrderCompletion, or "label:KEY" (a release label).
const (
	OrderCompletion  = "completion"
	OrderLabelPrefix = "label:"
)

// Sort orders records for Analyze: by completion time, or by the value of a label compared as
// versions (v1.9.2 < v1.10.0; then by completion). Records without the label are left out
// (skipped), as they have no place in a release train. Ties keep completion order.
func Sort(records []compare.Record, order string) (sorted, skipped []compare.Record, err error) {
	byTime := func(a, b compare.Record) int {
		if c := a.Run.CompletionTime.Compare(b.Run.CompletionTime); c != 0 {
			return c
		}
		return strings.Compare(a.Run.Name, b.Run.Name)
	}
	sorted = slices.Clone(records)
	switch {
	case order == "" || order == OrderCompletion:
		slices.SortStableFunc(sorted, byTime)
		return sorted, nil, nil
	case strings.HasPrefix(order, OrderLabelPrefix) && len(order) > len(OrderLabelPrefix):
		key := strings.TrimPrefix(order, OrderLabelPrefix)
		sorted = sorted[:0]
		for _, r := range records {
			if _, ok := r.Run.Labels[key]; ok {
				sorted = append(sorted, r)
			} else {
				skipped = append(skipped, r)
			}
		}
		slices.SortStableFunc(sorted, func(a, b compare.Record) int {
			if c := CompareVersions(a.Run.Labels[key], b.Run.Labels[key]); c != 0 {
				return c
			}
			return byTime(a, b)
		})
		return sorted, skipped, nil
	}
	return nil, nil, fmt.Errorf("order %q: want %s or %sKEY", order, OrderCompletion, OrderLabelPrefix)
}

// CompareVersions compares release labels as versions where they are: an optional "v", then
// numbers separated by dots, dashes, underscores or pluses, compared number by number (a text
// part as text, a number before a text). "1.10" > "1.9"; "2026-01-03" > "2026-01-02".
func CompareVersions(a, b string) int {
	pa, pb := versionParts(a), versionParts(b)
	for i := 0; i < len(pa) && i < len(pb); i++ {
		na, errA := strconv.ParseUint(pa[i], 10, 64)
		nb, errB := strconv.ParseUint(pb[i], 10, 64)
		var c int
		switch {
		case errA == nil && errB == nil:
			c = cmp.Compare(na, nb)
		case errA == nil:
			c = -1
		case errB == nil:
			c = 1
		default:
			c = strings.Compare(pa[i], pb[i])
		}
		if c != 0 {
			return c
		}
	}
	if c := cmp.Compare(len(pa), len(pb)); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

func versionParts(s string) []string {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "v"), "V")
	return strings.FieldsFunc(s, func(r rune) bool { return r == '.' || r == '-' || r == '_' || r == '+' })
}

// Trend is the analysis of a test's runs in order.
type Trend struct {
	Runs    []compare.RunRef `json:"runs"`
	Metrics []Metric         `json:"metrics"`
}

// Metric is one metric over the runs that have it, with its change points.
type Metric struct {
	Name      string             `json:"name"`
	Stat      string             `json:"stat,omitempty"`
	Unit      string             `json:"unit,omitempty"`
	Direction v1alpha1.Direction `json:"direction,omitempty"`
	// Values has one entry per run with the metric, in run order.
	Values []Value `json:"values"`
	// ChangePoints index Runs (not Values); Recent reads them.
	ChangePoints []ChangePoint `json:"changePoints"`
}

// Value is a run's whole-run value of a metric; Run indexes Trend.Runs.
type Value struct {
	Run   int     `json:"run"`
	Value float64 `json:"value"`
}

// BuiltinMetrics are the metrics analysed when none are named: throughput, latency and the
// target's resources.
func BuiltinMetrics() []string {
	return []string{compare.SeriesThroughput, compare.SeriesLatencyP95, compare.SeriesLatencyP99,
		compare.SeriesTargetMemory, compare.SeriesTargetCPU}
}

// noiseFloor is the least shift of a metric worth reporting, however significant: a target
// idling at 2 % of a core read 3 % from one run on, on a node shared with a second cluster
// (make e2e), a 50 % shift of nothing. Below 0.05 cores the target's CPU is its neighbours'.
var noiseFloor = map[string]float64{compare.SeriesTargetCPU: 0.05}

// Analyze finds the change points of each named metric (BuiltinMetrics when none) in records,
// which are in run order (Sort). A metric is matched by series name; a k6 metric kept with
// several stats is one Metric per stat. A run without the metric is left out of its series, so
// a change point is at the first run of the new level that has it.
func Analyze(records []compare.Record, metrics []string, o Options) Trend {
	if len(records) > MaxRuns {
		records = records[len(records)-MaxRuns:]
	}
	if len(metrics) == 0 {
		metrics = BuiltinMetrics()
	}
	dirs := map[string]v1alpha1.Direction{}
	for _, m := range compare.Builtins() {
		dirs[m.Name] = m.Direction
	}
	t := Trend{Runs: make([]compare.RunRef, len(records)), Metrics: []Metric{}}
	for i, r := range records {
		t.Runs[i] = r.Run
	}
	for _, name := range metrics {
		var stats []Metric // in the order first seen
		for i, r := range records {
			for _, s := range r.Series {
				if s.Name != name || math.IsNaN(s.Whole) || math.IsInf(s.Whole, 0) {
					continue
				}
				k := slices.IndexFunc(stats, func(m Metric) bool { return m.Stat == s.Stat })
				if k < 0 {
					stats = append(stats, Metric{Name: name, Stat: s.Stat, Unit: s.Unit, Direction: dirs[name]})
					k = len(stats) - 1
				}
				if v := stats[k].Values; len(v) == 0 || v[len(v)-1].Run != i { // one value per run
					stats[k].Values = append(stats[k].Values, Value{Run: i, Value: s.Whole})
				}
			}
		}
		for _, m := range stats {
			z := make([]float64, len(m.Values))
			for j, v := range m.Values {
				z[j] = v.Value
			}
			m.ChangePoints = []ChangePoint{}
			for _, cp := range Detect(z, m.Direction, o) {
				if math.Abs(cp.After-cp.Before) < noiseFloor[name] {
					continue
				}
				cp.Index = m.Values[cp.Index].Run
				m.ChangePoints = append(m.ChangePoints, cp)
			}
			t.Metrics = append(t.Metrics, m)
		}
	}
	return t
}

// Shift is a change point of one metric, named by its run.
type Shift struct {
	Metric string `json:"metric"`
	Stat   string `json:"stat,omitempty"`
	Run    string `json:"run"`
	ChangePoint
}

// Recent is the change points whose new level starts within the last lastN runs, oldest
// first by run: what a gate asks of the trend.
func (t Trend) Recent(lastN int) []Shift {
	var out []Shift
	for _, m := range t.Metrics {
		for _, cp := range Recent(m.ChangePoints, len(t.Runs), lastN) {
			out = append(out, Shift{Metric: m.Name, Stat: m.Stat, Run: t.Runs[cp.Index].Name, ChangePoint: cp})
		}
	}
	slices.SortStableFunc(out, func(a, b Shift) int { return cmp.Compare(a.Index, b.Index) })
	return out
}

// RecentShifts is the controller's question in one call: the built-in metrics' change points
// within the last lastN of records (in run order, as Sort leaves them).
func RecentShifts(records []compare.Record, lastN int, o Options) []Shift {
	return Analyze(records, nil, o).Recent(lastN)
}
