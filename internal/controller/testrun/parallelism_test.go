package testrun

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/runners"
)

// TestParallelismAutoChoosesFromCalibratedCapacity: a first run of a script with no capacity
// known runs on one runner and keeps what it measured; the next auto run of that script in
// the namespace is sized from it, says so in status.parallelism, and has that many runner Jobs.
func TestParallelismAutoChoosesFromCalibratedCapacity(t *testing.T) {
	ns := setup(t)

	// The calibration: spec.load.devices without parallelism is auto; nothing is known yet.
	calib := tw.MakeTestRun("calib", ns).Devices(100, "1s").Duration("10s").Obj()
	k, pods := startRunning(t, calib, 1)
	got := waitPhase(t, calib, v1alpha1.PhaseRunning, "")
	if p := got.Status.Parallelism; p == nil || p.Chosen != 1 || p.Source != v1alpha1.ParallelismUncalibrated || !strings.Contains(p.Reason, "this run measures it") {
		t.Fatalf("calibration run's status.parallelism = %+v", p)
	}
	// 1000 iterations on 2 CPU-seconds: 500 iterations per core-second, 20% of its core.
	logs.set(pods[0], tw.EnvelopeLog(tw.RunnerLoad{Runner: pods[0].Name, Requests: 1000, Start: time.Now(), Duration: 10 * time.Second, CPUSeconds: 2}), nil)
	k.Finish(pods[0], 0, "Completed")
	waitPhase(t, calib, v1alpha1.PhaseSucceeded, v1alpha1.ReasonCompleted)
	var cm corev1.ConfigMap
	name := runners.CapacityRecordName(tw.DefaultScript, "")
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &cm); err != nil {
		t.Fatalf("the measured capacity was not kept: %v", err)
	}
	rec, err := runners.DecodeCapacityRecord([]byte(cm.Data[runners.CapacityRecordKey]))
	if err != nil || rec.IterationsPerCoreSecond != 500 || rec.Run != "calib" || rec.GeneratorBound || len(cm.OwnerReferences) != 0 {
		t.Fatalf("kept record %+v (%v), owners %v", rec, err, cm.OwnerReferences)
	}

	// 2000 iterations/s on runners of one core: 500 × 1 × 70% = 350 per runner, so 6 runners.
	sized := tw.MakeTestRun("sized", ns).Devices(2000, "1s").Duration("10s").Runner(&v1alpha1.RunnerSpec{
		Resources: &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}).Obj()
	sized.Spec.Parallelism = autoParallelism()
	create(t, sized)
	k = newKubelet(t, sized)
	k.targetReady()
	jobs := k.jobs(6)
	got = waitPhase(t, sized, v1alpha1.PhaseStarting, "")
	p := got.Status.Parallelism
	if p == nil || p.Chosen != 6 || p.Source != v1alpha1.ParallelismFromCalibration {
		t.Fatalf("status.parallelism = %+v, want 6 from the calibration", p)
	}
	for _, want := range []string{"6 runners", "2000 iterations/s", "500 per core measured by calib", "1 cores", "70% CPU"} {
		if !strings.Contains(p.Reason, want) {
			t.Errorf("reason %q lacks %q", p.Reason, want)
		}
	}
	for _, j := range jobs {
		if !strings.Contains(strings.Join(j.Spec.Template.Spec.Containers[0].Args, " "), "--execution-segment") {
			t.Errorf("runner Job %s has no execution segment of the 6", j.Name)
		}
	}
	k.runnersReady(len(jobs))
	got = waitPhase(t, sized, v1alpha1.PhaseRunning, "")
	if got.Status.Runners == nil || got.Status.Runners.Desired != 6 || got.Status.Parallelism.Chosen != 6 {
		t.Errorf("runners %+v, parallelism %+v", got.Status.Runners, got.Status.Parallelism)
	}
}

// TestGeneratorBoundRunSaysHowFarToGrow: runners that ended at 98% of their CPU say, in
// status.parallelism.suggested and the run's message, about how many runners the load needs.
func TestGeneratorBoundRunSaysHowFarToGrow(t *testing.T) {
	ns := setup(t)
	run := tw.MakeTestRun("bound", ns).Parallelism(2).Devices(200, "1s").Duration("10s").Obj()
	k, pods := startRunning(t, run, 2)
	start := time.Now()
	for _, pod := range pods {
		logs.set(pod, tw.EnvelopeLog(tw.RunnerLoad{Runner: pod.Name, Requests: 1000, Start: start, Duration: 10 * time.Second, CPUSeconds: 9.8}), nil)
		k.Finish(pod, 0, "Completed")
	}
	got := waitPhase(t, run, v1alpha1.PhaseSucceeded, "")
	p := got.Status.Parallelism
	// 2 runners × 98% / 70% = 2.8: about 3.
	if p == nil || p.Chosen != 2 || p.Source != v1alpha1.ParallelismFromSpec || p.Suggested != 3 {
		t.Fatalf("status.parallelism = %+v, want chosen 2 from spec, suggested 3", p)
	}
	const advice = "generator-bound: raise parallelism to about 3 (from 2)"
	if !got.Status.GeneratorBound || !strings.Contains(got.Status.GeneratorBoundReason, advice) || !strings.Contains(got.Status.Message, advice) {
		t.Errorf("generatorBound %v reason %q message %q, want the advice %q", got.Status.GeneratorBound, got.Status.GeneratorBoundReason, got.Status.Message, advice)
	}
}

func autoParallelism() *intstr.IntOrString {
	v := intstr.FromString(v1alpha1.ParallelismAuto)
	return &v
}
