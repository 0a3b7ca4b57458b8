package testrun

import (
	"fmt"
	"maps"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
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
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/naming"
)

// lookAlike creates a pod with the runner's labels and spec, Running and Ready, controlled by
// owner (none when nil), serving log.
func lookAlike(t *testing.T, k *kubelet, job *batchv1.Job, name string, owner *batchv1.Job, log []byte) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: job.Namespace, Labels: maps.Clone(job.Spec.Template.Labels)},
		Spec: job.Spec.Template.Spec}
	if owner != nil {
		pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: owner.Name, UID: owner.UID, Controller: ptr.To(true)}}
	}
	if err := k.c.Create(k.ctx, pod); err != nil {
		t.Fatal(err)
	}
	setRunning(pod, 50)
	if err := k.c.Status().Update(k.ctx, pod); err != nil {
		t.Fatal(err)
	}
	logs.set(pod, log, nil)
	return pod
}

// TestLookAlikeRunnersAreIgnored: pods and a Job a tenant made with a runner's labels, Ready
// while the real runner is not even created, are never called nor read; the real runner is.
func TestLookAlikeRunnersAreIgnored(t *testing.T) {
	ns := setup(t)
	run := tw.MakeTestRun("lookalike", ns).Devices(100, "10s").Duration("10s").Obj()
	create(t, run)
	k := newKubelet(t, run)
	k.targetReady()
	job := &k.jobs(1)[0]

	// A Job of the tenant's with the runner's labels, and a pod it controls; a pod of no Job.
	labels := map[string]string{}
	for key, v := range job.Labels {
		if !strings.Contains(key, "controller-uid") && !strings.Contains(key, "job-name") {
			labels[key] = v
		}
	}
	foreign := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "imposter", Namespace: ns, Labels: labels},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "k6", Image: "busybox"}}}}}}
	if err := k.c.Create(k.ctx, foreign); err != nil {
		t.Fatal(err)
	}
	fake := tw.EnvelopeLog(tw.RunnerLoad{Runner: "imposter", Requests: 7, Start: time.Now()})
	imposters := []*corev1.Pod{
		lookAlike(t, k, job, "lookalike-orphan", nil, fake),
		lookAlike(t, k, job, "lookalike-foreign", foreign, fake),
	}

	// The manager saw them (their events came and went) and started nothing.
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		if n := runner.resumes(ns); n != 0 {
			t.Fatalf("%d resumes reached the look-alike pods", n)
		}
		time.Sleep(100 * time.Millisecond)
	}
	got := waitPhase(t, run, v1alpha1.PhaseStarting, "")
	if got.Status.StartTime != nil {
		t.Fatalf("started on look-alikes: %+v", got.Status)
	}

	pods := k.podsFor([]batchv1.Job{*job}, func(i int, pod *corev1.Pod) { setRunning(pod, i) })
	waitPhase(t, run, v1alpha1.PhaseRunning, "")
	logs.set(pods[0], load(pods[0], time.Now()), nil)
	k.Finish(pods[0], 0, "Completed")
	got = waitPhase(t, run, v1alpha1.PhaseSucceeded, v1alpha1.ReasonCompleted)
	if r := got.Status.Results; r == nil || r.Requests.Total != 100 {
		t.Errorf("results %+v, want the real runner's 100 requests", r)
	}
	runner.mu.Lock()
	defer runner.mu.Unlock()
	for _, pod := range imposters {
		if n, s := len(runner.resumed[key(pod)]), runner.stopped[key(pod)]; n+s != 0 {
			t.Errorf("look-alike %s was called: %d resumes, %d stops", pod.Name, n, s)
		}
	}
	if len(runner.resumed[key(pods[0])]) != 1 {
		t.Errorf("the real runner was resumed %d times, want once", len(runner.resumed[key(pods[0])]))
	}
}

// TestHostileEnvelopeFailsOnlyItsRun: a runner whose log ends in a small envelope built to
// take more memory decoded than any envelope may (it decoded into GiBs with dense histograms,
// and still takes 64 MiB to decode) fails its own run RunnerResultRejected; another tenant's
// run, collected at the same time, completes.
func TestHostileEnvelopeFailsOnlyItsRun(t *testing.T) {
	victimNS, attackerNS := setup(t), setup(t)
	victim := tw.MakeTestRun("victim", victimNS).Devices(100, "10s").Duration("10s").Obj()
	bomb := tw.MakeTestRun("bomb", attackerNS).Devices(100, "10s").Duration("10s").Obj()
	kv, victimPods := startRunning(t, victim, 1)
	kb, bombPods := startRunning(t, bomb, 1)

	logs.set(bombPods[0], tw.HostileEnvelopeLog(bombPods[0].Name, 60000), nil)
	logs.set(victimPods[0], load(victimPods[0], time.Now()), nil)
	kb.Finish(bombPods[0], 0, "Completed")
	kv.Finish(victimPods[0], 0, "Completed")

	got := waitPhase(t, bomb, v1alpha1.PhaseFailed, v1alpha1.ReasonRunnerResultRejected)
	if !strings.Contains(got.Status.Message, bombPods[0].Name) || !strings.Contains(got.Status.Message, "refused") {
		t.Errorf("message %q does not name the runner and the refusal", got.Status.Message)
	}
	ok := waitPhase(t, victim, v1alpha1.PhaseSucceeded, v1alpha1.ReasonCompleted)
	if r := ok.Status.Results; r == nil || r.Requests.Total != 100 {
		t.Errorf("victim's results %+v, want its 100 requests", r)
	}
}

