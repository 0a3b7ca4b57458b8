// Package provision is the second stage of a TestRun reconcile: what the load needs is made
// (the pre-flight and its verdict, a slot under the per-namespace target cap, the target and its
// pull secrets, the runner Jobs) and waited for.
package provision

import (
	"fleetbench.dev/fleetbench/internal/controller/testrun/admit"
	"fleetbench.dev/fleetbench/internal/controller/testrun/runenv"
)

// Stage holds the phases that make what the load needs: the pre-flight, a slot for the target,
// the target, the runners, and the wait for the pre-flight's verdict.
type Stage struct {
	*admit.Stage
	// Pulls tells a pull failing again after the kubelet's back-off from its first failure.
	Pulls PullFailures
	// slots are the runs let past MaxTargetsPerNamespace that the cache does not show yet.
	slots TargetSlots
}

// New is the provisioning stage over env, after admission.
func New(env *runenv.Env) *Stage {
	return &Stage{Stage: admit.New(env), Pulls: PullFailures{Grace: env.PullRetryGrace}}
}
