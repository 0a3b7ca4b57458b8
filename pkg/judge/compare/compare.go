package compare

import (
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"fleetbench.dev/fleetbench/api/v1alpha1"
)

// Method is written to status.comparison.method (at most 512 bytes).
const Method = "one-sided Mann-Whitney U (exact below 50 a side without ties, else normal, tie-corrected) " +
	"on means of blocks of adjacent windows (block length their autocorrelation time, ≥ 8 blocks a side, " +
	"leftover correlation inflating the variance): within-run noise only; " +
	"regressed only when the whole-run ratio is beyond the ok edge and the test against the baseline scaled to it " +
	"survives Holm's correction over the tested rows at alpha 0.05; ok when beyond the success edge at p < 0.05; " +
	"seeded bootstrap 95 % interval"

// Side is one side of a compared metric: the whole-run value and the samples tested.
type Side struct {
	// Present is false when the record has no such metric.
	Present bool
	Whole   float64
	Values  []float64
	Unit    string
}

// Compare compares current with baseline under spec and returns status.comparison. It is
// pure and deterministic: the same records give the same result, byte for byte.
func Compare(spec v1alpha1.BaselineSpec, baseline, current Record) v1alpha1.Comparison {
	out, rows, dropped := judgeRecords(spec, baseline, current)
	return finish(out, rows, dropped, true)
}

// judgedSeries is a row judged alone with what its sub-metric note reads.
type judgedSeries struct {
	j      Judged
	bs, cs *Series
}

// judgeRecords judges each row of the comparison alone (Judge); finish decides them together.
func judgeRecords(spec v1alpha1.BaselineSpec, baseline, current Record) (v1alpha1.Comparison, []judgedSeries, int) {
	out := v1alpha1.Comparison{Baseline: comparedRun(baseline.Run), Method: Method}
	metrics := resolve(spec, baseline, current)
	dropped := 0
	if len(metrics) > MaxRows {
		dropped = len(metrics) - MaxRows
		metrics = metrics[:MaxRows]
	}
	rows := make([]judgedSeries, 0, len(metrics))
	for _, m := range metrics {
		bs, cs, stat := find(m, baseline, current)
		m.Stat = stat
		b, c := side(bs), side(cs)
		if bs != nil && !isTarget(bs.Name) {
			var note string
			b.Values, c.Values, note = sameWidth(b.Values, c.Values, baseline.WindowSeconds, current.WindowSeconds)
			m.Note = join(m.Note, note)
		}
		rows = append(rows, judgedSeries{Judge(m, b, c, Windows), bs, cs})
	}
	return out, rows, dropped
}

// finish decides the rows as one family (holm false: each alone, as before issue 39).
func finish(out v1alpha1.Comparison, rows []judgedSeries, dropped int, holm bool) v1alpha1.Comparison {
	js := make([]Judged, len(rows))
	for i, r := range rows {
		js[i] = r.j
	}
	for i, row := range decide(js, holm) {
		out.Metrics = append(out.Metrics, subMetricNote(row, rows[i].j.metric, rows[i].bs, rows[i].cs))
	}
	out.Decision, out.Worst = Overall(out.Metrics)
	out.Message = message(out, dropped, FamilyNote(js))
	return out
}

// sameWidth brings the windows of two records to one width before they are tested: those of
// the record with the narrower windows are averaged in blocks of k adjacent ones, k the ratio
// of the widths rounded, when that is 2 or more. A record's width follows its run's length and
// the runner's version (a script-only run had 10 s windows before the runners read the
// script's plan; now 30 s of it has 1 s windows), and a window mean over 1 s varies more than
// one over 10 s: tested as they are, the two runs' samples would differ in spread, not only in
// level, and the narrower side would count ten times the samples for the same time. Windows of
// one width (the same test run again) are left as they are. note says what was done.
func sameWidth(b, c []float64, bSeconds, cSeconds float64) (bOut, cOut []float64, note string) {
	if !(bSeconds > 0) || !(cSeconds > 0) || math.IsInf(bSeconds, 0) || math.IsInf(cSeconds, 0) {
		return b, c, ""
	}
	k := math.Round(max(bSeconds, cSeconds) / min(bSeconds, cSeconds))
	if k < 2 {
		return b, c, ""
	}
	who, fine, wide := "this run's", cSeconds, bSeconds
	if bSeconds < cSeconds {
		who, fine, wide = "the baseline's", bSeconds, cSeconds
		b = blockMeans(b, int(min(k, maxSamples)))
	} else {
		c = blockMeans(c, int(min(k, maxSamples)))
	}
	return b, c, fmt.Sprintf("%s %s windows averaged in blocks of %.0f to the other run's %s", who, seconds(fine), k, seconds(wide))
}

