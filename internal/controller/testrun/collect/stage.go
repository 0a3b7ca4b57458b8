// Package collect is the last stage of a TestRun reconcile: the runners' results merged, the
// comparison with a baseline, the verdict decided once (pkg/judge/verdict), the kept record,
// and finish, which acts on a decision to stop or fail.
package collect

import (
	"fleetbench.dev/fleetbench/internal/controller/testrun/drive"
	"fleetbench.dev/fleetbench/internal/controller/testrun/runenv"
)

// Stage holds what ends a run: the collection of the results, the comparison with a baseline,
// the kept record, and acting on a decision to stop or fail (finish).
type Stage struct {
	*drive.Stage
}

// New is the collection stage over env, after driving: every stage, in order.
func New(env *runenv.Env) *Stage { return &Stage{Stage: drive.New(env)} }
