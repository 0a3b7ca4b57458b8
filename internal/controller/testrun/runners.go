package testrun

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

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
	"fleetbench.dev/fleetbench/pkg/naming"
	"fleetbench.dev/fleetbench/pkg/runners"
	"fleetbench.dev/fleetbench/pkg/target"
)

// reconcileRunners creates the runner Jobs and waits until all are Ready and paused.
func (r *Reconciler) reconcileRunners(ctx context.Context, s *scope) (ctrl.Result, error) {
	if s.started() {
		return ctrl.Result{}, nil
	}
	if phase := s.phase(); phase == v1alpha1.PhasePending || phase == v1alpha1.PhaseProvisioning {
		s.enter(v1alpha1.PhaseStarting, v1alpha1.ReasonCreatingRunners, fmt.Sprintf(v1alpha1.MessageCreatingRunners, len(s.runners)))
	}
	if err := r.createRunnerJobs(ctx, s); err != nil || s.failure != nil {
		return ctrl.Result{}, err
	}
	if f := s.summary.beforeStartFailure(); f != nil {
		s.failure = f
		return ctrl.Result{}, nil
	}
	if f, err := r.separateFailure(ctx, s); err != nil || f != nil {
		s.failure = f
		return ctrl.Result{}, err
	}
	answered, askAgain := r.k6AnsweredBeforeReady(s)
	if answered || s.summary.counts[runnerReady]+s.summary.counts[runnerSucceeded] == len(s.runners) {
		// Succeeded before the start: an earlier reconcile started it and its status write was lost.
		s.recordCondition(v1alpha1.ConditionRunnersReady, metav1.ConditionTrue, v1alpha1.ReasonReady, fmt.Sprintf("all %d runners are Ready and paused", len(s.runners)))
		return ctrl.Result{}, nil
	}
	msg := s.summary.notReady()
	s.recordCondition(v1alpha1.ConditionRunnersReady, metav1.ConditionFalse, v1alpha1.ReasonNotReady, msg)
	deadline := s.runnersReadyDeadline()
	if rc.Expired(s.now, deadline) {
		s.failure = s.summary.notReadyFailure()
		return ctrl.Result{}, nil
	}
	s.enter(v1alpha1.PhaseStarting, v1alpha1.ReasonWaitingForRunners, msg)
	if askAgain {
		return rc.After(k6AskInterval, deadline.Sub(s.now)), nil
	}
	return rc.WaitUntil(s.now, deadline, s.pullRecheck), nil
}

// separateFailure counts the nodes that can take a runner once a runner of a spec.separate run
// is unschedulable; nodes are read around the cache (it holds none), so only then.
func (r *Reconciler) separateFailure(ctx context.Context, s *scope) (*failure, error) {
	if !s.run.Spec.Separate || !slices.ContainsFunc(s.summary.views, func(v runnerView) bool { return v.unschedulable }) {
		return nil, nil
	}
	var nodes corev1.NodeList
	if err := r.apiReader.List(ctx, &nodes); err != nil {
		return nil, err
	}
	return s.summary.separateFailure(s.run.Spec.Separate, schedulableNodes(nodes.Items, s.run.Spec.Runner)), nil
}

