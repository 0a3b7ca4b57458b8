package provision

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/go-logr/logr"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	rc "fleetbench.dev/fleetbench/internal/controller/ctrlkit"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	"fleetbench.dev/fleetbench/pkg/naming"
	"fleetbench.dev/fleetbench/pkg/queue"
	"fleetbench.dev/fleetbench/pkg/queue/place"
	"fleetbench.dev/fleetbench/pkg/runners"
)

// ReconcileRunners creates the runner Jobs and waits until all are Ready and paused.
func (r *Stage) ReconcileRunners(ctx context.Context, s *decide.Scope) (ctrl.Result, error) {
	if s.Started() {
		return ctrl.Result{}, nil
	}
	if phase := s.Phase(); phase == v1alpha1.PhasePending || phase == v1alpha1.PhaseProvisioning {
		s.Enter(v1alpha1.PhaseStarting, v1alpha1.ReasonCreatingRunners, fmt.Sprintf(v1alpha1.MessageCreatingRunners, len(s.Runners)))
	}
	if err := r.CreateRunnerJobs(ctx, s); err != nil || s.Failure != nil {
		return ctrl.Result{}, err
	}
	if f := s.Summary.BeforeStartFailure(); f != nil {
		if f.Reason == v1alpha1.ReasonRunnerFailedBeforeStart && !s.ConditionTrue(v1alpha1.ConditionScriptChecked) {
			// The pre-flight runs the same k6 on the same script and arguments: its verdict names
			// the fix (spec.args, the script) where a runner's exit only shows the symptom, and
			// whichever pod ends first is a race. AwaitPreflight waits for it, within its deadline.
			s.RecordCondition(v1alpha1.ConditionRunnersReady, metav1.ConditionFalse, v1alpha1.ReasonNotReady,
				f.Message+"; waiting for the script pre-flight's verdict")
			return ctrl.Result{}, nil
		}
		s.Failure = f
		return ctrl.Result{}, nil
	}
	if f, err := r.SeparateFailure(ctx, s); err != nil || f != nil {
		s.Failure = f
		return ctrl.Result{}, err
	}
	answered, askAgain := r.k6AnsweredBeforeReady(s)
	if answered || s.Summary.Counts[decide.RunnerReady]+s.Summary.Counts[decide.RunnerSucceeded] == len(s.Runners) {
		// Succeeded before the start: an earlier reconcile started it and its status write was lost.
		s.RecordCondition(v1alpha1.ConditionRunnersReady, metav1.ConditionTrue, v1alpha1.ReasonReady, fmt.Sprintf("all %d runners are Ready and paused", len(s.Runners)))
		return ctrl.Result{}, nil
	}
	msg := s.Summary.NotReady()
	s.RecordCondition(v1alpha1.ConditionRunnersReady, metav1.ConditionFalse, v1alpha1.ReasonNotReady, msg)
	deadline := s.RunnersReadyDeadline()
	if rc.Expired(s.Now, deadline) {
		s.Failure = s.Summary.NotReadyFailure()
		return ctrl.Result{}, nil
	}
	s.Enter(v1alpha1.PhaseStarting, v1alpha1.ReasonWaitingForRunners, msg)
	if askAgain {
		return rc.After(k6AskInterval, deadline.Sub(s.Now)), nil
	}
	return rc.WaitUntil(s.Now, deadline, s.PullRecheck), nil
}

// SeparateFailure counts the nodes that can take a runner once a runner of a spec.separate run
// is unschedulable; nodes are read around the cache (it holds none), so only then.
func (r *Stage) SeparateFailure(ctx context.Context, s *decide.Scope) (*decide.Failure, error) {
	if !s.Run.Spec.Separate || !slices.ContainsFunc(s.Summary.Views, func(v decide.RunnerView) bool { return v.Unschedulable }) {
		return nil, nil
	}
	var nodes corev1.NodeList
	if err := r.APIReader.List(ctx, &nodes); err != nil {
		return nil, err
	}
	admitted := place.PodSet(s.Admission(), queue.PodSetRunners)
	return s.Summary.SeparateFailure(s.Run.Spec.Separate, schedulableNodes(nodes.Items, s.Run.Spec.Runner, admitted)), nil
}

