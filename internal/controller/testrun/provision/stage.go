// Package provision is the second stage of a TestRun reconcile: what the load needs is made
// (room under the per-namespace runner cap, the pre-flight and its verdict, a slot under the
// per-namespace target cap, the target's charge to its namespace's quota, the target and its pull
// secrets, the runner Jobs) and waited for.
package provision

import (
	"fleetbench.dev/fleetbench/internal/controller/testrun/admit"
	"fleetbench.dev/fleetbench/internal/controller/testrun/runenv"
)

// Stage holds the phases that make what the load needs: room for the runners, the pre-flight, a
// slot for the target, its charge, the target, the runners, and the wait for the pre-flight's
// verdict.
type Stage struct {
	*admit.Stage
	// Pulls tells a pull failing again after the kubelet's back-off from its first failure.
	Pulls PullFailures
	// slots and runnerSlots are the runs let past MaxTargetsPerNamespace and
	// MaxRunnersPerNamespace that the cache does not show holding their share yet.
	slots, runnerSlots *slotQueue
}

// New is the provisioning stage over env, after admission.
func New(env *runenv.Env) *Stage {
	return &Stage{Stage: admit.New(env), Pulls: PullFailures{Grace: env.PullRetryGrace},
		slots: &slotQueue{rule: targetRule}, runnerSlots: &slotQueue{rule: runnerRule}}
}
