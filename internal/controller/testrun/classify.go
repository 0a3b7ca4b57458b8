package testrun

import (
	"fmt"
	"slices"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/measure"
)

// runnerState is one runner as the world shows it: its Job and the Job's pod, either missing,
// and the final envelope the runner answered with, if it did (finalEnvelopes).
type runnerState struct {
	index int
	job   *batchv1.Job
	pod   *corev1.Pod
	final *measure.Envelope
	// pullGaveUp is the kubelet's message once the runner's image pull failed again after the
	// first back-off (pullFailures).
	pullGaveUp string
	// replacement is the number of the replacement this runner is (replace.go); 0: the original.
	replacement int
	// plan, set while a replacement is decided, makes createRunnerJobs build it.
	plan *replacementPlan
	// afterLoss: a runner of a Replace run lost after the start, whose loss a gap accounts for
	// without a replacement (too late in the load): it counts as stopped, not as a failure.
	afterLoss bool
	// deleting: a Replace run's runner whose pod is being deleted after the start (kubectl
	// delete, a drain's eviction, the taint manager on a lost node): lost already.
	deleting bool
}

// runnerClass is what one runner is doing. Every decision about runners reads this, and only
// classifyRunner makes it, so a runner is never counted one way and judged another.
type runnerClass int

const (
	// runnerNoJob: its Job is not created yet.
	runnerNoJob runnerClass = iota
	// runnerNoPod: its Job has made no pod yet (a ResourceQuota may refuse it).
	runnerNoPod
	// runnerPending: its pod is not Ready: scheduling, pulling, reaching the target.
	runnerPending
	// runnerReady: Ready; paused before the start, running after it.
	runnerReady
	// runnerSucceeded: k6 ended by itself with its results: exit 0, 99 or 110.
	runnerSucceeded
	// runnerStopped: exit 103, stopped through its REST API: the operator did that, so such a
	// runner is never the cause of a failure, only a witness of one.
	runnerStopped
	// runnerFailed: k6, or the wait to reach the target before it, ended with an error of its own.
	runnerFailed
	// runnerOOMKilled: killed for exceeding its memory limit.
	runnerOOMKilled
	// runnerLost: its pod went away or was ended from outside (evicted, deleted, signalled).
	runnerLost
)

var runnerClassNames = map[runnerClass]string{
	runnerNoJob: "no Job", runnerNoPod: "no pod", runnerPending: "pending", runnerReady: "ready",
	runnerSucceeded: "succeeded", runnerStopped: "stopped", runnerFailed: "failed",
	runnerOOMKilled: "OOM-killed", runnerLost: "lost",
}

func (c runnerClass) String() string { return runnerClassNames[c] }

// ended: the runner will do nothing more.
func (c runnerClass) ended() bool { return c >= runnerSucceeded }

// k6 exit codes (k6 v2.2.0, errext/exitcodes).
const (
	exitThresholdsFailed = 99
	exitStopped          = 103
	exitExternalAbort    = 105
	exitScriptAborted    = 108
	exitMarkedAsFailed   = 110
)

// k6ExitMeaning names k6's exit codes, and the runner binary's own, for messages.
var k6ExitMeaning = map[int32]string{
	measure.ExitTargetUnreachable: "could not reach the target, so k6 never started",
	exitThresholdsFailed:          "thresholds failed on this runner's share",
	100:                           "setup() timed out",
	101:                           "teardown() timed out",
	102:                           "timed out",
	exitStopped:                   "stopped through the REST API",
	104:                           "invalid k6 configuration",
	exitExternalAbort:             "aborted from outside (SIGTERM or SIGINT)",
	106:                           "could not start its REST API",
	107:                           "script error",
	exitScriptAborted:             "aborted by the script (test.abort())",
	109:                           "k6 panicked",
	exitMarkedAsFailed:            "marked as failed by the script (test.fail())",
}

// imageMissing are waiting reasons that no amount of waiting fixes.
var imageMissing = map[string]bool{"ErrImageNeverPull": true, "InvalidImageName": true}

// runnerView is one classified runner.
type runnerView struct {
	runnerState
	class runnerClass
	// why says, for a runner not Ready or ended, what the scheduler, the kubelet or k6 said.
	why string
	// unschedulable: the scheduler found no node for its pod.
	unschedulable bool
	// imageProblem: its image is not on the node and will not be pulled.
	imageProblem string
	// markedFailed: the script called test.fail(); the runner's results are whole, the verdict is not PASSED.
	markedFailed bool
	// scriptAborted: the script called test.abort(); its results are whole up to there, the
	// verdict is not PASSED, and the rest of the fleet stops as one k6 process would.
	scriptAborted bool
}

