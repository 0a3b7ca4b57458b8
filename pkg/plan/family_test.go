package plan

import (
	"strings"
	"testing"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

func TestRepetitionsWarning(t *testing.T) {
	spec := func(reps int32, profiles []string, workers ...string) *v1alpha1.CapacityPlanSpec {
		s := &v1alpha1.CapacityPlanSpec{Profiles: profiles, Repetitions: reps, Baseline: &v1alpha1.PlanBaselineSpec{Name: "v1"}}
		if len(workers) > 0 {
			s.Sweep = []v1alpha1.SweepDimension{{Env: "WORKERS", Values: workers}}
		}
		return s
	}
	for _, tc := range []struct {
		name string
		spec *v1alpha1.CapacityPlanSpec
		says []string // empty: no warning
	}{
		{"no baseline, no warning", &v1alpha1.CapacityPlanSpec{Profiles: []string{"C1"}, Repetitions: 1}, nil},
		// One cell's 4 rows ask p < 0.0125; 4 a side give at best 1/70 = 0.0143.
		{"4 repetitions, one cell", spec(4, []string{"C1"}), []string{"spec.repetitions 4", "up to 4 here (4 for each of 1 cells)", "p < 0.0125",
			"set spec.repetitions: 5 or more"}},
		{"5 repetitions reach 3 cells", spec(5, []string{"C1", "C2", "C3"}), nil},
		{"5 repetitions, 4 cells", spec(5, []string{"C1", "C2"}, "1", "2"), []string{"up to 16 here", "set spec.repetitions: 6 or more"}},
		{"6 repetitions reach 11 cells", spec(6, []string{"C1"}, "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11"), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := RepetitionsWarning(tc.spec)
			if (got == "") != (len(tc.says) == 0) {
				t.Fatalf("warning %q, want one saying %q", got, tc.says)
			}
			for _, s := range tc.says {
				if !strings.Contains(got, s) {
					t.Errorf("warning %q does not say %q", got, s)
				}
			}
		})
	}
}
