package helpercall

import (
	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/controller/statusshape/testdata/evasions/helper"
)

func stage(run *v1alpha1.TestRun) {
	helper.Decide(run.Status.Comparison)
}
