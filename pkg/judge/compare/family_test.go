package compare

import (
	"math"
	"strings"
	"testing"

	"fleetbench.dev/fleetbench/api/v1alpha1"
)

// zigzag is n windows around mean that alternate above and below it (amp the largest relative
// step): no autocorrelation, so the test ranks the windows themselves and its p is exact.
func zigzag(n int, mean, amp float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		d := float64(i%5+1) / 5
		if i%2 == 1 {
			d = -d
		}
		out[i] = mean * (1 + amp*d)
	}
	return out
}

// withCPU is run(name, 1, 1, 1, 1, 1) with its targetCPU windows replaced by a zigzag at
// factor times 1.5 cores, and only the rows named in keep (all when nil).
func withCPU(name string, factor float64, keep ...string) Record {
	r := run(name, 1, 1, 1, 1, 1)
	var series []Series
	for _, s := range r.Series {
		if s.Name == "targetCPU" {
			s.Windows = zigzag(30, 1.5*factor, 0.1)
			s.Whole = meanOf(s.Windows)
		}
		if keep == nil || strings.Contains(strings.Join(keep, ","), s.Name) {
			series = append(series, s)
		}
	}
	r.Series = series
	return r
}

// TestHolmCorrectsTheGate: issue 39 item 5. A row significantly beyond its ok edge on its own
// (target CPU 125 %, p 0.012 against 120 %) is not a regression in a comparison of five rows:
// Holm's correction asks the most significant of five for p < 0.01. Before, each row was tested
// at 0.05 alone and this run was REGRESSED.
func TestHolmCorrectsTheGate(t *testing.T) {
	O, R := v1alpha1.ComparisonOK, v1alpha1.ComparisonRegressed
	for _, tc := range []struct {
		name     string
		keep     []string
		factor   float64
		want     v1alpha1.ComparisonDecision
		pValue   string
		inNote   string
		notInMsg bool
	}{
		{"five rows, p 0.012 at the ok edge: held back, OK", nil, 1.25, O, "<0.0001",
			"p 0.0120 beyond the ok edge, not significant after Holm's correction over 5 rows (adjusted p 0.0600 ≥ 0.05)", false},
		{"the row alone: a family of one, Regressed as before", []string{"targetCPU"}, 1.25, R, "0.0120", "", true},
		{"five rows, p 0.00006: survives the correction", nil, 1.30, R, "<0.0001",
			"significant after Holm's correction over 5 rows (adjusted p 0.0003)", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Compare(v1alpha1.BaselineSpec{}, withCPU("base", 1, tc.keep...), withCPU("cur", tc.factor, tc.keep...))
			r := rowOf(t, c, "targetCPU")
			if r.Decision != tc.want || r.PValue != tc.pValue || !strings.Contains(r.Note, tc.inNote) || c.Decision != tc.want {
				t.Errorf("row %s p %s note %q, comparison %s; want %s p %s note with %q", r.Decision, r.PValue, r.Note, c.Decision, tc.want, tc.pValue, tc.inNote)
			}
			if tc.inNote == "" && strings.Contains(r.Note, "Holm") {
				t.Errorf("a family of one names no correction: %q", r.Note)
			}
		})
	}
}

// TestHolmAdjusted: the step-down adjusted p-values, in the rows' order; untested rows are no
// members of the family.
func TestHolmAdjusted(t *testing.T) {
	rows := []Judged{{tested: true, pOK: 0.04}, {}, {tested: true, pOK: 0.01}, {tested: true, pOK: 0.03}, {tested: true, pOK: 0.5}}
	// sorted 0.01, 0.03, 0.04, 0.5 of m = 4: 0.04, max(0.04, 0.09), max(0.09, 0.08), max(0.09, 0.5)
	want := []float64{0.09, math.NaN(), 0.04, 0.09, 0.5}
	got, m := holmAdjusted(rows)
	if m != 4 {
		t.Fatalf("family of %d, want 4", m)
	}
	for i := range want {
		if math.IsNaN(want[i]) != math.IsNaN(got[i]) || (!math.IsNaN(want[i]) && math.Abs(got[i]-want[i]) > 1e-12) {
			t.Errorf("row %d: %v, want %v", i, got[i], want[i])
		}
	}
}

