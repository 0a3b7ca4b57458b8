package decide

import (
	"fmt"
	"slices"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/judge/verdict"
	"fleetbench.dev/fleetbench/pkg/measure"
)

// RunnerState is one runner as the world shows it: its Job and the Job's pod, either missing,
// and the final envelope the runner answered with, if it did (finalEnvelopes).
type RunnerState struct {
	Index int
	Job   *batchv1.Job
	Pod   *corev1.Pod
	Final *measure.Envelope
	// PullGaveUp is the kubelet's message once the runner's image pull failed again after the
	// first back-off (pullFailures).
	PullGaveUp string
	// Replacement is the number of the replacement this runner is (replace.go); 0: the original.
	Replacement int
	// Plan, set while a replacement is decided, makes createRunnerJobs build it.
	Plan *ReplacementPlan
	// AfterLoss: a runner of a Replace run lost after the start, whose loss a gap accounts for
	// without a replacement (too late in the load): it counts as stopped, not as a failure.
	AfterLoss bool
	// Deleting: a Replace run's runner whose pod is being deleted after the start (kubectl
	// delete, a drain's eviction, the taint manager on a lost node): lost already.
	Deleting bool
}

// runnerClass is what one runner is doing. Every decision about runners reads this, and only
// classifyRunner makes it, so a runner is never counted one way and judged another.
type runnerClass int

const (
	// runnerNoJob: its Job is not created yet.
	runnerNoJob runnerClass = iota
	// runnerNoPod: its Job has made no pod yet (a ResourceQuota may refuse it).
	runnerNoPod
	// RunnerPending: its pod is not Ready: scheduling, pulling, reaching the target.
	RunnerPending
	// RunnerReady: Ready; paused before the start, running after it.
	RunnerReady
	// RunnerSucceeded: k6 ended by itself with its results: exit 0, 99 or 110.
	RunnerSucceeded
	// runnerStopped: exit 103, stopped through its REST API: the operator did that, so such a
	// runner is never the cause of a failure, only a witness of one.
	runnerStopped
	// runnerFailed: k6, or the wait to reach the target before it, ended with an error of its own.
	runnerFailed
	// RunnerOOMKilled: killed for exceeding its memory limit.
	RunnerOOMKilled
	// RunnerLost: its pod went away or was ended from outside (evicted, deleted, signalled).
	RunnerLost
)

var runnerClassNames = map[runnerClass]string{
	runnerNoJob: "no Job", runnerNoPod: "no pod", RunnerPending: "pending", RunnerReady: "ready",
	RunnerSucceeded: "succeeded", runnerStopped: "stopped", runnerFailed: "failed",
	RunnerOOMKilled: "OOM-killed", RunnerLost: "lost",
}

func (c runnerClass) String() string { return runnerClassNames[c] }

// Ended: the runner will do nothing more.
func (c runnerClass) Ended() bool { return c >= RunnerSucceeded }

// k6 exit codes (k6 v2.2.0, errext/exitcodes).
const (
	ExitThresholdsFailed = 99
	ExitStopped          = 103
	ExitExternalAbort    = 105
	ExitScriptAborted    = 108
	exitMarkedAsFailed   = 110
)

// k6ExitMeaning names k6's exit codes, and the runner binary's own, for messages.
var k6ExitMeaning = map[int32]string{
	measure.ExitTargetUnreachable: "could not reach the target, so k6 never started",
	ExitThresholdsFailed:          "thresholds failed on this runner's share",
	100:                           "setup() timed out",
	101:                           "teardown() timed out",
	102:                           "timed out",
	ExitStopped:                   "stopped through the REST API",
	104:                           "invalid k6 configuration",
	ExitExternalAbort:             "aborted from outside (SIGTERM or SIGINT)",
	106:                           "could not start its REST API",
	107:                           "script error",
	ExitScriptAborted:             "aborted by the script (test.abort())",
	109:                           "k6 panicked",
	exitMarkedAsFailed:            "marked as failed by the script (test.fail())",
}

// imageMissing are waiting reasons that no amount of waiting fixes.
var imageMissing = map[string]bool{"ErrImageNeverPull": true, "InvalidImageName": true}

// RunnerView is one classified runner.
type RunnerView struct {
	RunnerState
	Class runnerClass
	// Why says, for a runner not Ready or ended, what the scheduler, the kubelet or k6 said.
	Why string
	// Unschedulable: the scheduler found no node for its pod.
	Unschedulable bool
	// imageProblem: its image is not on the node and will not be pulled.
	imageProblem string
	// markedFailed: the script called test.fail(); the runner's results are whole, the verdict is not PASSED.
	markedFailed bool
	// ScriptAborted: the script called test.abort(); its results are whole up to there, the
	// verdict is not PASSED, and the rest of the fleet stops as one k6 process would.
	ScriptAborted bool
}

// Name is the pod's name, or the runner's number before it has one.
func (v RunnerView) Name() string {
	if v.Pod != nil {
		return v.Pod.Name
	}
	return fmt.Sprintf("runner %d", v.Index)
}