// name is the pod's name, or the runner's number before it has one.
func (v runnerView) name() string {
	if v.pod != nil {
		return v.pod.Name
	}
	return fmt.Sprintf("runner %d", v.index)
}

// classifyRunner decides what one runner is doing, from its Job and pod alone.
func classifyRunner(rs runnerState) runnerView {
	v := runnerView{runnerState: rs}
	switch pod := rs.pod; {
	case rs.job == nil && pod == nil:
		v.class = runnerNoJob
	case pod == nil:
		if why := jobFailed(rs.job); why != "" {
			v.class, v.why = runnerLost, fmt.Sprintf("runner %d was lost: %s", rs.index, why)
			return v
		}
		v.class, v.why = runnerNoPod, fmt.Sprintf("runner %d has no pod yet (kubectl describe job %s shows why, e.g. a ResourceQuota)", rs.index, rs.job.Name)
	case terminated(pod):
		classifyEnded(&v)
	case rs.deleting && clean(rs.final) == nil:
		v.class, v.why = runnerLost, fmt.Sprintf("runner %s was lost: its pod is being deleted", pod.Name)
	case clean(rs.final) != nil:
		// k6 stopped its outputs with no test error: what exit 0 will say once pod status has it.
		v.class, v.why = runnerSucceeded, fmt.Sprintf("runner %s ended and handed over its final results", pod.Name)
	default:
		v.imageProblem = imageProblem(pod)
		if v.imageProblem == "" {
			v.imageProblem = rs.pullGaveUp
		}
		v.class = runnerPending
		if podReady(pod) {
			v.class = runnerReady
			return v
		}
		c := podCondition(pod, corev1.PodScheduled)
		v.unschedulable = c != nil && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable
		v.why = "runner " + pod.Name + " is not Ready"
		if why := pendingWhy(pod); why != "" {
			v.why += " (" + why + ")"
		}
	}
	return v
}

// classifyEnded classifies a runner whose pod ended, by its init step, then k6's exit code.
func classifyEnded(v *runnerView) {
	pod := v.pod
	v.why = fmt.Sprintf("runner %s %s", pod.Name, terminationText(pod))
	for _, cs := range pod.Status.InitContainerStatuses {
		if t := cs.State.Terminated; t != nil && t.ExitCode != 0 {
			v.class = runnerFailed
			return
		}
	}
	exit, reason := exitOf(pod)
	switch {
	case reason == "OOMKilled":
		v.class = runnerOOMKilled
		v.why = fmt.Sprintf("runner %s was killed for exceeding its memory limit; raise spec.runner.resources.limits.memory or spec.parallelism", pod.Name)
	case exit == -1:
		v.class = runnerLost // evicted, or deleted with its node: no container state
		v.why = fmt.Sprintf("runner %s was lost: %s", pod.Name, terminationText(pod))
	case exit == 0 || exit == exitThresholdsFailed:
		// 99: k6 judged only this runner's share; fleetbench judges the merged data.
		v.class = runnerSucceeded
	case exit == exitMarkedAsFailed:
		v.class, v.markedFailed = runnerSucceeded, true
	case exit == exitScriptAborted:
		v.class, v.scriptAborted = runnerSucceeded, true
	case exit == exitStopped:
		v.class = runnerStopped
	case exit == exitExternalAbort || killedBySignal(exit):
		// SIGTERM reached k6 (105), or a signal killed it (128+n): someone ended the pod.
		v.class = runnerLost
		v.why = fmt.Sprintf("runner %s was lost: %s", pod.Name, terminationText(pod))
	default:
		v.class = runnerFailed
	}
}

// runnerSummary is every runner classified once, and counted.
type runnerSummary struct {
	views  []runnerView
	counts map[runnerClass]int
}

func classify(rs []runnerState) runnerSummary {
	s := runnerSummary{counts: map[runnerClass]int{}}
	for _, r := range rs {
		v := classifyRunner(r)
		if r.afterLoss && (v.class == runnerLost || v.class == runnerOOMKilled) {
			v.class = runnerStopped // its gap says what the results miss
		}
		s.views = append(s.views, v)
		s.counts[v.class]++
	}
	return s
}

// active counts the runners that have not ended.
func (s runnerSummary) active() int {
	n := 0
	for c, k := range s.counts {
		if !c.ended() {
			n += k
		}
	}
	return n
}

// first is the first runner of one of these classes.
func (s runnerSummary) first(classes ...runnerClass) (runnerView, bool) {
	return s.firstWith(func(v runnerView) bool { return slices.Contains(classes, v.class) })
}