// TestBandAndTestDisagree: issue 39 item 6. The band position is read from the whole-run ratio,
// the test from the samples (block means of windows, here repetitions); when they disagree the
// row is the lesser of the two, and a test further out than the ratio is named in the note.
// Before, a run whose samples were significantly beyond the ok edge while the whole-run ratio
// was not read OK or Success without a word.
func TestBandAndTestDisagree(t *testing.T) {
	cpu := Builtins()[4] // success ≤ 100 %, ok ≤ 120 %
	base := []float64{9, 9.6, 10, 10.2, 10.4, 10.8}
	samples := map[string][]float64{
		"success": {9.1, 9.5, 10.1, 10.3, 10.5, 10.7},   // the baseline's own spread
		"ok":      {11.5, 11.9, 12.3, 12.5, 12.7, 12.9}, // p 0.0011 against 100 %, 0.29 against 120 %
		"beyond":  {14.5, 14.9, 15.3, 15.5, 15.7, 15.9}, // p 0.0011 against 120 %
	}
	wholes := map[string]float64{"success": 9.5, "ok": 11, "beyond": 13}
	S, O, R := v1alpha1.ComparisonSuccess, v1alpha1.ComparisonOK, v1alpha1.ComparisonRegressed
	for _, tc := range []struct {
		ratio, test string
		want        v1alpha1.ComparisonDecision
		inNote      string
	}{
		{"success", "success", S, ""},
		{"success", "ok", S, "the repetitions are significantly beyond the success edge (p 0.0011) but the whole-run ratio is not"},
		{"success", "beyond", S, "the repetitions are significantly beyond the ok edge (p 0.0011) but the whole-run ratio is not: a row is the lesser of the two"},
		{"ok", "success", S, "worse than the success edge but p"},
		{"ok", "ok", O, ""},
		{"ok", "beyond", O, "the repetitions are significantly beyond the ok edge (p 0.0011) but the whole-run ratio is not"},
		{"beyond", "success", S, "worse than the success edge but p"},
		{"beyond", "ok", O, "beyond the ok edge but p 0.2944 ≥ 0.05"},
		{"beyond", "beyond", R, ""},
	} {
		row := Row(cpu, Side{Present: true, Whole: 10, Values: base}, Side{Present: true, Whole: wholes[tc.ratio], Values: samples[tc.test]}, Repetitions)
		if row.Decision != tc.want || !strings.Contains(row.Note, tc.inNote) || (tc.inNote == "" && row.Note != "") {
			t.Errorf("ratio in %s, test in %s: %s, note %q; want %s with %q", tc.ratio, tc.test, row.Decision, row.Note, tc.want, tc.inNote)
		}
	}
}

// TestAutocorrelationAtItsCap: issue 39 item 6. Both runs ramp their load, so the windows
// follow a trend and the autocorrelation estimate sits at its cap; the row says so and what to
// do, TooFewSamples on 30 windows. Before, the note asked for more windows, which a ramp does
// not help. With 240 windows the test runs, and the note still says what the estimate means.
func TestAutocorrelationAtItsCap(t *testing.T) {
	ramp := func(n int, lo, hi float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = lo + (hi-lo)*float64(i)/float64(n-1) + float64(i%3)
		}
		return out
	}
	m := Builtins()[1] // latencyP95
	for _, tc := range []struct {
		n    int
		want v1alpha1.ComparisonDecision
		note []string
	}{
		{30, v1alpha1.ComparisonTooFewSamples, []string{"30 vs 30 windows in blocks of 3: autocorrelation at its cap 0.90: the windows follow a trend",
			"no decision is possible; compare a constant-load stage (a run of its own), or judge this metric with a threshold"}},
		{240, v1alpha1.ComparisonSuccess, []string{"autocorrelation at its cap 0.90: the windows follow a trend",
			"p may be too small; compare a constant-load stage"}},
	} {
		b, c := ramp(tc.n, 100, 400), ramp(tc.n, 100, 400)
		row := Row(m, Side{Present: true, Whole: meanOf(b), Values: b}, Side{Present: true, Whole: meanOf(c), Values: c}, Windows)
		if row.Decision != tc.want {
			t.Errorf("%d windows: %s, want %s (note %q)", tc.n, row.Decision, tc.want, row.Note)
		}
		for _, s := range tc.note {
			if !strings.Contains(row.Note, s) {
				t.Errorf("%d windows: note %q lacks %q", tc.n, row.Note, s)
			}
		}
		if len(row.Note) > 512 {
			t.Errorf("note of %d bytes", len(row.Note))
		}
	}
}

// TestHeldBackRowThatCannotReachTheLevel: a row beyond its ok edge with p 0.02 alone, held back
// by Holm's correction over 5 rows, is TooFewSamples when its blocks cannot give p < 0.01 at
// all (a 50 % drop on 30 windows at high autocorrelation), and OK when they could have: only
// the first claims no more than the data. Before issue 39 both were Regressed.
func TestHeldBackRowThatCannotReachTheLevel(t *testing.T) {
	quiet := Judged{tested: true, pOK: 1, p: 0.6, minP: 0.001, row: v1alpha1.MetricComparison{Name: "quiet"}}
	for _, tc := range []struct {
		minP float64
		want v1alpha1.ComparisonDecision
		note string
	}{
		{0.015, v1alpha1.ComparisonTooFewSamples, "p 0.0200 beyond the ok edge alone, but Holm's correction over 5 rows asks p < 0.0100 of the most significant " +
			"and 10 vs 10 blocks give at best 0.0150: no decision; more samples a side decide"},
		{0.002, v1alpha1.ComparisonOK, "p 0.0200 beyond the ok edge, not significant after Holm's correction over 5 rows (adjusted p 0.1000 ≥ 0.05)"},
	} {
		held := Judged{tested: true, pOK: 0.02, p: 0.0001, minP: tc.minP, n: [2]int{10, 10}, beyondSuccess: true, beyondOK: true,
			metric: Builtins()[0], row: v1alpha1.MetricComparison{Name: "throughput"}}
		rows := Decide([]Judged{quiet, quiet, held, quiet, quiet})
		if r := rows[2]; r.Decision != tc.want || r.Note != tc.note {
			t.Errorf("minP %v: %s %q, want %s %q", tc.minP, r.Decision, r.Note, tc.want, tc.note)
		}
		if alone := Decide([]Judged{held})[0]; alone.Decision != v1alpha1.ComparisonRegressed {
			t.Errorf("alone: %s, want Regressed", alone.Decision)
		}
	}
}
