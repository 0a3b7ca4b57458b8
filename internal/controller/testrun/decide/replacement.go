package decide

import (
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/judge"
	"fleetbench.dev/fleetbench/pkg/naming"
	"fleetbench.dev/fleetbench/pkg/runners"
)

// ReplacementPlan is a replacement decided in this reconcile, for createRunnerJobs.
type ReplacementPlan struct {
	K         int
	ConfigMap string
}

// ReplacementOf is the replacement number a Job or pod carries; 0 for an original runner.
func ReplacementOf(o metav1.Object) int {
	k, err := strconv.Atoi(o.GetLabels()[naming.LabelReplacement])
	if err != nil || k < 0 || k > v1alpha1.MaxReplacementsLimit {
		return 0
	}
	return k
}

// Replaces says whether lost runners of this run are replaced.
func (s *Scope) Replaces() bool {
	return runners.LossPolicy(&s.Run.Spec, s.Run.RunnerCount()) == v1alpha1.RunnerLossReplace
}

// NoteLostPod keeps the pods status.gaps names, to tell when a lost runner is gone.
func (s *Scope) NoteLostPod(pod *corev1.Pod) {
	for _, g := range s.Run.Status.Gaps {
		// A pod of that name made after the loss is a look-alike, never the lost runner.
		if g.LostPod == pod.Name && pod.Labels[naming.LabelRunnerIndex] == strconv.Itoa(int(g.Runner)) && pod.CreationTimestamp.Before(&g.LostAt) {
			if s.LostPods == nil {
				s.LostPods = map[string]*corev1.Pod{}
			}
			s.LostPods[pod.Name] = pod
		}
	}
}

// MaxGaps is spec.runnerLoss.maxGaps; nil when unset.
func MaxGaps(spec *v1alpha1.TestRunSpec) *int32 {
	if spec.RunnerLoss == nil {
		return nil
	}
	return spec.RunnerLoss.MaxGaps
}

func (s *Scope) RecheckReplace(d time.Duration) {
	if d > 0 && (s.ReplaceRecheck == 0 || d < s.ReplaceRecheck) {
		s.ReplaceRecheck = d
	}
}

// GapsSummary says what results with gaps cover, for the Gapless condition and the verdict
// (judge.GapsSummary: the HTML report uses the same words).
func GapsSummary(gaps []v1alpha1.RunnerGap) string { return judge.GapsSummary(gaps, maxNamedRunners) }

// GapText is one gap in words, after a prefix taking the runner and the cause.
func GapText(g v1alpha1.RunnerGap, prefix string) string { return judge.GapText(g, prefix) }

// RecordGapless records the Gapless condition of a Replace run: True while no runner was
// replaced, False saying what the results cover once one was.
func (s *Scope) RecordGapless(gaps []v1alpha1.RunnerGap) {
	status, reason, msg := metav1.ConditionTrue, v1alpha1.ReasonNoGaps, "no runner was lost; the results cover the whole load"
	if len(gaps) > 0 {
		status, reason, msg = metav1.ConditionFalse, v1alpha1.ReasonRunnerReplaced, GapsSummary(gaps)
	}
	if c := s.Condition(v1alpha1.ConditionGapless); c != nil && c.Status == status && c.Message == msg {
		return
	}
	s.RecordCondition(v1alpha1.ConditionGapless, status, reason, msg)
}