// TestHostileEnvelopeRSS measures, when FLEETBENCH_MEASURE_RSS names a window count, this
// process's resident memory (the manager runs in it; the API server does not) idle and at its
// peak while a run whose runner left such an envelope is collected. A measurement, not a check.
func TestHostileEnvelopeRSS(t *testing.T) {
	windows, _ := strconv.Atoi(os.Getenv("FLEETBENCH_MEASURE_RSS"))
	if windows == 0 {
		t.Skip("set FLEETBENCH_MEASURE_RSS to a window count to measure")
	}
	ns := setup(t)
	bomb := tw.MakeTestRun("bomb", ns).Devices(100, "10s").Duration("10s").Obj()
	k, pods := startRunning(t, bomb, 1)
	log := tw.HostileEnvelopeLog(pods[0].Name, windows)
	logs.set(pods[0], log, nil)
	runtime.GC()
	debug.FreeOSMemory()
	// Writing 5 to clear_refs resets VmHWM, the peak, to the RSS now.
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Skip("cannot reset the peak RSS:", err)
	}
	idle := procStatus(t, "VmRSS")
	k.Finish(pods[0], 0, "Completed")
	got := waitPhaseAny(t, bomb)
	t.Logf("envelope %d KiB on the wire (%d windows): RSS idle %d MiB, peak while collecting %d MiB; ended %s %s",
		len(log)>>10, windows, idle>>10, procStatus(t, "VmHWM")>>10, got.Status.Phase, got.Status.Reason)
}

// waitPhaseAny waits for the run to end, either way.
func waitPhaseAny(t *testing.T, run *v1alpha1.TestRun) *v1alpha1.TestRun {
	got := &v1alpha1.TestRun{}
	eventually(t, "the run's end", func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(run), got); err != nil {
			return err
		}
		if !decide.IsFinished(got) {
			return fmt.Errorf("phase %s", got.Status.Phase)
		}
		return nil
	})
	return got
}

// procStatus is a field of /proc/self/status, in KiB.
func procStatus(t *testing.T, field string) int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			return n
		}
	}
	t.Skip("no " + field)
	return 0
}

// TestLookAlikePreflightPodIsIgnored: a pod with the pre-flight's labels that says k6 loaded
// the script speaks for nothing; the pre-flight Job's own pod does.
func TestLookAlikePreflightPodIsIgnored(t *testing.T) {
	ns := setup(t)
	run := tw.MakeTestRun("preflight", ns).Annotation(manualPreflight, "true").Obj()
	create(t, run)
	k := newKubelet(t, run)
	job := k.preflightJob()
	fake := job.DeepCopy()
	fake.Name, fake.UID = "not-the-preflight", "not-its-uid"
	if err := preflightPod(k.ctx, env.Client, fake, 0, ""); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		got := &v1alpha1.TestRun{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(run), got); err != nil {
			t.Fatal(err)
		}
		if meta.IsStatusConditionTrue(got.Status.Conditions, v1alpha1.ConditionScriptChecked) {
			t.Fatal("the look-alike pre-flight pod passed the script")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := preflightPod(k.ctx, env.Client, job, 0, ""); err != nil {
		t.Fatal(err)
	}
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
}

// TestForeignJobWithTheRunnersNameIsNotAdopted: a Job the tenant made under the name of a run's
// runner Job is never taken for it; the run fails saying so.
func TestForeignJobWithTheRunnersNameIsNotAdopted(t *testing.T) {
	ns := setup(t)
	run := tw.MakeTestRun("squatted", ns).Obj()
	foreign := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: naming.RunnerJob(run.Name, 0), Namespace: ns},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "k6", Image: "busybox"}}}}}}
	if err := env.Client.Create(ctx, foreign); err != nil {
		t.Fatal(err)
	}
	create(t, run)
	newKubelet(t, run).targetReady()
	got := waitPhase(t, run, v1alpha1.PhaseFailed, v1alpha1.ReasonRunnerRejected)
	if !strings.Contains(got.Status.Message, foreign.Name) || !strings.Contains(got.Status.Message, "does not own") {
		t.Errorf("message %q", got.Status.Message)
	}
}
