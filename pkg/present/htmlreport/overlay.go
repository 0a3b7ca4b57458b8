package htmlreport

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"fleetbench.dev/fleetbench/pkg/judge"
	"fleetbench.dev/fleetbench/pkg/judge/compare"
)

// The baseline's series drawn over this run's charts come from its kept record, which anyone
// who may write a ConfigMap in the namespace could have written: only its numbers are used
// (never its names or units), non-finite values are gaps, and what is drawn is bounded.
const (
	// maxOverlayPoints bounds the points of one baseline series: beyond it adjacent values are
	// averaged (DecodeRecord already bounds a series to compare.MaxRecordWindows).
	maxOverlayPoints = compare.MaxRecordWindows
	// maxOverlayWindowSeconds bounds the baseline's window length: a 48-hour run merged into
	// MaxRecordWindows blocks has 720 s windows; a day is beyond any real record.
	maxOverlayWindowSeconds = 24 * 60 * 60
)

// overlayTarget says which chart and series slot a record series is drawn against.
type overlayTarget struct {
	chart, record, label string
	// like is the label of this run's series whose colour and axis the baseline's takes; on
	// the target chart, whose labels name the memory kind, right says which axis it is.
	like  string
	right bool
}

var overlayTargets = []overlayTarget{
	{chart: "throughput", record: compare.SeriesThroughput, like: "req/s"},
	{chart: "latency", record: compare.SeriesLatencyP95, label: "p95", like: "p95"},
	{chart: "latency", record: compare.SeriesLatencyP99, label: "p99", like: "p99"},
	{chart: "target", record: compare.SeriesTargetMemory, label: "memory"},
	{chart: "target", record: compare.SeriesTargetCPU, label: "CPU", right: true},
}

// baselineOffsets are the seconds from the start of the baseline's load of its n values: one
// per window of width ws for a window series.
func baselineOffsets(n int, ws float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = float64(i) * ws
	}
	return out
}

// spreadOffsets spreads n target samples evenly over span seconds: the kept record holds no
// sample times, only their order.
func spreadOffsets(n int, span float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		if n > 1 {
			out[i] = span * float64(i) / float64(n-1)
		}
	}
	return out
}

// boundedValues are v with non-finite values as gaps, averaged in blocks down to at most
// maxOverlayPoints; k is the block length.
func boundedValues(v []float64) (out []Value, k int) {
	k = max(1, (len(v)+maxOverlayPoints-1)/maxOverlayPoints)
	for i := 0; i < len(v); i += k {
		sum, n := 0.0, 0
		for _, x := range v[i:min(i+k, len(v))] {
			if !math.IsNaN(x) && !math.IsInf(x, 0) {
				sum, n = sum+x, n+1
			}
		}
		if n == 0 {
			out = append(out, Gap)
		} else {
			out = append(out, Value(sum/float64(n)))
		}
	}
	return out, k
}

// withSeries adds a series whose values sit at xs to c: c's x becomes the sorted union of both,
// and every series has a gap where it has no value (the page joins across gaps).
func withSeries(c Chart, xs []float64, s Series) Chart {
	union := slices.Clone(c.X)
	union = append(union, xs...)
	slices.Sort(union)
	union = slices.Compact(union)
	at := func(x []float64, v []Value) []Value {
		out := make([]Value, len(union))
		for i := range out {
			out[i] = Gap
		}
		for i, xi := range x {
			if i < len(v) {
				j, _ := slices.BinarySearch(union, xi)
				out[j] = v[i]
			}
		}
		return out
	}
	series := make([]Series, 0, len(c.Series)+1)
	for _, old := range c.Series {
		old.Values = at(c.X, old.Values)
		series = append(series, old)
	}
	s.Values = at(xs, s.Values)
	series = append(series, s)
	c.X, c.Series = union, series
	return c
}

// recordSeries is the record's first series of that name (a record may repeat a name).
func recordSeries(rec *compare.Record, name string) *compare.Series {
	for i := range rec.Series {
		if rec.Series[i].Name == name {
			return &rec.Series[i]
		}
	}
	return nil
}

