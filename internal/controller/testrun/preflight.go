package testrun

import (
	"context"
	"fmt"
	"regexp"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	rc "fleetbench.dev/fleetbench/internal/controller/reconcile"
	"fleetbench.dev/fleetbench/pkg/runners"
)

// preflight is what the pre-flight pod says about the script.
type preflight struct {
	passed bool
	// failReason and failMessage end the run; waiting says why it is not done yet.
	failReason, failMessage string
	waiting                 string
}

// judgePreflight reads the pre-flight Job and its pod: k6 inspect exits 0 when it loaded the
// script, 107 (script error) or 104 (invalid options) when it could not, with k6's error in
// the pod's termination message.
func judgePreflight(job *batchv1.Job, pods []corev1.Pod) preflight {
	for i := range pods {
		pod := &pods[i]
		exit, _ := exitOf(pod)
		switch {
		case !terminated(pod):
			if img := imageProblem(pod); img != "" {
				return preflight{failReason: v1alpha1.ReasonRunnerImageNotPresent, failMessage: "the script pre-flight cannot start: " + img}
			}
			why := "the script pre-flight pod " + pod.Name + " is running k6 inspect"
			if w := pendingWhy(pod); w != "" {
				why += " (" + w + ")"
			}
			return preflight{waiting: why}
		case exit == 0:
			return preflight{passed: true}
		case exit == 107 || exit == 104:
			msg := "k6 could not load the script"
			if errs := k6Errors(terminatedMessage(pod)); errs != "" {
				msg += ": " + errs
			}
			return preflight{failReason: v1alpha1.ReasonScriptInvalid, failMessage: msg + "; fix spec.script and apply again"}
		default:
			return preflight{failReason: v1alpha1.ReasonRunnerFailedBeforeStart,
				failMessage: "the script pre-flight (k6 inspect) " + terminationText(pod)}
		}
	}
	if why := jobFailed(job); why != "" {
		return preflight{failReason: v1alpha1.ReasonRunnerFailedBeforeStart, failMessage: "the script pre-flight failed: " + why}
	}
	return preflight{waiting: "waiting for the script pre-flight pod (k6 inspect) to be created"}
}

// reconcilePreflight has k6 load the script before anything is provisioned, so a syntax error,
// a missing import or bad options fail the run in seconds with k6's words and line.
func (r *Reconciler) reconcilePreflight(ctx context.Context, s *scope) (ctrl.Result, error) {
	run := s.run
	if s.started() || meta.IsStatusConditionTrue(run.Status.Conditions, v1alpha1.ConditionScriptChecked) {
		return ctrl.Result{}, nil
	}
	for _, rs := range s.runners {
		if rs.job != nil {
			return ctrl.Result{}, nil // an earlier reconcile got past the pre-flight
		}
	}
	job := runners.PreflightJob(run, r.runnerJobOptions(s))
	if err := controllerutil.SetControllerReference(run, job, r.scheme); err != nil {
		return ctrl.Result{}, err
	}
	if err := rc.CreateOrGet(ctx, r.Client, job); err != nil {
		if apierrors.IsForbidden(err) || apierrors.IsInvalid(err) {
			s.fail(v1alpha1.ReasonRunnerRejected, fmt.Sprintf("the script pre-flight Job %s was refused: %v", job.Name, err))
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if err := r.readUnseen(ctx, job); err != nil {
		return ctrl.Result{}, err
	}
	if !controlledBy(job, run.UID) {
		s.fail(v1alpha1.ReasonRunnerRejected, fmt.Sprintf("a Job named %s exists in namespace %s that this TestRun does not own; "+
			"delete it, or give the TestRun another name", job.Name, run.Namespace))
		return ctrl.Result{}, nil
	}
	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.InNamespace(run.Namespace), client.MatchingLabels(runners.PreflightLabels(run))); err != nil {
		return ctrl.Result{}, err
	}
	// Only the pre-flight Job's own pod speaks for the script: labels anyone may copy.
	pods.Items = slices.DeleteFunc(pods.Items, func(p corev1.Pod) bool { return !controlledBy(&p, job.UID) })
	p := judgePreflight(job, pods.Items)
	switch {
	case p.failReason != "":
		s.fail(p.failReason, p.failMessage)
		return ctrl.Result{}, nil
	case p.passed:
		msg := r.warnBeforeRun(ctx, s, pods.Items, "k6 loaded the script: it compiles, its imports resolve and its options parse")
		setCondition(run, v1alpha1.ConditionScriptChecked, metav1.ConditionTrue, "Loaded", msg)
		if exportsHandleSummary(s.script) {
			r.recorder.Eventf(run, nil, corev1.EventTypeWarning, "HandleSummaryNotRun", "CheckScript", "%s", handleSummaryNotRun)
		}
		// The condition remembers the answer; the pod has nothing more to say.
		err := r.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground))
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	setCondition(run, v1alpha1.ConditionScriptChecked, metav1.ConditionFalse, v1alpha1.ReasonCheckingScript, p.waiting)
	deadline := s.provisioningDeadline()
	return r.waitOrFail(s, deadline, 0, v1alpha1.PhasePending, v1alpha1.ReasonCheckingScript, v1alpha1.ReasonRunnerFailedBeforeStart,
		p.waiting, fmt.Sprintf("; the pre-flight did not finish within spec.timeouts.provisioning (%s)", s.timeouts.Provisioning)), nil
}

// handleSummaryNotRun says what happens to a script's handleSummary().
const handleSummaryNotRun = "the script exports handleSummary(), which fleetbench does not run: each runner sees only " +
	"its share, so runners run k6 with --summary-mode=disabled; the merged end-of-test numbers are in status.results"

var handleSummaryExport = regexp.MustCompile(`export\s+(async\s+)?function\s+handleSummary\b|export\s+(const|let|var)\s+handleSummary\b|export\s*\{[^}]*\bhandleSummary\b`)

// exportsHandleSummary says whether the script exports handleSummary (read from its text: k6
// inspect does not list a script's exports).
func exportsHandleSummary(script string) bool { return handleSummaryExport.MatchString(script) }
