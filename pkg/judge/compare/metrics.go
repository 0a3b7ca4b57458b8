package compare

import (
	"fmt"

	"fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/measure"
)

// MaxRows is status.comparison.metrics' MaxItems.
const MaxRows = 32

// Metric is one compared metric with its direction and bands (in % of the baseline).
type Metric struct {
	Name      string
	Stat      string
	Unit      string
	Direction v1alpha1.Direction
	// SuccessPercent and OKPercent are the band edges: for LowerIsBetter success up to
	// SuccessPercent, ok up to OKPercent; for HigherIsBetter success from SuccessPercent, ok
	// from OKPercent.
	SuccessPercent, OKPercent float64
	// Builtin metrics are matched by name alone; k6 metrics by name and stat.
	Builtin bool
	// Note says what was corrected in the spec's bands, if anything.
	Note string
}

// Seed 000's rule: "Comparable results (100%) are considered success and results within
// 101-120% of resources usage and 99-80% throughput are considered ok."
const (
	successPercent     = 100
	okPercentLower     = 120
	okPercentHigher    = 80
	defaultTrendStat   = "p95"
	maxBandPercent     = 1000
	minBandPercent     = 1
	directionIgnoredFm = "direction %q is not one of LowerIsBetter, HigherIsBetter: used %s"
)

// Builtins are compared whenever either record has them, in this order.
func Builtins() []Metric {
	return []Metric{
		builtin("throughput", "req/s", v1alpha1.HigherIsBetter),
		builtin("latencyP95", "ms", v1alpha1.LowerIsBetter),
		builtin("latencyP99", "ms", v1alpha1.LowerIsBetter),
		builtin("targetMemory", "MiB", v1alpha1.LowerIsBetter),
		builtin("targetCPU", "cores", v1alpha1.LowerIsBetter),
	}
}

func builtin(name, unit string, dir v1alpha1.Direction) Metric {
	m := NewMetric(name, unit, dir)
	m.Builtin = true
	return m
}

// NewMetric is a metric with seed 000's bands for its direction, for callers that build rows
// themselves (a CapacityPlan's per-profile RSS, KiB per device, pushes/s over repetitions).
func NewMetric(name, unit string, dir v1alpha1.Direction) Metric {
	m := Metric{Name: name, Unit: unit, Direction: dir}
	m.SuccessPercent, m.OKPercent = defaultBands(dir)
	return m
}

// Band is m's bands in words, as status.comparison spells them ("success ≤ 100 %, ok ≤ 120 %").
func (m Metric) Band() string {
	op := "≤"
	if m.Direction == v1alpha1.HigherIsBetter {
		op = "≥"
	}
	return fmt.Sprintf("success %s %.0f %%, ok %s %.0f %%", op, m.SuccessPercent, op, m.OKPercent)
}

// Beyond says whether ratio (current in % of the baseline) is worse than m's success edge, and
// than its ok edge. Whether that is a regression is for the test to say (Row).
func (m Metric) Beyond(ratio float64) (success, ok bool) {
	if m.Direction == v1alpha1.HigherIsBetter {
		return ratio < m.SuccessPercent, ratio < m.OKPercent
	}
	return ratio > m.SuccessPercent, ratio > m.OKPercent
}

// defaultBands are seed 000's edges for a direction; success is 100 % either way.
func defaultBands(dir v1alpha1.Direction) (success, ok float64) {
	ok = okPercentLower
	if dir == v1alpha1.HigherIsBetter {
		ok = okPercentHigher
	}
	return successPercent, ok
}

// resolve lists the metrics to compare: the built-ins either record has, then the spec's
// metrics in the spec's order (a spec entry naming a built-in replaces its direction and
// bands in place, and is compared even when neither record has it, so the user sees NoData
// rather than nothing). A name given twice counts once.
func resolve(spec v1alpha1.BaselineSpec, baseline, current Record) []Metric {
	var out []Metric
	index := map[string]int{}
	for _, m := range Builtins() {
		if hasName(baseline, m.Name) || hasName(current, m.Name) {
			index[m.Name] = len(out)
			out = append(out, m)
		}
	}
	seen := map[string]bool{}
	for _, cm := range spec.Metrics {
		// A k6 metric's tag filter in one form, the form records keep (SubMetricsOf).
		if c, _, err := measure.CanonicalSelector(cm.Name); err == nil && !isBuiltinName(cm.Name) {
			cm.Name = c
		}
		if seen[cm.Name] || cm.Name == "" {
			continue
		}
		seen[cm.Name] = true
		m, isBuiltin := Metric{}, false
		for _, b := range Builtins() {
			if b.Name == cm.Name {
				m, isBuiltin = b, true
			}
		}
		if !isBuiltin {
			// Seed 000's bands for its direction unless the spec sets them (applyOverride).
			m = NewMetric(cm.Name, "", v1alpha1.LowerIsBetter)
			m.Stat = cm.Stat
		}
		m = applyOverride(m, cm)
		if i, ok := index[m.Name]; ok {
			out[i] = m
			continue
		}
		index[m.Name] = len(out)
		out = append(out, m)
	}
	return out
}