// overlayBaseline draws the baseline's series over this run's charts, both runs aligned at the
// start of their load: window i of the baseline at i × its own window length from this run's
// first window, its target samples spread evenly over its load. It returns the charts and,
// when nothing could be drawn, why.
func overlayBaseline(charts []Chart, tl *judge.Timeline, rec *compare.Record, name string) ([]Chart, string) {
	if tl == nil || len(tl.Windows) == 0 {
		return charts, "this run kept no timeline to draw them on"
	}
	ws := rec.WindowSeconds
	if !(ws > 0) || ws > maxOverlayWindowSeconds {
		return charts, fmt.Sprintf("its kept record has a window length of %g s", ws)
	}
	t0 := unixSeconds(tl.Windows[0].Start)
	loadStart := t0
	if !tl.LoadStart.IsZero() {
		loadStart = unixSeconds(tl.LoadStart)
	}
	// The baseline's load lasted as many windows as its longest window series.
	loadWindows := 0
	for _, n := range []string{compare.SeriesThroughput, compare.SeriesLatencyP95, compare.SeriesLatencyP99} {
		if s := recordSeries(rec, n); s != nil {
			loadWindows = max(loadWindows, len(s.Windows))
		}
	}
	loadSpan := float64(loadWindows) * ws
	if loadSpan == 0 && tl.LoadEnd.After(tl.LoadStart) {
		loadSpan = tl.LoadEnd.Sub(tl.LoadStart).Seconds() // no window series: this run's load
	}
	legend := "baseline " + name
	drawn := 0
	for _, t := range overlayTargets {
		i := slices.IndexFunc(charts, func(c Chart) bool { return c.Name == t.chart })
		s := recordSeries(rec, t.record)
		if i < 0 || s == nil || len(s.Windows) == 0 {
			continue
		}
		values, k := boundedValues(s.Windows)
		var xs []float64
		target := t.chart == "target"
		if target {
			if t.record == compare.SeriesTargetCPU && k == 1 {
				values[0] = Gap // a rate since the previous sample: the first has none
			}
			xs = spreadOffsets(len(values), loadSpan)
		} else {
			xs = baselineOffsets(len(values), ws*float64(k))
		}
		origin := t0
		if target {
			origin = loadStart
		}
		for j := range xs {
			xs[j] += origin
		}
		bs := Series{Label: legend, Dash: true, Faint: true}
		if t.label != "" {
			bs.Label += " " + t.label
		}
		for _, cur := range charts[i].Series {
			if (t.like != "" && cur.Label == t.like) || (t.like == "" && cur.Right == t.right) {
				bs.Color, bs.Right = cur.Color, cur.Right
				break
			}
		}
		bs.Values = values
		if bs.Points() == 0 {
			continue
		}
		charts[i] = withSeries(charts[i], xs, bs)
		charts[i].Note = joinNote(charts[i].Note, overlayNote(name, ws, target, loadSpan))
		drawn++
	}
	if drawn == 0 {
		return charts, "its kept record holds none of the charted series"
	}
	return charts, ""
}

func overlayNote(name string, ws float64, target bool, loadSpan float64) string {
	d := time.Duration(ws * float64(time.Second)).String()
	if target {
		return fmt.Sprintf("Dashed: baseline %s. Its kept record holds its target samples without their times: "+
			"they are spread evenly over its %s load, from this run's load start.", name,
			time.Duration(loadSpan*float64(time.Second)))
	}
	return fmt.Sprintf("Dashed: baseline %s, aligned with this run at the start of each run's load "+
		"(its kept record holds no clock times); its windows are its own %s ones.", name, d)
}

// joinNote adds b to a chart's note once (latency's p95 and p99 share theirs).
func joinNote(a, b string) string {
	switch {
	case a == "":
		return b
	case strings.Contains(a, b):
		return a
	}
	return a + " " + b
}
