package compare

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"fleetbench.dev/fleetbench/api/v1alpha1"
)

// TestUndecided: every row that decided nothing is named with its note, and a comparison
// without rows (the baseline's record gone) is named whole; decided rows are not.
func TestUndecided(t *testing.T) {
	rows := []v1alpha1.MetricComparison{
		{Name: "throughput", Decision: v1alpha1.ComparisonSuccess},
		{Name: "latencyP99", Decision: v1alpha1.ComparisonTooFewSamples, Note: "3 vs 3 windows"},
		{Name: "http_req_duration{name:push}", Stat: "p95", Decision: v1alpha1.ComparisonNoData, Note: "missing from the baseline"},
		{Name: "targetCPU", Decision: v1alpha1.ComparisonOK},
		{Name: "targetMemory", Decision: v1alpha1.ComparisonRegressed},
	}
	got := Undecided(v1alpha1.Comparison{Decision: v1alpha1.ComparisonRegressed, Metrics: rows})
	want := []string{"latencyP99 TooFewSamples (3 vs 3 windows)", "http_req_duration{name:push} p95 NoData (missing from the baseline)"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Undecided = %q, want %q", got, want)
	}
	gone := Undecided(v1alpha1.Comparison{Decision: v1alpha1.ComparisonNoData, Message: "the kept record of v1 is gone"})
	if want := []string{"the whole comparison NoData (the kept record of v1 is gone)"}; !reflect.DeepEqual(gone, want) {
		t.Errorf("a comparison without rows: %q, want %q", gone, want)
	}
	if got := Undecided(v1alpha1.Comparison{Decision: v1alpha1.ComparisonSuccess, Metrics: rows[:1]}); got != nil {
		t.Errorf("every row judged: %q, want nil", got)
	}
}

// TestUndecidedRowsOfARealComparison: a short run's rows are TooFewSamples and Undecided names
// them, so the verdict does not pass them (issue 39: they left the run PASSED).
func TestUndecidedRowsOfARealComparison(t *testing.T) {
	three := []float64{100, 101, 99}
	rec := func(name string) Record {
		return Record{Run: RunRef{Name: name}, WindowSeconds: 10, Series: []Series{{Name: "throughput", Whole: 100, Windows: three}}}
	}
	c := Compare(v1alpha1.BaselineSpec{}, rec("v1"), rec("v2"))
	if c.Decision != v1alpha1.ComparisonTooFewSamples || len(Undecided(c)) != 1 {
		t.Fatalf("3 windows a side: decision %s, undecided %q; want TooFewSamples and one row", c.Decision, Undecided(c))
	}
}

// TestPlanAdmissionAsksForWhatTheRankTestNeeds: the CapacityPlan's admission rule refuses a
// compared plan below the repetitions with which the one-sided rank test over repetitions can
// reach p < Alpha at all (every sample of one side below every one of the other). If Alpha or
// the test changes, the rule and its message must follow.
func TestPlanAdmissionAsksForWhatTheRankTestNeeds(t *testing.T) {
	n := SamplesNeeded(Alpha)
	if n != 4 || smallestP(n-1, n-1) < Alpha || smallestP(n, n) >= Alpha {
		t.Fatalf("SamplesNeeded(%.2f) = %d (smallest p %g at %d a side, %g at %d)", Alpha, n, smallestP(n-1, n-1), n-1, smallestP(n, n), n)
	}
	src, err := os.ReadFile("../../../api/v1alpha1/capacityplan_types.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		fmt.Sprintf(`rule="!has(self.baseline) || (has(self.repetitions) ? self.repetitions : 1) >= %d"`, n),
		fmt.Sprintf("needs %d repetitions a side to reach p < %.2f", n, Alpha),
		fmt.Sprintf("spec.repetitions: %d or more", n),
	} {
		if !strings.Contains(string(src), want) {
			t.Errorf("CapacityPlanSpec's admission rule lacks %q", want)
		}
	}
}