// applyOverride sets the spec's direction and bands on m. An empty direction keeps the
// metric's own (the built-in's, LowerIsBetter for a k6 metric). Bands are clamped to the
// API's 1–1000 %, and an ok band narrower than the success band (which the API's rule
// refuses, but a record may come from elsewhere) is widened to the success edge.
func applyOverride(m Metric, cm v1alpha1.ComparedMetric) Metric {
	switch cm.Direction {
	case "":
	case v1alpha1.LowerIsBetter, v1alpha1.HigherIsBetter:
		if cm.Direction != m.Direction {
			m.Direction = cm.Direction
			m.SuccessPercent, m.OKPercent = defaultBands(m.Direction)
		}
	default:
		m.Note = fmt.Sprintf(directionIgnoredFm, cm.Direction, m.Direction)
	}
	clamp := func(p *int32, def float64) float64 {
		if p == nil {
			return def
		}
		return float64(max(minBandPercent, min(maxBandPercent, *p)))
	}
	m.SuccessPercent = clamp(cm.SuccessPercent, m.SuccessPercent)
	m.OKPercent = clamp(cm.OKPercent, m.OKPercent)
	narrower := m.OKPercent < m.SuccessPercent
	if m.Direction == v1alpha1.HigherIsBetter {
		narrower = m.OKPercent > m.SuccessPercent
	}
	if narrower {
		m.Note = join(m.Note, fmt.Sprintf("okPercent %.0f is inside the success band: used %.0f for both", m.OKPercent, m.SuccessPercent))
		m.OKPercent = m.SuccessPercent
	}
	return m
}

func isBuiltinName(name string) bool {
	for _, b := range Builtins() {
		if b.Name == name {
			return true
		}
	}
	return false
}

func hasName(r Record, name string) bool {
	for _, s := range r.Series {
		if s.Name == name {
			return true
		}
	}
	return false
}

// find returns the series of m in r: a built-in by name; a k6 metric by name and stat. An
// empty stat of a k6 metric means p95 when either record has it, else the one stat both
// records have (a Counter's rate, a Gauge's value). It returns the stat used.
func find(m Metric, baseline, current Record) (b, c *Series, stat string) {
	if m.Builtin {
		return lookup(baseline, m.Name, "", true), lookup(current, m.Name, "", true), ""
	}
	stat = m.Stat
	if stat == "" {
		stat = defaultTrendStat
		if lookup(baseline, m.Name, stat, false) == nil && lookup(current, m.Name, stat, false) == nil {
			if s, ok := onlyCommonStat(baseline, current, m.Name); ok {
				stat = s
			}
		}
	}
	return lookup(baseline, m.Name, stat, false), lookup(current, m.Name, stat, false), stat
}

// lookup returns the first series of r with that name (and stat, unless anyStat).
func lookup(r Record, name, stat string, anyStat bool) *Series {
	for i := range r.Series {
		if r.Series[i].Name == name && (anyStat || r.Series[i].Stat == stat) {
			return &r.Series[i]
		}
	}
	return nil
}

func onlyCommonStat(a, b Record, name string) (string, bool) {
	stats := func(r Record) map[string]bool {
		out := map[string]bool{}
		for _, s := range r.Series {
			if s.Name == name {
				out[s.Stat] = true
			}
		}
		return out
	}
	sa, sb := stats(a), stats(b)
	var common []string
	for s := range sa {
		if sb[s] {
			common = append(common, s)
		}
	}
	if len(common) == 1 {
		return common[0], true
	}
	return "", false
}

func join(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}