// ClassifyRunner decides what one runner is doing, from its Job and pod alone.
func ClassifyRunner(rs RunnerState) RunnerView {
	v := RunnerView{RunnerState: rs}
	switch pod := rs.Pod; {
	case rs.Job == nil && pod == nil:
		v.Class = runnerNoJob
	case pod == nil:
		if why := JobFailed(rs.Job); why != "" {
			v.Class, v.Why = RunnerLost, fmt.Sprintf("runner %d was lost: %s", rs.Index, why)
			return v
		}
		v.Class, v.Why = runnerNoPod, fmt.Sprintf("runner %d has no pod yet (kubectl describe job %s shows why, e.g. a ResourceQuota)", rs.Index, rs.Job.Name)
	case Terminated(pod):
		classifyEnded(&v)
	case rs.Deleting && clean(rs.Final) == nil:
		v.Class, v.Why = RunnerLost, fmt.Sprintf("runner %s was lost: its pod is being deleted", pod.Name)
	case clean(rs.Final) != nil:
		// k6 stopped its outputs with no test error: what exit 0 will say once pod status has it.
		v.Class, v.Why = RunnerSucceeded, fmt.Sprintf("runner %s ended and handed over its final results", pod.Name)
	default:
		v.imageProblem = ImageProblem(pod)
		if v.imageProblem == "" {
			v.imageProblem = rs.PullGaveUp
		}
		v.Class = RunnerPending
		if PodReady(pod) {
			v.Class = RunnerReady
			return v
		}
		c := PodCondition(pod, corev1.PodScheduled)
		v.Unschedulable = c != nil && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable
		v.Why = "runner " + pod.Name + " is not Ready"
		if why := PendingWhy(pod); why != "" {
			v.Why += " (" + why + ")"
		}
	}
	return v
}

// classifyEnded classifies a runner whose pod ended, by its init step, then k6's exit code.
func classifyEnded(v *RunnerView) {
	pod := v.Pod
	v.Why = fmt.Sprintf("runner %s %s", pod.Name, TerminationText(pod))
	for _, cs := range pod.Status.InitContainerStatuses {
		if t := cs.State.Terminated; t != nil && t.ExitCode != 0 {
			v.Class = runnerFailed
			return
		}
	}
	exit, reason := ExitOf(pod)
	switch {
	case reason == "OOMKilled":
		v.Class = RunnerOOMKilled
		v.Why = fmt.Sprintf("runner %s was killed for exceeding its memory limit; raise spec.runner.resources.limits.memory or spec.parallelism", pod.Name)
	case exit == -1:
		v.Class = RunnerLost // evicted, or deleted with its node: no container state
		v.Why = fmt.Sprintf("runner %s was lost: %s", pod.Name, TerminationText(pod))
	case exit == 0 || exit == ExitThresholdsFailed:
		// 99: k6 judged only this runner's share; fleetbench judges the merged data.
		v.Class = RunnerSucceeded
	case exit == exitMarkedAsFailed:
		v.Class, v.markedFailed = RunnerSucceeded, true
	case exit == ExitScriptAborted:
		v.Class, v.ScriptAborted = RunnerSucceeded, true
	case exit == ExitStopped:
		v.Class = runnerStopped
	case exit == ExitExternalAbort || killedBySignal(exit):
		// SIGTERM reached k6 (105), or a signal killed it (128+n): someone ended the pod.
		v.Class = RunnerLost
		v.Why = fmt.Sprintf("runner %s was lost: %s", pod.Name, TerminationText(pod))
	default:
		v.Class = runnerFailed
	}
}

// RunnerSummary is every runner classified once, and counted.
type RunnerSummary struct {
	Views  []RunnerView
	Counts map[runnerClass]int
}

func Classify(rs []RunnerState) RunnerSummary {
	s := RunnerSummary{Counts: map[runnerClass]int{}}
	for _, r := range rs {
		v := ClassifyRunner(r)
		if r.AfterLoss && (v.Class == RunnerLost || v.Class == RunnerOOMKilled) {
			v.Class = runnerStopped // its gap says what the results miss
		}
		s.Views = append(s.Views, v)
		s.Counts[v.Class]++
	}
	return s
}

// Active counts the runners that have not ended.
func (s RunnerSummary) Active() int {
	n := 0
	for c, k := range s.Counts {
		if !c.Ended() {
			n += k
		}
	}
	return n
}

// first is the first runner of one of these classes.
func (s RunnerSummary) first(classes ...runnerClass) (RunnerView, bool) {
	return s.FirstWith(func(v RunnerView) bool { return slices.Contains(classes, v.Class) })
}