// seconds renders a window's width ("1 s", "0.25 s").
func seconds(s float64) string { return strconv.FormatFloat(s, 'g', 4, 64) + " s" }

func side(s *Series) Side {
	if s == nil {
		return Side{}
	}
	return Side{Present: true, Whole: s.Whole, Values: s.Windows, Unit: s.Unit}
}

func comparedRun(r RunRef) *v1alpha1.ComparedRun {
	c := &v1alpha1.ComparedRun{Name: truncate(r.Name, 253), UID: truncate(r.UID, 64), Source: "TestRun"}
	if !r.CompletionTime.IsZero() {
		t := metav1.NewTime(r.CompletionTime)
		c.CompletionTime = &t
	}
	return c
}

// Row compares one metric alone: a family of one row (Decide). Decision: NoData when a side
// lacks the metric or its value is not a finite number ≥ 0, or the baseline is 0 (no ratio);
// TooFewSamples when the test cannot reach Alpha; Regressed when the ratio is beyond the ok
// band and significantly so (the rank test against the baseline scaled to the ok edge:
// p < Alpha); OK when beyond the success edge and significantly so; Success otherwise
// (including a difference beyond a band that may be noise: the note says so). pValue is the
// test of the edge that decided. The ratio is compared with the bands as displayed (two
// decimals), so a row never reads "80.00 %" next to a decision that 80.00 % would not give.
func Row(m Metric, base, cur Side, kind Kind) v1alpha1.MetricComparison {
	return Decide([]Judged{Judge(m, base, cur, kind)})[0]
}

// Judge compares one metric up to the decision among Success, OK and Regressed, which Decide
// takes over the family of rows. NoData and TooFewSamples rows are final here.
func Judge(m Metric, base, cur Side, kind Kind) Judged {
	row := v1alpha1.MetricComparison{
		Name:      truncate(m.Name, 256),
		Stat:      truncate(m.Stat, 16),
		Unit:      truncate(firstNonEmpty(cur.Unit, base.Unit, m.Unit), 16),
		Direction: m.Direction,
		Band:      m.Band(),
		Decision:  v1alpha1.ComparisonNoData,
	}
	j := Judged{metric: m, kind: kind}
	final := func(s string) Judged {
		row.Note = truncate(join(m.Note, s), 512)
		j.row = row
		return j
	}
	switch {
	case !base.Present && !cur.Present:
		return final("in neither run")
	case !base.Present:
		return final("missing from the baseline")
	case !cur.Present:
		return final("missing from this run")
	}
	if !valid(base.Whole) || !valid(cur.Whole) {
		return final("a whole-run value is not a finite number ≥ 0")
	}
	row.Baseline, row.Current = number(base.Whole), number(cur.Whole)
	if base.Whole == 0 {
		return final("the baseline is 0: a ratio is undefined; judge this metric with a threshold instead")
	}
	ratio := math.Round(100*cur.Whole/base.Whole*100) / 100
	row.RatioPercent = number2(ratio)

	t := Test(base.Values, cur.Values, kind, m.Direction, Edges{Success: m.SuccessPercent / 100, OK: m.OKPercent / 100})
	row.BaselineSamples, row.CurrentSamples = int32(t.BaselineN), int32(t.CurrentN)
	if !math.IsNaN(t.CILow) {
		row.CILowPercent, row.CIHighPercent = number2(t.CILow), number2(t.CIHigh)
	}
	var why string
	if t.Dropped > 0 {
		why = fmt.Sprintf("%d samples dropped (NaN, infinite or negative)", t.Dropped)
	}
	if t.TooFew {
		row.Decision = v1alpha1.ComparisonTooFewSamples
		return final(join(why, t.Note))
	}
	if t.BlockLen > 1 {
		why = join(why, fmt.Sprintf("%d vs %d blocks of %d %s (autocorrelation %.2f)", t.BaselineBlocks, t.CurrentBlocks, t.BlockLen, kind, t.Autocorrelation))
	}
	if kind == Windows && atCap(t.Autocorrelation) {
		// The test ran, but its blocks assume at most the cap: say what the estimate means.
		why = join(why, capText()+": blocks may not hold it and p may be too small; "+capAdvice)
	}
	j.row, j.tested, j.why = row, true, why
	j.p, j.pOK, j.minP = t.P, t.POK, t.MinP
	j.n = [2]int{t.BaselineBlocks, t.CurrentBlocks}
	j.beyondSuccess, j.beyondOK = m.Beyond(ratio)
	return j
}

