package plan

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/judge/compare"
)

// A CapacityPlan against its baseline plan: seed 000's "Comparison of some data with later
// versions" (per profile RSS MiB, KiB per device, pushes/s, each in % of previous), cell by
// cell. Cells are matched by profile (without case, as profiles are named) and sweep values;
// each repetition that Succeeded is one sample of a side, tested with compare.Test's rank test
// (Kind Repetitions), so fewer than 4 repetitions a side give TooFewSamples, never a decision.
// Repetitions are separate runs, so the test holds the noise between runs by construction.
// The plan's rows, 4 a cell over up to 256 cells, are one family (compare.Decide): a plan is
// Regressed only when some row survives Holm's correction over all of them.

// PlanMethod is written to status.comparison.method.
const PlanMethod = "per cell (profile and sweep values): the mean over the repetitions that Succeeded, each repetition one sample, " +
	"so the noise between runs is in the test; one-sided Mann-Whitney U over the repetitions (exact); seeded bootstrap 95 % interval " +
	"of the ratio of means; regressed only beyond the ok band and significant after Holm's correction over every tested row " +
	"of every cell at alpha 0.05"

// cellMetric reads one compared value of a table row; ok false when the row has none.
type cellMetric struct {
	metric compare.Metric
	read   func(*v1alpha1.CapacityRow) (float64, bool)
}

var (
	memoryPeak = cellMetric{compare.NewMetric("memoryPeak", "MiB", v1alpha1.LowerIsBetter), func(r *v1alpha1.CapacityRow) (float64, bool) {
		return float64(r.MemoryPeakMiB), r.MemoryPeakMiB > 0
	}}
	// Seed 000 gives memory per device in KiB; the row keeps MiB.
	memoryPerDevice = cellMetric{compare.NewMetric("memoryPerDevice", "KiB", v1alpha1.LowerIsBetter), func(r *v1alpha1.CapacityRow) (float64, bool) {
		v, ok := parse(r.MemoryPerDeviceMiB)
		return v * 1024, ok
	}}
	pushes = cellMetric{compare.NewMetric("pushesPerSecond", "pushes/s", v1alpha1.HigherIsBetter), func(r *v1alpha1.CapacityRow) (float64, bool) {
		return parse(r.PushesPerSecond)
	}}
	requests = cellMetric{compare.NewMetric("throughput", "req/s", v1alpha1.HigherIsBetter), func(r *v1alpha1.CapacityRow) (float64, bool) {
		return parse(r.RequestsPerSecond)
	}}
	safeMax = cellMetric{compare.NewMetric("safeMaxDevices", "devices", v1alpha1.HigherIsBetter), func(r *v1alpha1.CapacityRow) (float64, bool) {
		return float64(r.SafeMaxDevices), r.SafeMaxDevices > 0
	}}
)

// cellKey matches cells across plans: the profile without case, and the sweep values by name.
func cellKey(profile string, values map[string]string) string {
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(strings.ToLower(profile))
	for _, k := range keys {
		fmt.Fprintf(&b, "\x00%s=%s", k, values[k])
	}
	return b.String()
}

// CellLabel names a cell for a reader: "C1 WORKERS=2".
func CellLabel(profile string, values map[string]string) string {
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := []string{profile}
	for _, k := range keys {
		parts = append(parts, k+"="+values[k])
	}
	return strings.Join(parts, " ")
}

// group is one cell of a plan with its measured repetitions, in table order.
type group struct {
	profile string
	values  map[string]string
	rows    []*v1alpha1.CapacityRow
}

// groups gathers a table's rows by cell, keeping the first row's order; only rows whose
// child Succeeded are samples (a Failed child measured nothing).
func groups(table []v1alpha1.CapacityRow) ([]*group, map[string]*group) {
	var order []*group
	byKey := map[string]*group{}
	for i := range table {
		r := &table[i]
		k := cellKey(r.Profile, r.Values)
		g := byKey[k]
		if g == nil {
			g = &group{profile: r.Profile, values: r.Values}
			byKey[k] = g
			order = append(order, g)
		}
		if r.Phase == v1alpha1.PhaseSucceeded {
			g.rows = append(g.rows, r)
		}
	}
	return order, byKey
}

// side is the samples of a metric over a cell's repetitions, and their mean.
func side(m cellMetric, g *group) compare.Side {
	if g == nil {
		return compare.Side{}
	}
	var s compare.Side
	var sum float64
	for _, r := range g.rows {
		if v, ok := m.read(r); ok {
			s.Values = append(s.Values, v)
			sum += v
		}
	}
	if len(s.Values) > 0 {
		s.Present, s.Whole = true, sum/float64(len(s.Values))
	}
	return s
}

