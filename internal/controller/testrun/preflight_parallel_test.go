package testrun

import (
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	"fleetbench.dev/fleetbench/internal/controller/testrun/provision"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/runners"
)

// waitCheckingScript waits until the run is held at the start for the pre-flight's verdict.
func waitCheckingScript(t *testing.T, run *v1alpha1.TestRun) *v1alpha1.TestRun {
	t.Helper()
	return waitPhase(t, run, v1alpha1.PhaseStarting, v1alpha1.ReasonCheckingScript)
}

// notStarted fails the test if anything of the start happened: setup(), a start signal, the
// Started condition or a start time.
func notStarted(t *testing.T, run *v1alpha1.TestRun) {
	t.Helper()
	got := &v1alpha1.TestRun{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(run), got); err != nil {
		t.Fatal(err)
	}
	setups, _, _, _ := runner.calls(run.Namespace)
	if n := runner.resumes(run.Namespace); n != 0 || setups != 0 {
		t.Errorf("%d start signals and %d setup() calls before the pre-flight's verdict", n, setups)
	}
	if meta.IsStatusConditionTrue(got.Status.Conditions, v1alpha1.ConditionStarted) || got.Status.StartTime != nil || got.Status.Phase == v1alpha1.PhaseRunning {
		t.Errorf("phase %s, startTime %v: started before the pre-flight's verdict", got.Status.Phase, got.Status.StartTime)
	}
}

// The pre-flight is off the path to the first request: while it has no verdict, the target is
// provisioned and the runner Jobs are created (and their pods may come up paused), but nothing
// starts; its pass starts the load at once.
func TestPreflightRunsAlongsideProvisioning(t *testing.T) {
	ns := setup(t)
	run := tw.MakeTestRun("alongside", ns).Parallelism(3).Annotation(manualPreflight, "true").Obj()
	create(t, run)
	k := newKubelet(t, run)
	job := k.preflightJob()
	// With no pre-flight pod at all, the target and the runners come up.
	k.targetReady()
	k.runnersReady(3)
	got := waitCheckingScript(t, run)
	tw.WantConditions(t, got, map[string]string{
		v1alpha1.ConditionTargetReady:   "True/Ready",
		v1alpha1.ConditionRunnersReady:  "True/Ready",
		v1alpha1.ConditionScriptChecked: "False/" + v1alpha1.ReasonCheckingScript,
	})
	if !strings.Contains(got.Status.Message, "once k6 run accepted the test") {
		t.Errorf("message %q does not say the load waits for the pre-flight", got.Status.Message)
	}
	// Held, not just slow: a few reconciles later (the runners' pod updates wake it) still nothing.
	for range 10 {
		notStarted(t, run)
		time.Sleep(100 * time.Millisecond)
	}

	if err := preflightPod(k.ctx, env.Client, job, 0, ""); err != nil {
		t.Fatal(err)
	}
	waitPhase(t, run, v1alpha1.PhaseRunning, v1alpha1.ReasonRunning)
	setups, _, _, _ := runner.calls(ns)
	if n := runner.resumes(ns); n != 3 || setups != 1 {
		t.Errorf("after the pass: %d start signals, %d setup() calls; want 3 and 1", n, setups)
	}
}

// A pre-flight refusal that comes after provisioning began ends the run ScriptInvalid with k6's
// words, deletes the runner Jobs (none started) and releases the target at once, also under
// KeepUntilDeleted: the target never saw a request and holds nothing to inspect.
func TestPreflightRefusalAfterProvisioningReleasesAll(t *testing.T) {
	for _, policy := range []v1alpha1.TargetCleanupPolicy{v1alpha1.TargetDeleteAfterRun, v1alpha1.TargetKeepUntilDeleted} {
		t.Run(string(policy), func(t *testing.T) {
			ns := setup(t)
			run := tw.MakeTestRun("refused", ns).Parallelism(3).Cleanup(policy).Annotation(manualPreflight, "true").Obj()
			create(t, run)
			k := newKubelet(t, run)
			job := k.preflightJob()
			k.targetReady()
			k.runnersReady(3)
			waitCheckingScript(t, run)

			log := `time="2026-11-23T14:15:30Z" level=error msg="could not initialize 'test.js': file:///fleetbench/script/test.js: Line 4:35 Unexpected token ;"`
			if err := preflightPod(k.ctx, env.Client, job, provision.ExitScriptException, log); err != nil {
				t.Fatal(err)
			}
			got := waitPhase(t, run, v1alpha1.PhaseFailed, v1alpha1.ReasonScriptInvalid)
			if err := saysAll(got.Status.Message, []string{"k6 could not load the script", "Line 4:35 Unexpected token"}); err != nil {
				t.Error(err)
			}
			tw.WantConditions(t, got, map[string]string{v1alpha1.ConditionScriptChecked: "False/" + v1alpha1.ReasonScriptInvalid})
			notStarted(t, run)
			eventually(t, "the runner Jobs deleted and the target released", func() error {
				var jobs batchv1.JobList
				if err := env.Client.List(ctx, &jobs, client.InNamespace(ns), client.MatchingLabels(runners.RunnerLabels(run))); err != nil {
					return err
				}
				for _, j := range jobs.Items {
					if j.DeletionTimestamp.IsZero() {
						return fmt.Errorf("runner Job %s outlived the refusal", j.Name)
					}
				}
				target := &corev1.Namespace{}
				// envtest has no namespace controller: a deleted namespace stays Terminating.
				err := env.Client.Get(ctx, client.ObjectKey{Name: k.targetNS()}, target)
				if err == nil && target.DeletionTimestamp.IsZero() {
					return fmt.Errorf("target namespace %s not deleted", k.targetNS())
				}
				return client.IgnoreNotFound(err)
			})
		})
	}
}

