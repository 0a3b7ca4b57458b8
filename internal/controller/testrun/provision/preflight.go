package provision

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	rc "fleetbench.dev/fleetbench/internal/controller/ctrlkit"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	"fleetbench.dev/fleetbench/pkg/measure"
	"fleetbench.dev/fleetbench/pkg/queue"
	"fleetbench.dev/fleetbench/pkg/queue/place"
	"fleetbench.dev/fleetbench/pkg/runners"
)

// preflight is what the pre-flight pod says about the test.
type preflight struct {
	passed bool
	// report is k6's plan, when the passed check left it in its termination message.
	report *measure.CheckReport
	// failReason and failMessage end the run; waiting says why it is not done yet.
	failReason, failMessage string
	waiting                 string
}

// k6's exit codes for a test it refuses before running it (k6 errext/exitcodes): -1 is k6's
// generic error, which k6 gives flags and arguments it cannot parse.
const (
	exitInvalidConfig   = 104
	ExitScriptException = 107
	exitK6Generic       = 255
)

// judgePreflight reads the pre-flight Job and its pod: `fleetbench-runner check` exits 0 when
// k6 run accepted the test, with its plan in the termination message, and k6's own code and
// error (in the termination message) when k6 run refuses it.
func judgePreflight(job *batchv1.Job, pods []corev1.Pod) preflight {
	for i := range pods {
		pod := &pods[i]
		exit, _ := decide.ExitOf(pod)
		switch {
		case !PreflightEnded(pod):
			if img := decide.ImageProblem(pod); img != "" {
				return preflight{failReason: v1alpha1.ReasonRunnerImageNotPresent, failMessage: "the script pre-flight cannot start: " + img}
			}
			why := "the script pre-flight pod " + pod.Name + " is running k6 run's checks"
			if w := decide.PendingWhy(pod); w != "" {
				why += " (" + w + ")"
			}
			return preflight{waiting: why}
		case exit == 0:
			p := preflight{passed: true}
			if r, ok := measure.ParseCheckReport(decide.TerminatedMessage(pod)); ok {
				p.report = &r
			}
			return p
		default:
			if reason, msg := refusal(exit, decide.K6Errors(decide.TerminatedMessage(pod))); reason != "" {
				return preflight{failReason: reason, failMessage: msg}
			}
			return preflight{failReason: v1alpha1.ReasonRunnerFailedBeforeStart,
				failMessage: "the script pre-flight (k6 run's checks) " + decide.TerminationText(pod)}
		}
	}
	if why := decide.JobFailed(job); why != "" {
		return preflight{failReason: v1alpha1.ReasonRunnerFailedBeforeStart, failMessage: "the script pre-flight failed: " + why}
	}
	return preflight{waiting: "waiting for the script pre-flight pod (k6 run's checks) to be created"}
}

// refusal says why k6 run refused the test, from its exit code and error, and what to change;
// "" when k6 did not refuse it (the pod failed for another reason).
func refusal(exit int32, errs string) (reason, message string) {
	quote := func(what string) string {
		if errs == "" {
			return what
		}
		return what + ": " + errs
	}
	switch {
	case strings.Contains(errs, `unknown command "check"`):
		return v1alpha1.ReasonRunnerFailedBeforeStart, quote("the runner image has no pre-flight (fleetbench-runner check)") +
			"; use the operator's runner image, or build spec.runner.image on it"
	case missingModule(errs):
		return v1alpha1.ReasonScriptInvalid, quote("k6 run cannot load a module the script imports") +
			"; fix the import path (the script's other files must be in the same ConfigMap or volume), or for an extension " +
			"(k6/x/...) use a runner image built with it in spec.runner.image"
	case exit == exitInvalidConfig:
		return v1alpha1.ReasonScriptInvalid, quote("k6 run refuses the test's options") +
			"; change the script's options, spec.args or the runners' K6_* environment, as k6 run would need"
	case exit == ExitScriptException:
		return v1alpha1.ReasonScriptInvalid, quote("k6 could not load the script") +
			"; fix spec.script, or the environment its init code reads (spec.runner.env, envFrom, spec.args -e), and apply again"
	case exit == exitK6Generic && errs != "":
		return v1alpha1.ReasonScriptInvalid, quote("k6 run refuses its arguments") + "; fix spec.args (or spec.arguments)"
	}
	return "", ""
}

// missingModule says whether k6's error is an import it could not resolve: a file not in the
// script's ConfigMap or volume, or an extension not built into the image.
func missingModule(errs string) bool {
	for _, s := range []string{"couldn't be found on local disk", "unknown modules", "satisfy dependencies", "provision a k6 binary"} {
		if strings.Contains(errs, s) {
			return true
		}
	}
	return false
}

// recordSkippedSteps notes, for a fleet, the setup() and teardown() k6 run would skip with the
// test's flags, env, config and options: the operator then does not run them through runner 0.
func recordSkippedSteps(s *decide.Scope, report *measure.CheckReport) {
	run := s.Run
	if !runners.OnceForTheFleet(run.RunnerCount()) {
		return // a single runner's k6 honours its flags itself
	}
	noSetup, noTeardown := runners.OnceSteps(&run.Spec, report)
	if noSetup {
		s.RecordCondition(v1alpha1.ConditionSetupDone, metav1.ConditionFalse, v1alpha1.ReasonNotRequested,
			"setup() does not run: the test sets noSetup (--no-setup, K6_NO_SETUP, its config or options), as k6 run would honour it")
	}
	if noTeardown {
		s.RecordCondition(v1alpha1.ConditionTeardownDone, metav1.ConditionFalse, v1alpha1.ReasonNotRequested,
			"teardown() does not run: the test sets noTeardown (--no-teardown, K6_NO_TEARDOWN, its config or options), as k6 run would honour it")
	}
}