// cellMetrics are the metrics of a cell: pushes/s when either side has pushes, else req/s.
func cellMetrics(base, cur *group) []cellMetric {
	throughput := requests
	if side(pushes, base).Present || side(pushes, cur).Present {
		throughput = pushes
	}
	return []cellMetric{memoryPeak, memoryPerDevice, throughput, safeMax}
}

// ComparePlans compares current's table with baseline's, cell by cell. It is pure and
// deterministic. A cell of current that baseline has not is compared with nothing (NoData);
// a cell only baseline has is counted in the message.
func ComparePlans(baseline, current *v1alpha1.CapacityPlan) v1alpha1.PlanComparison {
	out := v1alpha1.PlanComparison{Method: PlanMethod,
		Baseline: &v1alpha1.ComparedPlan{Name: baseline.Name, UID: string(baseline.UID), Repetitions: baseline.Spec.Repetitions}}
	curCells, _ := groups(current.Status.Table)
	_, baseCells := groups(baseline.Status.Table)
	matched := map[string]bool{}
	// Every cell's rows are judged alone first, then decided as one family.
	var judged []compare.Judged
	var cellRows []int // how many rows each cell has, in order
	for _, g := range curCells {
		if len(out.Cells) == 256 {
			break
		}
		k := cellKey(g.profile, g.values)
		b := baseCells[k]
		metrics := cellMetrics(b, g)
		for _, m := range metrics {
			judged = append(judged, compare.Judge(m.metric, side(m, b), side(m, g), compare.Repetitions))
		}
		cellRows = append(cellRows, len(metrics))
		matched[k] = b != nil
		out.Cells = append(out.Cells, v1alpha1.CellComparison{Profile: g.profile, Values: g.values})
	}
	rows := compare.Decide(judged)
	var all []v1alpha1.MetricComparison // every row, named by its cell, for the worst
	for i := range out.Cells {
		c := &out.Cells[i]
		label := CellLabel(c.Profile, c.Values)
		c.Metrics, rows = rows[:cellRows[i]], rows[cellRows[i]:]
		for r := range c.Metrics {
			if !matched[cellKey(c.Profile, c.Values)] {
				c.Metrics[r].Note = "the baseline plan has no cell " + label
			}
			named := c.Metrics[r]
			named.Name = label + " " + named.Name
			all = append(all, named)
		}
		c.Decision, _ = compare.Overall(c.Metrics)
	}
	out.Decision, out.Worst = compare.Overall(all)
	out.Message = planMessage(baseline.Name, out, len(baseCells)-count(matched), compare.FamilyNote(judged))
	return out
}

func count(m map[string]bool) int {
	n := 0
	for _, v := range m {
		if v {
			n++
		}
	}
	return n
}

func planMessage(base string, c v1alpha1.PlanComparison, onlyInBaseline int, family string) string {
	n := map[v1alpha1.ComparisonDecision]int{}
	for _, cell := range c.Cells {
		n[cell.Decision]++
	}
	s := fmt.Sprintf("%d cells compared with CapacityPlan %s: %d regressed, %d ok, %d success, %d too few samples, %d no data",
		len(c.Cells), base, n[v1alpha1.ComparisonRegressed], n[v1alpha1.ComparisonOK], n[v1alpha1.ComparisonSuccess],
		n[v1alpha1.ComparisonTooFewSamples], n[v1alpha1.ComparisonNoData])
	if n[v1alpha1.ComparisonTooFewSamples] > 0 {
		s += "; a rank test over repetitions decides only with 4 or more a side: set spec.repetitions: 4 or more on both plans"
	}
	if onlyInBaseline > 0 {
		s += fmt.Sprintf("; %d cells of the baseline are not in this plan", onlyInBaseline)
	}
	if family != "" {
		s += "; " + family
	}
	return truncateMessage(s)
}

func parse(s string) (float64, bool) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return v, err == nil && s != ""
}

// truncateMessage cuts s to the CRD's 1024 bytes for a message, at a rune boundary.
func truncateMessage(s string) string { return cutTo(s, maxMessage) }

// cutTo bounds s to n bytes at a rune boundary.
func cutTo(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && (s[n]&0xC0) == 0x80 {
		n--
	}
	return s[:n]
}

// Repetition is the plan with only the rows of repetition n, named "<plan> (rep n)": two of
// them compared are seed 001's "1st / 2nd" columns, the first and second run of each cell.
func Repetition(p *v1alpha1.CapacityPlan, n int32) *v1alpha1.CapacityPlan {
	out := &v1alpha1.CapacityPlan{}
	out.Name, out.Namespace = fmt.Sprintf("%s (rep %d)", p.Name, n), p.Namespace
	for _, r := range p.Status.Table {
		if max(r.Repetition, 1) == n {
			out.Status.Table = append(out.Status.Table, r)
		}
	}
	return out
}