// notReady says, runner by runner, why the runners are not all Ready yet.
func (s runnerSummary) notReady() string {
	var parts []string
	waiting := 0
	for _, v := range s.views {
		if v.class == runnerNoJob || v.class == runnerNoPod || v.class == runnerPending {
			waiting++
			if len(parts) < maxNamedRunners {
				parts = append(parts, v.why)
			}
		}
	}
	msg := strings.Join(parts, "; ")
	if waiting > len(parts) {
		msg = fmt.Sprintf("%d of %d runners are not Ready: %s; and %d more", waiting, len(s.views), msg, waiting-len(parts))
	}
	return msg
}

// maxNamedRunners bounds how many runners one message names: a few dozen runners' reasons
// would overflow status.message, and the API server refuses the whole status patch then.
const maxNamedRunners = 5

// status is status.runners, rebuilt from the world.
func (s runnerSummary) status(startSkew string) *v1alpha1.RunnerCounts {
	c := &v1alpha1.RunnerCounts{Desired: int32(len(s.views)), StartSkew: startSkew}
	for _, v := range s.views {
		switch v.class {
		case runnerSucceeded:
			c.Succeeded++
		case runnerStopped, runnerFailed, runnerOOMKilled, runnerLost:
			c.Failed++
		case runnerReady:
			c.Running++
			c.Ready++
		case runnerPending:
			if v.pod.Status.Phase == corev1.PodRunning {
				c.Running++
			}
		}
	}
	return c
}

// failure is why a run ends Failed: a reason constant and a message that says what to do.
type failure struct {
	reason, message string
}

// beforeStartFailure is the failure the runners show before the start, if any: a missing image
// or a runner that ended (k6 never exits 0 while paused, so exit 0 means an earlier reconcile
// started it and its status write was lost; that one is not a failure).
func (s runnerSummary) beforeStartFailure() *failure {
	if v, ok := s.firstWith(func(v runnerView) bool { return v.imageProblem != "" }); ok {
		return &failure{v1alpha1.ReasonRunnerImageNotPresent,
			fmt.Sprintf("runner %s: %s; import the runner image or set spec.runner.image", v.name(), v.imageProblem)}
	}
	if v, ok := s.first(runnerStopped, runnerFailed, runnerOOMKilled, runnerLost); ok {
		return &failure{v1alpha1.ReasonRunnerFailedBeforeStart, "runner ended before the start: " + v.why}
	}
	return nil
}

// notReadyFailure is the failure of runners still not Ready at their deadline.
func (s runnerSummary) notReadyFailure() *failure {
	reason := v1alpha1.ReasonRunnersNotReady
	if _, ok := s.firstWith(func(v runnerView) bool { return v.unschedulable }); ok {
		reason = v1alpha1.ReasonRunnerUnschedulable
	} else if _, ok := s.first(runnerNoJob, runnerNoPod); ok {
		reason = v1alpha1.ReasonRunnerNotCreated
	}
	return &failure{reason, s.notReady() + "; raise spec.timeouts.runnersReady, free capacity or quota, or lower spec.parallelism"}
}

// separateFailure is the failure of a spec.separate run the cluster cannot place: a runner is
// unschedulable and fewer nodes can take runners than there are runners. Waiting would not help.
func (s runnerSummary) separateFailure(separate bool, schedulableNodes int) *failure {
	if !separate || schedulableNodes >= len(s.views) {
		return nil
	}
	v, ok := s.firstWith(func(v runnerView) bool { return v.unschedulable })
	if !ok {
		return nil
	}
	return &failure{v1alpha1.ReasonRunnerUnschedulable, fmt.Sprintf(
		"spec.separate puts each of the %d runners on its own node, but the cluster has %d schedulable nodes (runner %s: %s); "+
			"lower spec.parallelism to %d, add nodes, or unset spec.separate", len(s.views), schedulableNodes, v.name(), v.why, schedulableNodes)}
}

// runFailure is the most telling failure among runners after the start: an OOM kill, a lost
// runner, then a runner's own error. Stopped runners and exit 99 are never a cause.
func (s runnerSummary) runFailure() *failure {
	if v, ok := s.first(runnerOOMKilled); ok {
		return &failure{v1alpha1.ReasonRunnerOOMKilled, v.why}
	}
	if v, ok := s.first(runnerLost); ok {
		return &failure{v1alpha1.ReasonRunnerLost, v.why}
	}
	if v, ok := s.first(runnerFailed); ok {
		return &failure{v1alpha1.ReasonRunnerFailed, v.why}
	}
	return nil
}

func (s runnerSummary) firstWith(match func(runnerView) bool) (runnerView, bool) {
	for _, v := range s.views {
		if match(v) {
			return v, true
		}
	}
	return runnerView{}, false
}