// The verdict is read from the pre-flight's k6 container as soon as it ended: the kubelet
// reports the pod's phase Succeeded or Failed only after it stopped the pod's sandbox, about a
// second later, on the path to the first request.
func TestPreflightVerdictFromTheEndedContainer(t *testing.T) {
	for _, tc := range []struct {
		name  string
		exit  int32
		check func(t *testing.T, run *v1alpha1.TestRun)
	}{
		{"passed", 0, func(t *testing.T, run *v1alpha1.TestRun) {
			eventually(t, "the script checked", func() error {
				got := &v1alpha1.TestRun{}
				if err := env.Client.Get(ctx, client.ObjectKeyFromObject(run), got); err != nil {
					return err
				}
				if !meta.IsStatusConditionTrue(got.Status.Conditions, v1alpha1.ConditionScriptChecked) {
					return fmt.Errorf("ScriptChecked %+v", meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionScriptChecked))
				}
				return nil
			})
		}},
		{"refused", provision.ExitScriptException, func(t *testing.T, run *v1alpha1.TestRun) {
			waitPhase(t, run, v1alpha1.PhaseFailed, v1alpha1.ReasonScriptInvalid)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := setup(t)
			run := tw.MakeTestRun("ended-"+tc.name, ns).Annotation(manualPreflight, "true").Obj()
			create(t, run)
			k := newKubelet(t, run)
			job := k.preflightJob()
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: job.Name + "-pod", Namespace: ns, Labels: job.Spec.Template.Labels,
					OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: job.Name, UID: job.UID, Controller: ptr.To(true)}}},
				Spec: job.Spec.Template.Spec,
			}
			if err := env.Client.Create(ctx, pod); err != nil {
				t.Fatal(err)
			}
			// The container ended; the pod is still Running while its sandbox is stopped.
			pod.Status.Phase = corev1.PodRunning
			pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: runners.ContainerName, State: corev1.ContainerState{
				Terminated: &corev1.ContainerStateTerminated{ExitCode: tc.exit, Reason: "Completed", FinishedAt: metav1.Now(),
					Message: `level=error msg="could not initialize 'test.js': Line 1:1 Unexpected token"`}}}}
			if err := env.Client.Status().Update(ctx, pod); err != nil {
				t.Fatal(err)
			}
			tc.check(t, run)
		})
	}
}

func TestPreflightEnded(t *testing.T) {
	ended := corev1.ContainerStatus{Name: runners.ContainerName, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{}}}
	running := corev1.ContainerStatus{Name: runners.ContainerName, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
	other := corev1.ContainerStatus{Name: "sidecar", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{}}}
	pod := func(phase corev1.PodPhase, cs ...corev1.ContainerStatus) *corev1.Pod {
		return &corev1.Pod{Status: corev1.PodStatus{Phase: phase, ContainerStatuses: cs}}
	}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want bool
	}{
		{"k6 ended, pod still Running", pod(corev1.PodRunning, ended), true},
		{"pod Succeeded", pod(corev1.PodSucceeded), true},
		{"pod Failed", pod(corev1.PodFailed), true},
		{"k6 running", pod(corev1.PodRunning, running), false},
		{"another container ended", pod(corev1.PodRunning, other, running), false},
		{"pending", pod(corev1.PodPending), false},
	} {
		if got := provision.PreflightEnded(tc.pod); got != tc.want {
			t.Errorf("%s: preflightEnded = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// Only a refusing pre-flight keeps its Job once a run ended before its start: one still
// checking, one that passed in the reconcile the run failed, and a run that never recorded
// the condition all let deletePreflightUnlessRefused delete it.
func TestRefusedBy(t *testing.T) {
	checked := func(status metav1.ConditionStatus, reason string) []metav1.Condition {
		return []metav1.Condition{{Type: v1alpha1.ConditionScriptChecked, Status: status, Reason: reason}}
	}
	for _, tc := range []struct {
		name       string
		conditions []metav1.Condition
		want       bool
	}{
		{"no condition", nil, false},
		{"still checking", checked(metav1.ConditionFalse, v1alpha1.ReasonCheckingScript), false},
		{"passed", checked(metav1.ConditionTrue, v1alpha1.ReasonLoaded), false},
		{"refused", checked(metav1.ConditionFalse, v1alpha1.ReasonScriptInvalid), true},
	} {
		if got := decide.RefusedBy(tc.conditions); got != tc.want {
			t.Errorf("%s: refusedBy = %v, want %v", tc.name, got, tc.want)
		}
	}
}
