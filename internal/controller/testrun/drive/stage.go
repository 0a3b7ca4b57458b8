// Package drive is the third stage of a TestRun reconcile: the load runs (the synchronized
// start, setup() and teardown() once, the target watched and sampled, lost runners replaced,
// PodDisruptionBudgets, live progress, peak steps, abortOnFail, the stop).
package drive

import (
	"fleetbench.dev/fleetbench/internal/controller/testrun/provision"
	"fleetbench.dev/fleetbench/internal/controller/testrun/runenv"
)

// Stage holds the phases that drive the load: the start, the target watched, lost runners
// replaced, the PodDisruptionBudgets, and the run itself (setup and teardown once, live
// progress, peak steps, abortOnFail, the stop).
type Stage struct {
	*provision.Stage
	// Budgets remembers the runs whose PodDisruptionBudgets were made or deleted (disruption.go).
	Budgets BudgetMarks
}

// New is the driving stage over env, after provisioning.
func New(env *runenv.Env) *Stage { return &Stage{Stage: provision.New(env)} }