// ReconcilePreflight has k6 run check the test, so a syntax error, a missing import, bad
// options or bad flags fail the run in seconds with k6's words. It creates the pre-flight and
// records its verdict but does not wait for it: the target and the runners are provisioned
// meanwhile, off the path to the first request, and awaitPreflight holds the start (setup(),
// the start signal) until the verdict is in (see preflight_gate.go).
func (r *Stage) ReconcilePreflight(ctx context.Context, s *decide.Scope) (ctrl.Result, error) {
	run := s.Run
	if s.Started() || s.ConditionTrue(v1alpha1.ConditionScriptChecked) {
		// The verdict was loaded from status, so it is kept: the Job has nothing more to say.
		return ctrl.Result{}, r.deletePassedPreflight(ctx, s)
	}
	opts := r.RunnerJobOptions(s)
	opts.Admitted = place.PodSet(s.Admission(), queue.PodSetPreflight)
	job := runners.PreflightJob(run, opts)
	if err := controllerutil.SetControllerReference(run, job, r.Scheme); err != nil {
		return ctrl.Result{}, err
	}
	if err := rc.CreateOrGet(ctx, r.Client, job); err != nil {
		if apierrors.IsForbidden(err) || apierrors.IsInvalid(err) {
			s.Fail(v1alpha1.ReasonRunnerRejected, fmt.Sprintf("the script pre-flight Job %s was refused: %v", job.Name, err))
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if err := r.ReadUnseen(ctx, job); err != nil {
		return ctrl.Result{}, err
	}
	if !decide.ControlledBy(job, run.UID) {
		s.Fail(v1alpha1.ReasonRunnerRejected, fmt.Sprintf("a Job named %s exists in namespace %s that this TestRun does not own; "+
			"delete it, or give the TestRun another name", job.Name, run.Namespace))
		return ctrl.Result{}, nil
	}
	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.InNamespace(run.Namespace), client.MatchingLabels(runners.PreflightLabels(run))); err != nil {
		return ctrl.Result{}, err
	}
	// Only the pre-flight Job's own pod speaks for the script: labels anyone may copy.
	pods.Items = slices.DeleteFunc(pods.Items, func(p corev1.Pod) bool { return !decide.ControlledBy(&p, job.UID) })
	p := judgePreflight(job, pods.Items)
	switch {
	case p.failReason != "":
		// The condition says why too, instead of staying at "checking".
		s.RecordCondition(v1alpha1.ConditionScriptChecked, metav1.ConditionFalse, p.failReason, p.failMessage)
		s.Fail(p.failReason, p.failMessage)
		return ctrl.Result{}, nil
	case p.passed:
		msg := r.warnBeforeRun(ctx, s, pods.Items, "k6 run accepted the test: its flags parse, the script compiles, its imports resolve, its init code runs and its options make a plan")
		s.RecordCondition(v1alpha1.ConditionScriptChecked, metav1.ConditionTrue, v1alpha1.ReasonLoaded, msg)
		recordSkippedSteps(s, p.report)
		if p.report != nil {
			// The script's own plan: how long a run without spec.load lasts.
			if d, err := time.ParseDuration(p.report.TotalDuration); err == nil && d > 0 && d < 1<<62 {
				s.Decided.PlannedDuration = d.String()
			}
		}
		if exportsHandleSummary(s.Script) {
			r.Recorder.Eventf(run, nil, corev1.EventTypeWarning, "HandleSummaryNotRun", "CheckScript", "%s", handleSummaryNotRun)
		}
		// The Job goes on a later reconcile, once the status holding the verdict is written: a
		// restart in between would otherwise find neither and check the script again.
		return ctrl.Result{}, nil
	}
	s.RecordCondition(v1alpha1.ConditionScriptChecked, metav1.ConditionFalse, v1alpha1.ReasonCheckingScript, p.waiting)
	if rc.Expired(s.Now, s.ProvisioningDeadline()) {
		s.Fail(v1alpha1.ReasonRunnerFailedBeforeStart, p.waiting+preflightTooLong(s))
	}
	// No verdict yet: the next phases provision meanwhile; the pod's end wakes the run.
	return ctrl.Result{}, nil
}

// handleSummaryNotRun says what happens to a script's handleSummary().
const handleSummaryNotRun = "the script exports handleSummary(), which fleetbench does not run: each runner sees only " +
	"its share, so runners run k6 with --summary-mode=disabled; the merged end-of-test numbers are in status.results"

var handleSummaryExport = regexp.MustCompile(`export\s+(async\s+)?function\s+handleSummary\b|export\s+(const|let|var)\s+handleSummary\b|export\s*\{[^}]*\bhandleSummary\b`)

// exportsHandleSummary says whether the script exports handleSummary (read from its text: k6
// inspect does not list a script's exports).
func exportsHandleSummary(script string) bool { return handleSummaryExport.MatchString(script) }
