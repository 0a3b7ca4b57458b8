package plan

import (
	"fmt"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/judge/compare"
)

// comparedRowsPerCell are the rows a compared cell tests: memory peak, memory per device,
// pushes/s (or req/s) and safe max devices (cellMetrics).
const comparedRowsPerCell = 4

// RepetitionsWarning says, when a compared plan is created, that its repetitions cannot find a
// regression under Holm's correction over all its rows, and how many can; "" when they can (or
// the plan compares nothing). Admission asks for 4, what one row needs; the family needs more as
// the cells grow, and a plan that could never be Regressed should say so before it runs, not
// after hours of children.
func RepetitionsWarning(spec *v1alpha1.CapacityPlanSpec) string {
	if spec.Baseline == nil {
		return ""
	}
	reps := max(int(spec.Repetitions), 1)
	combos := len(Cells(spec)) / reps
	rows := comparedRowsPerCell * combos
	need := compare.SamplesNeeded(compare.Alpha / float64(rows))
	if reps >= need {
		return ""
	}
	return fmt.Sprintf("spec.repetitions %d: the comparison with %s corrects its rows together (Holm), up to %d here (%d for each of %d cells), "+
		"so the most significant needs p < %.4f, which %d repetitions a side cannot give: no cell can be found Regressed, only undecided; "+
		"set spec.repetitions: %d or more, or sweep fewer cells", reps, spec.Baseline.Name, rows, comparedRowsPerCell, combos,
		compare.Alpha/float64(rows), reps, need)
}