// schedulableNodes counts the Ready nodes open to runners: not cordoned, matching the runners'
// nodeSelector (with their Kueue flavors' node labels), and without a NoSchedule or NoExecute
// taint they (or their flavors) do not tolerate.
func schedulableNodes(nodes []corev1.Node, runner *v1alpha1.RunnerSpec, admitted *v1alpha1.AdmittedPodSet) int {
	var pod corev1.PodSpec
	if runner != nil {
		pod.NodeSelector, pod.Tolerations = runner.NodeSelector, runner.Tolerations
	}
	place.Place(&pod, admitted)
	selector, tolerations := pod.NodeSelector, pod.Tolerations
	n := 0
	for i := range nodes {
		node := &nodes[i]
		ready := slices.ContainsFunc(node.Status.Conditions, func(c corev1.NodeCondition) bool {
			return c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue
		})
		matches := labels.SelectorFromSet(selector).Matches(labels.Set(node.Labels))
		tolerated := !slices.ContainsFunc(node.Spec.Taints, func(t corev1.Taint) bool {
			return t.Effect != corev1.TaintEffectPreferNoSchedule &&
				!slices.ContainsFunc(tolerations, func(tol corev1.Toleration) bool { return tol.ToleratesTaint(logr.Discard(), &t, true) })
		})
		if ready && matches && tolerated && !node.Spec.Unschedulable {
			n++
		}
	}
	return n
}

// jobCreators bounds the runner Job creates in flight: a 1,000-runner fleet is created in
// parallel without queueing every request at once behind the client's rate limiter.
const jobCreators = 16

// CreateRunnerJobs creates, in parallel, the Jobs the cache does not show yet.
func (r *Stage) CreateRunnerJobs(ctx context.Context, s *decide.Scope) error {
	run := s.Run
	opts := r.RunnerJobOptions(s)
	errs := make([]error, len(s.Runners))
	jobs := make([]*batchv1.Job, len(s.Runners))
	slots := make(chan struct{}, jobCreators)
	var wg sync.WaitGroup
	for i := range s.Runners {
		if s.Runners[i].Job != nil {
			continue
		}
		job := runners.Job(run, i, len(s.Runners), opts)
		if p := s.Runners[i].Plan; p != nil {
			job = runners.ReplacementJob(run, i, len(s.Runners), p.K, p.ConfigMap, opts)
		}
		if err := controllerutil.SetControllerReference(run, job, r.Scheme); err != nil {
			return err
		}
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			if errs[i] = rc.CreateOrGet(ctx, r.Client, job); errs[i] == nil {
				errs[i] = r.ReadUnseen(ctx, job)
				jobs[i] = job
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		switch {
		case err == nil && jobs[i] != nil && !decide.ControlledBy(jobs[i], run.UID):
			// The name is taken by a Job this run does not control: never adopt it.
			s.Fail(v1alpha1.ReasonRunnerRejected, fmt.Sprintf("a Job named %s exists in namespace %s that this TestRun does not own; "+
				"delete it, or give the TestRun another name", jobs[i].Name, run.Namespace))
			return nil
		case err == nil:
			if jobs[i] != nil {
				s.Runners[i].Job = jobs[i]
			}
		case apierrors.IsForbidden(err) || apierrors.IsInvalid(err):
			s.Fail(v1alpha1.ReasonRunnerRejected, fmt.Sprintf("runner Job %s was refused: %v", jobName(run.Name, s.Runners[i]), err))
			return nil
		default:
			return err
		}
	}
	s.Summary = decide.Classify(s.Runners)
	return nil
}

// jobName is the name of runner rs's Job: the original's, or its replacement's.
func jobName(run string, rs decide.RunnerState) string {
	if rs.Replacement > 0 {
		return naming.ReplacementJob(run, rs.Index, rs.Replacement)
	}
	return naming.RunnerJob(run, rs.Index)
}
