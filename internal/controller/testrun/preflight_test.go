package testrun

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/naming"
	"fleetbench.dev/fleetbench/pkg/runners"
)

// A k6 flag k6 run does not know reaches k6 in the pre-flight, which refuses it with k6's words
// before anything starts. The pre-flight runs alongside provisioning: what was provisioned
// meanwhile (the target namespace) is released at once, and no runner is left.
func TestBadFlagIsRefusedBeforeTheLoad(t *testing.T) {
	ns := setup(t)
	run := tw.MakeTestRun("bad-flag", ns).Parallelism(3).Args("--vuz", "3").Annotation(manualPreflight, "true").Obj()
	create(t, run)
	k := newKubelet(t, run)
	job := k.preflightJob()
	args := job.Spec.Template.Spec.Containers[0].Args
	if args[0] != runners.CheckCommand || args[1] != "run" || !slices.Contains(args, "--vuz") {
		t.Fatalf("pre-flight args %q: the pre-flight must be k6 run with every flag of spec.args", args)
	}
	if err := preflightPod(k.ctx, env.Client, job, 255, tw.K6Log("unknown flag: --vuz")); err != nil {
		t.Fatal(err)
	}
	got := waitPhase(t, run, v1alpha1.PhaseFailed, v1alpha1.ReasonScriptInvalid)
	for _, part := range []string{"unknown flag: --vuz", "fix spec.args"} {
		if !strings.Contains(got.Status.Message, part) {
			t.Errorf("message %q lacks %q", got.Status.Message, part)
		}
	}
	tw.WantConditions(t, got, map[string]string{v1alpha1.ConditionScriptChecked: "False/" + v1alpha1.ReasonScriptInvalid})
	notStarted(t, run)
	eventually(t, "the target released and no runner left", func() error {
		target := &corev1.Namespace{}
		// envtest has no namespace controller: a deleted namespace stays Terminating.
		err := env.Client.Get(ctx, client.ObjectKey{Name: naming.TargetNamespace(ns, run.Name)}, target)
		if err == nil && target.DeletionTimestamp.IsZero() {
			return fmt.Errorf("target namespace %s kept after the refusal", target.Name)
		}
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		var jobs batchv1.JobList
		if err := env.Client.List(ctx, &jobs, client.InNamespace(ns), client.MatchingLabels(runners.RunnerLabels(run))); err != nil {
			return err
		}
		for _, j := range jobs.Items {
			if j.DeletionTimestamp.IsZero() {
				return fmt.Errorf("runner Job %s kept after the refusal", j.Name)
			}
		}
		return nil
	})
}

// Runners given a flag k6 refuses end at once, as the pre-flight does; whichever pod ends first,
// the run waits for the pre-flight's verdict, which names the fix, instead of failing on the
// runner's exit code.
func TestPreflightVerdictOutranksARunnerThatEndedFirst(t *testing.T) {
	ns := setup(t)
	run := tw.MakeTestRun("bad-args", ns).Parallelism(2).Args("--vuz", "3").Annotation(manualPreflight, "true").Obj()
	create(t, run)
	k := newKubelet(t, run)
	job := k.preflightJob()
	k.targetReady()
	pods := k.runnersReady(2)
	k.Finish(pods[0], 255, "Error")
	// The runner's end wakes a reconcile, which says so and waits for the pre-flight.
	eventually(t, "the runner's end seen", func() error {
		got := &v1alpha1.TestRun{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(run), got); err != nil {
			return err
		}
		if got.Status.Phase == v1alpha1.PhaseFailed {
			t.Fatalf("failed on the runner's exit before the pre-flight's verdict: %s", got.Status.Message)
		}
		c := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionRunnersReady)
		if c == nil || !strings.Contains(c.Message, "waiting for the script pre-flight's verdict") {
			return fmt.Errorf("RunnersReady %+v", c)
		}
		return nil
	})
	waitCheckingScript(t, run)
	if err := preflightPod(k.ctx, env.Client, job, 255, tw.K6Log("unknown flag: --vuz")); err != nil {
		t.Fatal(err)
	}
	got := waitPhase(t, run, v1alpha1.PhaseFailed, v1alpha1.ReasonScriptInvalid)
	if err := saysAll(got.Status.Message, []string{"unknown flag: --vuz", "fix spec.args"}); err != nil {
		t.Error(err)
	}
}

