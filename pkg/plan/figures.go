package plan

import (
	"math"
	"sort"
	"strconv"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/judge/sizing"
)

// cell is one profile's sweep setting and the rows of its repetitions that passed.
type cell struct {
	values map[string]string
	key    string
	rows   []v1alpha1.CapacityRow
}

// passed: a row whose child measured the target to the end and met its thresholds; only
// these size a deployment, as seed 000's table takes them.
func passed(r v1alpha1.CapacityRow) bool {
	return r.Phase == v1alpha1.PhaseSucceeded && r.Verdict == v1alpha1.VerdictPassed
}

// cellsOf groups a profile's passing rows by sweep setting, in the table's order.
func cellsOf(profile string, rows []v1alpha1.CapacityRow) []*cell {
	var out []*cell
	byKey := map[string]*cell{}
	for _, r := range rows {
		if r.Profile != profile || !passed(r) {
			continue
		}
		k := valuesKey(r.Values)
		c := byKey[k]
		if c == nil {
			c = &cell{values: r.Values, key: k}
			byKey[k] = c
			out = append(out, c)
		}
		c.rows = append(c.rows, r)
	}
	return out
}

func valuesKey(v map[string]string) string {
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	s := ""
	for _, k := range keys {
		s += k + "=" + v[k] + "\x00"
	}
	return s
}

// figures are a cell's spreads over its repetitions.
type figures struct {
	pushes, ideal, typical, breaking, memPerDevice sizing.Spread
}

func figuresOf(c *cell) figures {
	col := func(get func(v1alpha1.CapacityRow) float64) sizing.Spread {
		xs := make([]float64, 0, len(c.rows))
		for _, r := range c.rows {
			xs = append(xs, get(r))
		}
		return sizing.SpreadOf(xs)
	}
	return figures{
		pushes:       col(throughputOf),
		ideal:        col(func(r v1alpha1.CapacityRow) float64 { return measuredCount(r.IdealMaxDevices) }),
		typical:      col(func(r v1alpha1.CapacityRow) float64 { return measuredCount(r.TypicalMaxDevices) }),
		breaking:     col(func(r v1alpha1.CapacityRow) float64 { return measuredCount(r.BreakingPointDevices) }),
		memPerDevice: col(func(r v1alpha1.CapacityRow) float64 { return decimal(r.MemoryPerDeviceMiB) }),
	}
}

// throughputOf is what the row served: pushes/s when the run had a device model, else req/s.
func throughputOf(r v1alpha1.CapacityRow) float64 {
	if v := decimal(r.PushesPerSecond); !math.IsNaN(v) {
		return v
	}
	return decimal(r.RequestsPerSecond)
}

// measuredCount is a device count where 0 means "not measured".
func measuredCount(v int64) float64 {
	if v == 0 {
		return math.NaN()
	}
	return float64(v)
}

// decimal parses a status decimal; empty or malformed is "not measured".
func decimal(s string) float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return math.NaN()
	}
	return v
}

// capacityOf orders cells for floor and best: by ideal devices, else by throughput, else by
// breaking point, whichever the rows have.
func (f figures) capacityOf() float64 {
	for _, s := range []sizing.Spread{f.ideal, f.pushes, f.breaking} {
		if s.N > 0 {
			return s.Median
		}
	}
	return math.NaN()
}

// cellFigures renders a cell for status; safePercent turns the low end of its ideal range
// into its safe count (the lowest run up to 8 repetitions, the median's lower 95 % bound from
// 9: sizing.Spread.LowRank).
func cellFigures(c *cell, f figures, safePercent int32) *v1alpha1.CellFigures {
	out := &v1alpha1.CellFigures{Values: c.values, Passed: int32(len(c.rows)),
		PushesPerSecond:      figureRange(f.pushes, 2),
		IdealMaxDevices:      figureRange(f.ideal, 0),
		TypicalMaxDevices:    figureRange(f.typical, 0),
		BreakingPointDevices: figureRange(f.breaking, 0),
		MemoryPerDeviceMiB:   figureRange(f.memPerDevice, 4),
		Limit:                mostCommonLimit(c.rows),
		Noise:                noise(f),
	}
	if f.ideal.N > 0 {
		out.SafeMaxDevices = sizing.Safe(f.ideal.Low, float64(safePercent)/100)
	}
	return out
}

// figureRange renders a spread; nil when nothing was measured, so it shows as "—".
func figureRange(s sizing.Spread, decimals int) *v1alpha1.FigureRange {
	if s.N == 0 {
		return nil
	}
	r := &v1alpha1.FigureRange{Median: format(s.Median, decimals), Interval: s.Interval, N: int32(s.N)}
	if s.N > 1 {
		r.Low, r.High = format(s.Low, decimals), format(s.High, decimals)
		r.CVPercent = format(100*s.CV, 1)
	}
	if s.Coverage > 0 {
		r.Coverage = format(100*s.Coverage, 1)
	}
	return r
}

func format(v float64, decimals int) string { return strconv.FormatFloat(v, 'f', decimals, 64) }

// mostCommonLimit is the limit most of the rows name; ties go to the first in the table.
func mostCommonLimit(rows []v1alpha1.CapacityRow) string {
	n := map[string]int{}
	best := ""
	for _, r := range rows {
		if r.Limit == "" {
			continue
		}
		n[r.Limit]++
		if best == "" || n[r.Limit] > n[best] {
			best = r.Limit
		}
	}
	return best
}
