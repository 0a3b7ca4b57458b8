package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// RunnerLossPolicy is what a lost runner does to a run.
// +kubebuilder:validation:Enum=Fail;Replace
type RunnerLossPolicy string

const (
	// RunnerLossFail ends the run Failed RunnerLost (or RunnerOOMKilled) with partial results.
	RunnerLossFail RunnerLossPolicy = "Fail"
	// RunnerLossReplace gives the lost runner's execution segment and device ids to a new runner
	// for the rest of the load, and records the gap in status.gaps.
	RunnerLossReplace RunnerLossPolicy = "Replace"
)

// DrainPolicy is what a planned disruption (kubectl drain, a node upgrade) does to the runners.
// +kubebuilder:validation:Enum=Wait;Replace
type DrainPolicy string

const (
	// DrainWait covers the runners with a PodDisruptionBudget that allows no eviction while the
	// load runs: kubectl drain waits until the run ends.
	DrainWait DrainPolicy = "Wait"
	// DrainReplace leaves the runners without a budget: a drained runner goes through the
	// replacement path (spec.runnerLoss.policy Replace).
	DrainReplace DrainPolicy = "Replace"
)

// DefaultMaxReplacements bounds the replacements of a run when spec.runnerLoss.maxReplacements
// is not set; MaxReplacementsLimit is the most a run may ask for (status.gaps holds one entry
// per replacement).
const (
	DefaultMaxReplacements = 3
	MaxReplacementsLimit   = 20
)

// RunnerLossSpec says what happens when a runner is lost after the start: its pod deleted or
// evicted, its node drained or lost, the runner OOM-killed or killed by a signal.
//
// The default policy is Replace for type stability with two runners or more, Fail otherwise.
// Only a load whose length is time can be resumed: spec.load with a duration (devices at a
// constant or ramping rate, or the script's VUs for a duration), and a peak climb. A load of
// iterations cannot (k6 cannot say which iterations the lost runner finished), nor a load only
// the script knows (its own scenarios): those end Failed RunnerLost as before.
// +kubebuilder:validation:XValidation:rule="!has(self.maxGaps) || !has(self.maxReplacements) || self.maxGaps <= self.maxReplacements",message="spec.runnerLoss.maxGaps cannot exceed spec.runnerLoss.maxReplacements: every gap is a replacement"
type RunnerLossSpec struct {
	// policy is Fail (the run ends Failed RunnerLost) or Replace (a new runner takes the lost
	// runner's segment for the remaining time). Default: Replace for type stability with
	// spec.parallelism 2 or more, Fail otherwise.
	// +optional
	Policy RunnerLossPolicy `json:"policy,omitempty"`

	// maxReplacements bounds the replacements over the whole run (default 3, at most 20); one
	// more loss ends the run Failed RunnerLost.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=20
	MaxReplacements *int32 `json:"maxReplacements,omitempty"`

	// maxGaps is how many gaps a run may have and still pass: with more, the verdict is
	// INCONCLUSIVE (the numbers miss part of the load). Unset: any number up to maxReplacements
	// passes, and the Gapless condition and the verdict's message say what the results cover.
	// 0 requires a run without gaps.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=20
	MaxGaps *int32 `json:"maxGaps,omitempty"`

	// drain is what kubectl drain does to a runner while the load runs: Wait (default: a
	// PodDisruptionBudget lets no runner be evicted, so the drain waits for the run's end) or
	// Replace (no budget on the runners: a drained runner is replaced, policy Replace only).
	// +optional
	Drain DrainPolicy `json:"drain,omitempty"`
}

// RunnerGap is one runner lost and replaced: the part of the load nobody measured.
type RunnerGap struct {
	// runner is the index of the lost runner: its execution segment and device-id range.
	Runner int32 `json:"runner"`
	// replacement counts the runner's replacements: 1 for the first.
	Replacement int32 `json:"replacement"`
	// lostPod is the pod that was lost.
	// +kubebuilder:validation:MaxLength=253
	LostPod string `json:"lostPod"`
	// cause is what happened to it: Deleted, Evicted, OOMKilled, NodeLost, Killed or Failed.
	// +kubebuilder:validation:MaxLength=64
	Cause string `json:"cause"`
	// lostAt is when the operator saw the loss.
	LostAt metav1.Time `json:"lostAt"`
	// observedUntil is the end of the lost runner's last results the operator kept (its last
	// live read); unset when none was kept, and its share of the load until lostAt is missing.
	// +optional
	ObservedUntil *metav1.Time `json:"observedUntil,omitempty"`
	// replacedAt is when the replacement was started; unset while it starts, and when the
	// loss came too late in the load to replace.
	// +optional
	ReplacedAt *metav1.Time `json:"replacedAt,omitempty"`
	// job is the replacement runner's Job.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Job string `json:"job,omitempty"`
	// remaining is the load the replacement was given, e.g. 1h52m10s.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Remaining string `json:"remaining,omitempty"`
	// estimatedUnobserved is the number of requests (iterations) the segment's rate would have
	// made between observedUntil (the start, when unset) and replacedAt (now, while it starts):
	// requests either not made or made and not observed.
	EstimatedUnobserved int64 `json:"estimatedUnobserved"`
}