// schedulableNodes counts the Ready nodes open to runners: not cordoned, matching the runners'
// nodeSelector, and without a NoSchedule or NoExecute taint they do not tolerate.
func schedulableNodes(nodes []corev1.Node, runner *v1alpha1.RunnerSpec) int {
	var selector map[string]string
	var tolerations []corev1.Toleration
	if runner != nil {
		selector, tolerations = runner.NodeSelector, runner.Tolerations
	}
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

// runnerJobOptions is what every runner Job, and the pre-flight, is built with.
func (r *Reconciler) runnerJobOptions(s *scope) runners.JobOptions {
	run := s.run
	var targetStarting time.Duration
	if !s.conditionTrue(v1alpha1.ConditionTargetReady) && run.Spec.Target.External == nil {
		targetStarting = max(s.provisioningDeadline().Sub(s.now), 0)
	}
	var env []corev1.EnvVar
	switch {
	case run.Spec.Target.External != nil:
		env = target.ExternalEnv(run.Spec.Target.External)
	case s.desired != nil:
		env = s.desired.Env
	}
	scriptCopy := ""
	if run.Spec.Script.ConfigMap != nil {
		scriptCopy = naming.ScriptCopyConfigMap(run.Name)
	}
	return runners.JobOptions{
		Image:           r.RunnerImage,
		ConfigMap:       naming.ScriptConfigMap(run.Name),
		ScriptCopy:      scriptCopy,
		HasConfig:       runners.HasConfig(&run.Spec, len(s.runners)),
		TargetEnv:       env,
		TargetNamespace: s.targetNS,
		TargetNodes:     targetNodes(s.targetPods),
		TargetStarting:  targetStarting,
		// The kubelet ends a runner the operator has lost track of.
		ActiveDeadlineSeconds: int64((targetStarting + runLength(run, s.timeouts) + s.timeouts.RunnersReady).Seconds()),
	}
}

// jobCreators bounds the runner Job creates in flight: a 1,000-runner fleet is created in
// parallel without queueing every request at once behind the client's rate limiter.
const jobCreators = 16

// createRunnerJobs creates, in parallel, the Jobs the cache does not show yet.
func (r *Reconciler) createRunnerJobs(ctx context.Context, s *scope) error {
	run := s.run
	opts := r.runnerJobOptions(s)
	errs := make([]error, len(s.runners))
	jobs := make([]*batchv1.Job, len(s.runners))
	slots := make(chan struct{}, jobCreators)
	var wg sync.WaitGroup
	for i := range s.runners {
		if s.runners[i].job != nil {
			continue
		}
		job := runners.Job(run, i, len(s.runners), opts)
		if p := s.runners[i].plan; p != nil {
			job = runners.ReplacementJob(run, i, len(s.runners), p.k, p.configMap, opts)
		}
		if err := controllerutil.SetControllerReference(run, job, r.scheme); err != nil {
			return err
		}
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			if errs[i] = rc.CreateOrGet(ctx, r.Client, job); errs[i] == nil {
				errs[i] = r.readUnseen(ctx, job)
				jobs[i] = job
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		switch {
		case err == nil && jobs[i] != nil && !controlledBy(jobs[i], run.UID):
			// The name is taken by a Job this run does not control: never adopt it.
			s.fail(v1alpha1.ReasonRunnerRejected, fmt.Sprintf("a Job named %s exists in namespace %s that this TestRun does not own; "+
				"delete it, or give the TestRun another name", jobs[i].Name, run.Namespace))
			return nil
		case err == nil:
			if jobs[i] != nil {
				s.runners[i].job = jobs[i]
			}
		case apierrors.IsForbidden(err) || apierrors.IsInvalid(err):
			s.fail(v1alpha1.ReasonRunnerRejected, fmt.Sprintf("runner Job %s was refused: %v", jobName(run.Name, s.runners[i]), err))
			return nil
		default:
			return err
		}
	}
	s.summary = classify(s.runners)
	return nil
}

// jobName is the name of runner rs's Job: the original's, or its replacement's.
func jobName(run string, rs runnerState) string {
	if rs.replacement > 0 {
		return naming.ReplacementJob(run, rs.index, rs.replacement)
	}
	return naming.RunnerJob(run, rs.index)
}

// targetNodes are the nodes the target's pods were scheduled to, sorted and each once.
func targetNodes(pods []corev1.Pod) []string {
	var nodes []string
	for i := range pods {
		if n := pods[i].Spec.NodeName; n != "" && !slices.Contains(nodes, n) {
			nodes = append(nodes, n)
		}
	}
	slices.Sort(nodes)
	return nodes
}