// Overall is the comparison's decision and the row that decided it: Regressed if any row
// regressed, else OK if any is ok, else Success if any succeeded; rows without a decision
// (TooFewSamples, NoData) pass or fail nothing, but when every row is one of them the whole
// comparison is TooFewSamples (if any row is) or NoData. Worst is the regressed (else ok)
// row furthest from the baseline; the first in row order on a tie.
func Overall(rows []v1alpha1.MetricComparison) (v1alpha1.ComparisonDecision, string) {
	count := map[v1alpha1.ComparisonDecision]int{}
	for _, r := range rows {
		count[r.Decision]++
	}
	for _, d := range []v1alpha1.ComparisonDecision{v1alpha1.ComparisonRegressed, v1alpha1.ComparisonOK} {
		if count[d] == 0 {
			continue
		}
		worst, worstBy := -1, 0.0
		for i, r := range rows {
			if r.Decision != d {
				continue
			}
			if by := badness(r); worst < 0 || by > worstBy {
				worst, worstBy = i, by
			}
		}
		return d, worstText(rows[worst])
	}
	switch {
	case count[v1alpha1.ComparisonSuccess] > 0:
		return v1alpha1.ComparisonSuccess, ""
	case count[v1alpha1.ComparisonTooFewSamples] > 0:
		return v1alpha1.ComparisonTooFewSamples, ""
	}
	return v1alpha1.ComparisonNoData, ""
}

// badness is how many times worse than the baseline a row is (> 1 is worse).
func badness(r v1alpha1.MetricComparison) float64 {
	ratio, err := strconv.ParseFloat(r.RatioPercent, 64)
	if err != nil || ratio <= 0 {
		return math.Inf(1)
	}
	if r.Direction == v1alpha1.HigherIsBetter {
		return 100 / ratio
	}
	return ratio / 100
}

func worstText(r v1alpha1.MetricComparison) string {
	name := r.Name
	if r.Stat != "" {
		name += " " + r.Stat
	}
	edge := bandEdge(r.Band)
	return truncate(fmt.Sprintf("%s %s %% of baseline (%s), p %s", name, r.RatioPercent, edge, r.PValue), 512)
}

func message(c v1alpha1.Comparison, dropped int, family string) string {
	if len(c.Metrics) == 0 {
		return truncate(fmt.Sprintf("nothing to compare: neither this run nor %s has a comparable metric", c.Baseline.Name), 1024)
	}
	count := map[v1alpha1.ComparisonDecision]int{}
	for _, r := range c.Metrics {
		count[r.Decision]++
	}
	s := fmt.Sprintf("%d metrics compared with %s: %d regressed, %d ok, %d success, %d too few samples, %d no data",
		len(c.Metrics), c.Baseline.Name, count[v1alpha1.ComparisonRegressed], count[v1alpha1.ComparisonOK],
		count[v1alpha1.ComparisonSuccess], count[v1alpha1.ComparisonTooFewSamples], count[v1alpha1.ComparisonNoData])
	if dropped > 0 {
		s += fmt.Sprintf("; %d more metrics not compared (at most %d rows)", dropped, MaxRows)
	}
	if family != "" {
		s += "; " + family
	}
	return truncate(s, 1024)
}

// bandEdge is the ok part of a band text ("ok ≥ 80 %").
func bandEdge(b string) string {
	for i := 0; i+2 < len(b); i++ {
		if b[i:i+2] == "ok" {
			return b[i:]
		}
	}
	return b
}

func valid(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) && v >= 0 }

// number renders a value with fixed decimals that keep small values readable (0.0123 cores,
// a rate of 0.0004); magnitudes a float64 prints in more than 64 characters use an exponent.
func number(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1e12:
		return strconv.FormatFloat(v, 'g', 6, 64)
	case a >= 1 || a == 0:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case a >= 0.01:
		return strconv.FormatFloat(v, 'f', 4, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// number2 renders a percentage with two decimals (an exponent past 1e12 %).
func number2(v float64) string {
	if math.Abs(v) >= 1e12 {
		return strconv.FormatFloat(v, 'g', 6, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

func pValue(p float64) string {
	if p < 0.0001 {
		return "<0.0001"
	}
	return strconv.FormatFloat(p, 'f', 4, 64)
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// truncate cuts s to at most n bytes on a rune boundary (status fields have MaxLength).
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
