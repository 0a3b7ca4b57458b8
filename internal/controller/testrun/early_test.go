package testrun

import (
	"fmt"
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/measure"
	"fleetbench.dev/fleetbench/pkg/runners"
)

// Runners are created while the target starts, once its pods have nodes (so they can keep off
// them): they wait to reach it as long as provisioning may still take, keep off its node, and
// go with the run when the target never gets Ready.
func TestRunnersStartWhileTheTargetStarts(t *testing.T) {
	ns := setup(t)
	run := tw.MakeTestRun("early", ns).Parallelism(2).Devices(20, "10s").Duration("10s").
		Timeouts(&v1alpha1.TimeoutsSpec{Provisioning: "10s"}).Obj()
	create(t, run)
	k := newKubelet(t, run)
	k.targetDeployments()
	if jobs := runnerJobs(t, run); len(jobs) != 0 {
		t.Fatalf("%d runner Jobs before the target's pod has a node, want none", len(jobs))
	}
	k.targetPodScheduled()
	jobs := k.jobs(2)
	got := &v1alpha1.TestRun{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(run), got); err != nil {
		t.Fatal(err)
	}
	if got.Status.Phase != v1alpha1.PhaseProvisioning {
		t.Errorf("phase %s with the target not Ready, want Provisioning", got.Status.Phase)
	}
	for _, job := range jobs {
		spec := job.Spec.Template.Spec
		var wait string
		for _, e := range spec.Containers[0].Env {
			if e.Name == measure.ReachTimeoutEnv {
				wait = e.Value
			}
		}
		// 10 s of provisioning left at most, plus the minute a runner may take to reach it.
		if d, err := time.ParseDuration(wait); err != nil || d <= time.Minute || d > time.Minute+10*time.Second {
			t.Errorf("%s: %s=%q, want more than 1m0s by what is left of provisioning: the target may take that long", job.Name, measure.ReachTimeoutEnv, wait)
		}
		terms := spec.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution
		if len(terms) != 1 || !slices.Equal(terms[0].Preference.MatchExpressions[0].Values, []string{"node-1"}) {
			t.Errorf("%s: preferred node affinity %+v, want away from the target's node-1", job.Name, terms)
		}
	}
	waitPhase(t, run, v1alpha1.PhaseFailed, v1alpha1.ReasonTargetNotReady)
	eventually(t, "the runner Jobs deleted with the failed run", func() error {
		if jobs := runnerJobs(t, run); len(jobs) != 0 {
			return fmt.Errorf("%d runner Jobs left", len(jobs))
		}
		return nil
	})
}

// runnerJobs are the run's runner Jobs not being deleted.
func runnerJobs(t *testing.T, run *v1alpha1.TestRun) []batchv1.Job {
	t.Helper()
	var list batchv1.JobList
	if err := env.Client.List(ctx, &list, client.InNamespace(run.Namespace), client.MatchingLabels(runners.RunnerLabels(run))); err != nil {
		t.Fatal(err)
	}
	return slices.DeleteFunc(list.Items, func(j batchv1.Job) bool { return !j.DeletionTimestamp.IsZero() })
}