// NotReady says, runner by runner, why the runners are not all Ready yet.
func (s RunnerSummary) NotReady() string {
	var parts []string
	waiting := 0
	for _, v := range s.Views {
		if v.Class == runnerNoJob || v.Class == runnerNoPod || v.Class == RunnerPending {
			waiting++
			if len(parts) < maxNamedRunners {
				parts = append(parts, v.Why)
			}
		}
	}
	msg := strings.Join(parts, "; ")
	if waiting > len(parts) {
		msg = fmt.Sprintf("%d of %d runners are not Ready: %s; and %d more", waiting, len(s.Views), msg, waiting-len(parts))
	}
	return msg
}

// maxNamedRunners bounds how many runners one message names: a few dozen runners' reasons
// would overflow status.message, and the API server refuses the whole status patch then.
const maxNamedRunners = 5

// status is status.runners, rebuilt from the world.
func (s RunnerSummary) status(startSkew string) *v1alpha1.RunnerCounts {
	c := &v1alpha1.RunnerCounts{Desired: int32(len(s.Views)), StartSkew: startSkew}
	for _, v := range s.Views {
		switch v.Class {
		case RunnerSucceeded:
			c.Succeeded++
		case runnerStopped, runnerFailed, RunnerOOMKilled, RunnerLost:
			c.Failed++
		case RunnerReady:
			c.Running++
			c.Ready++
		case RunnerPending:
			if v.Pod.Status.Phase == corev1.PodRunning {
				c.Running++
			}
		}
	}
	return c
}

// Failure is why a run ends Failed: a reason constant and a message that says what to do.
type Failure = verdict.Failure

// BeforeStartFailure is the failure the runners show before the start, if any: a missing image
// or a runner that ended (k6 never exits 0 while paused, so exit 0 means an earlier reconcile
// started it and its status write was lost; that one is not a failure).
func (s RunnerSummary) BeforeStartFailure() *Failure {
	if v, ok := s.FirstWith(func(v RunnerView) bool { return v.imageProblem != "" }); ok {
		return &Failure{Reason: v1alpha1.ReasonRunnerImageNotPresent, Message: fmt.Sprintf("runner %s: %s; import the runner image or set spec.runner.image", v.Name(), v.imageProblem)}
	}
	if v, ok := s.first(runnerStopped, runnerFailed, RunnerOOMKilled, RunnerLost); ok {
		return &Failure{Reason: v1alpha1.ReasonRunnerFailedBeforeStart, Message: "runner ended before the start: " + v.Why}
	}
	return nil
}

// NotReadyFailure is the failure of runners still not Ready at their deadline.
func (s RunnerSummary) NotReadyFailure() *Failure {
	reason := v1alpha1.ReasonRunnersNotReady
	if _, ok := s.FirstWith(func(v RunnerView) bool { return v.Unschedulable }); ok {
		reason = v1alpha1.ReasonRunnerUnschedulable
	} else if _, ok := s.first(runnerNoJob, runnerNoPod); ok {
		reason = v1alpha1.ReasonRunnerNotCreated
	}
	return &Failure{Reason: reason, Message: s.NotReady() + "; raise spec.timeouts.runnersReady, free capacity or quota, or lower spec.parallelism"}
}

// SeparateFailure is the failure of a spec.separate run the cluster cannot place: a runner is
// unschedulable and fewer nodes can take runners than there are runners. Waiting would not help.
func (s RunnerSummary) SeparateFailure(separate bool, schedulableNodes int) *Failure {
	if !separate || schedulableNodes >= len(s.Views) {
		return nil
	}
	v, ok := s.FirstWith(func(v RunnerView) bool { return v.Unschedulable })
	if !ok {
		return nil
	}
	return &Failure{Reason: v1alpha1.ReasonRunnerUnschedulable, Message: fmt.Sprintf(
		"spec.separate puts each of the %d runners on its own node, but the cluster has %d schedulable nodes (runner %s: %s); "+
			"lower spec.parallelism to %d, add nodes, or unset spec.separate", len(s.Views), schedulableNodes, v.Name(), v.Why, schedulableNodes)}
}

// RunFailure is the most telling failure among runners after the start: an OOM kill, a lost
// runner, then a runner's own error. Stopped runners and exit 99 are never a cause.
func (s RunnerSummary) RunFailure() *Failure {
	if v, ok := s.first(RunnerOOMKilled); ok {
		return &Failure{Reason: v1alpha1.ReasonRunnerOOMKilled, Message: v.Why}
	}
	if v, ok := s.first(RunnerLost); ok {
		return &Failure{Reason: v1alpha1.ReasonRunnerLost, Message: v.Why}
	}
	if v, ok := s.first(runnerFailed); ok {
		return &Failure{Reason: v1alpha1.ReasonRunnerFailed, Message: v.Why}
	}
	return nil
}

func (s RunnerSummary) FirstWith(match func(RunnerView) bool) (RunnerView, bool) {
	for _, v := range s.Views {
		if match(v) {
			return v, true
		}
	}
	return RunnerView{}, false
}

// clean is env when it ended without a test error: such a runner has ended with its results.
func clean(env *measure.Envelope) *measure.Envelope {
	if env == nil || env.Error != "" {
		return nil
	}
	return env
}