// A script importing what the image does not have is ScriptInvalid, naming the module, and
// the ScriptChecked condition says so instead of staying at "checking". k6 is told not to
// try to build itself a binary from its vendor's service (a read-only pod, maybe no egress).
func TestMissingModuleIsScriptInvalid(t *testing.T) {
	ns := setup(t)
	run := tw.MakeTestRun("no-module", ns).Annotation(manualPreflight, "true").Obj()
	create(t, run)
	k := newKubelet(t, run)
	job := k.preflightJob()
	if !slices.ContainsFunc(job.Spec.Template.Spec.Containers[0].Env, func(e corev1.EnvVar) bool {
		return e.Name == "K6_AUTO_EXTENSION_RESOLUTION" && e.Value == "false"
	}) {
		t.Errorf("pre-flight env %v: k6 must not try to provision an extension", job.Spec.Template.Spec.Containers[0].Env)
	}
	if err := preflightPod(k.ctx, env.Client, job, 255, tw.K6Log(tw.K6MissingExtension)); err != nil {
		t.Fatal(err)
	}
	got := waitPhase(t, run, v1alpha1.PhaseFailed, v1alpha1.ReasonScriptInvalid)
	for _, part := range []string{"k6/x/faker", "spec.runner.image"} {
		if !strings.Contains(got.Status.Message, part) {
			t.Errorf("message %q lacks %q", got.Status.Message, part)
		}
	}
	tw.WantConditions(t, got, map[string]string{v1alpha1.ConditionScriptChecked: "False/" + v1alpha1.ReasonScriptInvalid})
}

// --no-teardown and --no-setup in spec.args hold across a fleet as in one k6 run: the operator,
// which runs them once for the fleet through runner 0, does not run them; runner 0 is still
// released from its linger and the run completes.
func TestNoSetupNoTeardownAcrossTheFleet(t *testing.T) {
	for _, tc := range []struct {
		flag             string
		setups, teardown int
		skipped          string
	}{
		{flag: "--no-teardown", setups: 1, skipped: v1alpha1.ConditionTeardownDone},
		{flag: "--no-setup", teardown: 1, skipped: v1alpha1.ConditionSetupDone},
	} {
		t.Run(tc.flag, func(t *testing.T) {
			ns := setup(t)
			run := tw.MakeTestRun("skip", ns).Parallelism(3).Devices(300, "10s").Duration("10s").Args(tc.flag).Obj()
			_, pods := startRunning(t, run, 3)
			start := time.Now()
			for _, pod := range pods[1:] {
				logs.set(pod, load(pod, start), nil)
				newKubelet(t, run).Finish(pod, 0, "Completed")
			}
			eventually(t, "runner 0 released", func() error {
				if _, _, releases, _ := runner.calls(ns); releases < 1 {
					return fmt.Errorf("releases %d", releases)
				}
				return nil
			})
			logs.set(pods[0], load(pods[0], start), nil)
			newKubelet(t, run).Finish(pods[0], 0, "Completed")
			got := waitPhase(t, run, v1alpha1.PhaseSucceeded, v1alpha1.ReasonCompleted)
			if setups, teardowns, _, _ := runner.calls(ns); setups != tc.setups || teardowns != tc.teardown {
				t.Errorf("setup ran %d times, teardown %d times; want %d and %d with %s", setups, teardowns, tc.setups, tc.teardown, tc.flag)
			}
			if c := meta.FindStatusCondition(got.Status.Conditions, tc.skipped); c == nil || c.Reason != v1alpha1.ReasonNotRequested || !strings.Contains(c.Message, tc.flag) {
				t.Errorf("condition %s = %+v, want %s naming %s", tc.skipped, c, v1alpha1.ReasonNotRequested, tc.flag)
			}
		})
	}
}
