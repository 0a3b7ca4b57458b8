package decide

import (
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	rc "fleetbench.dev/fleetbench/internal/controller/ctrlkit"
	"fleetbench.dev/fleetbench/pkg/measure"
	"fleetbench.dev/fleetbench/pkg/naming"
	"fleetbench.dev/fleetbench/pkg/target"
)

// Scope is everything one reconcile knows. load() fills the world's part once; phases read it,
// create what is missing, write run.Status and record decisions; finish() acts on them.
type Scope struct {
	// Run is the TestRun, read live; phases write only its status.
	Run *v1alpha1.TestRun
	Now time.Time
	// Timeouts are spec.timeouts with the operator's defaults applied.
	Timeouts Timeouts

	// Profile sizes the target: status.profile's snapshot (target.FromSnapshot), or, until
	// reconcileProfile records it, the snapshot of liveProfile; nil while there is neither.
	Profile *v1alpha1.Profile
	// LiveProfile is the Profile as the cache has it, read only while status.profile is unset;
	// snapshot is its copy for status.profile, snapshotErr why it cannot be copied.
	LiveProfile *v1alpha1.Profile
	Snapshot    *v1alpha1.ProfileSnapshot
	SnapshotErr error
	// TargetNS is the provisioned target's namespace; empty for an external target.
	TargetNS string
	// SharedTarget: targetNS holds other runs' targets too (Options.TargetNamespace).
	SharedTarget bool
	// Desired are the target's objects, built once; nil without a profile or for an external
	// target. desiredErr says why they cannot be built.
	Desired    *target.Objects
	DesiredErr error
	// Script is the script's text once reconcileScript found it; empty after the start.
	Script string
	// TargetPods are the target's pods as the cache has them, this run's only.
	TargetPods []corev1.Pod
	// Runners are indexed by runner number; summary classifies them once.
	Runners []RunnerState
	Summary RunnerSummary
	// PullRecheck is when a runner's failing image pull is judged again (pullFailures).
	PullRecheck time.Duration
	// LostPods are the lost runners' pods status.gaps names, while they exist (replace.go);
	// replaceRecheck is when a replacement waiting on one is looked at again.
	LostPods       map[string]*corev1.Pod
	ReplaceRecheck time.Duration

	// Live is the runners' results so far, read at most once per reconcile (liveEnvelopes).
	Live struct {
		Read bool
		Envs []measure.Envelope
		Err  error
		At   time.Time // when the read began; zero: none this reconcile
	}

	// Baseline is what load found of spec.baseline while it is not pinned; nil otherwise.
	Baseline *BaselineLookup

	// Failure, once recorded by a phase, ends the run Failed in finish().
	Failure *Failure
	// Stop, once recorded, has finish() stop every runner still running.
	Stop *StopDecision
	// d is what this reconcile decided about the run's status; composeStatus applies it.
	Decided Decision
}

// StopDecision is why the runners still running must stop, and whether the Jobs of those that
// did not stop in time are deleted.
type StopDecision struct {
	Why        string
	DeleteJobs bool
}

// Fail records that the run ends Failed; finish() acts on it.
func (s *Scope) Fail(reason, message string) { s.Failure = &Failure{Reason: reason, Message: message} }

func (s *Scope) Started() bool {
	return s.ConditionTrue(v1alpha1.ConditionStarted)
}

// ProvisioningDeadline bounds the waits for the profile, the target and the script; from
// Kueue's admission for a queued run (admittedAt).
func (s *Scope) ProvisioningDeadline() time.Time {
	return s.admittedAt().Add(s.Timeouts.Provisioning)
}

// RunnersReadyDeadline counts from when the target became Ready (creation for an external one).
func (s *Scope) RunnersReadyDeadline() time.Time {
	from := s.admittedAt()
	if c := s.Condition(v1alpha1.ConditionTargetReady); c != nil && c.Status == metav1.ConditionTrue {
		from = c.LastTransitionTime.Time
	}
	return from.Add(s.Timeouts.RunnersReady)
}

// RunDeadline is when the load must have ended; zero before the start.
func (s *Scope) RunDeadline() time.Time {
	if s.StartTime() == nil {
		return time.Time{}
	}
	return s.StartTime().Add(RunLength(s.Run, s.Timeouts))
}

// ControlledBy says whether o's controller owner reference names the object with uid: how a
// runner's Job is told from a look-alike carrying the same labels (a tenant may create any pod
// or Job with fleetbench's labels in its namespace, and make it the newest).
func ControlledBy(o metav1.Object, uid types.UID) bool {
	ref := metav1.GetControllerOfNoCopy(o)
	return ref != nil && uid != "" && ref.UID == uid
}

func RunnerIndex(o metav1.Object, n int) (int, bool) {
	idx, err := strconv.Atoi(o.GetLabels()[naming.LabelRunnerIndex])
	return idx, err == nil && idx >= 0 && idx < n
}

// WaitOrFail waits in phase with waitReason until deadline, coming back after poll at the
// latest when poll > 0; past the deadline it records failReason with the message and the fix.
func (s *Scope) WaitOrFail(deadline time.Time, poll time.Duration, phase v1alpha1.TestRunPhase,
	waitReason, failReason, message, fix string) ctrl.Result {
	if rc.Expired(s.Now, deadline) {
		s.Fail(failReason, message+fix)
		return ctrl.Result{}
	}
	// The deadline is in the message: whoever reads it knows how long the run still waits.
	s.Enter(phase, waitReason, message+fmt.Sprintf(v1alpha1.MessageWaitingUntil, deadline.UTC().Format(time.RFC3339)))
	return rc.WaitUntil(s.Now, deadline, poll)
}

// admittedAt is when the run's waits began: its creation, or, for a run Kueue admitted, the
// admission. The wait in the queue is bounded by spec.queue.maxWait instead.
func (s *Scope) admittedAt() time.Time {
	if c := s.Condition(v1alpha1.ConditionAdmitted); c != nil && c.Status == metav1.ConditionTrue && c.LastTransitionTime.After(s.Run.CreationTimestamp.Time) {
		return c.LastTransitionTime.Time
	}
	return s.Run.CreationTimestamp.Time
}

// BaselineLookup is what load found of spec.baseline; at most one of found, waiting, missing.
type BaselineLookup struct {
	Found *v1alpha1.ComparedRun
	// Waiting names the baseline TestRun that has not finished yet.
	Waiting string
	// Missing says why no baseline was found, and what to do.
	Missing string
	// Reference is what load found of spec.baseline.reference; nil without one.
	Reference *BaselineLookup
}
