// Package admit is the first stage of a TestRun reconcile: whether and how the run may start,
// before anything holds a pod (the baseline pinned, the Profile's snapshot, the permission, the
// shared namespace, the script's copy, the runner count, Kueue's admission), and the kept
// records later runs compare with.
package admit

import "fleetbench.dev/fleetbench/internal/controller/testrun/runenv"

// Stage holds the phases that decide whether and how a run may start, before anything holds a
// pod: the baseline, the Profile, the permission, the shared namespace, the script, the runner
// count and Kueue's admission.
type Stage struct {
	*runenv.Env
}

// New is the admission stage over env.
func New(env *runenv.Env) *Stage { return &Stage{Env: env} }
