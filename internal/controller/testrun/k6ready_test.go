package testrun

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/runners"
)

// Runners whose k6 runs but which the kubelet's once-a-second readiness probe has not yet
// marked Ready are asked themselves: the start does not wait for the probe when k6 answers, and
// does when it does not.
func TestStartAsksK6BeforeTheReadinessProbe(t *testing.T) {
	ns := setup(t)
	runner.mu.Lock()
	runner.k6Down[ns] = true
	runner.mu.Unlock()
	run := tw.MakeTestRun("early", ns).Parallelism(2).Devices(20, "10s").Duration("10s").Obj()
	create(t, run)
	k := newKubelet(t, run)
	k.targetReady()
	pods := k.podsFor(k.jobs(2), func(i int, pod *corev1.Pod) {
		// k6 runs; the probe has not passed yet.
		pod.Status.Phase = corev1.PodRunning
		pod.Status.PodIP = fmt.Sprintf("10.244.0.%d", 10+i)
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: runners.ContainerName,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}}}
	})
	// k6 still loading: asked, and asked again, but nothing starts.
	waitPhase(t, run, v1alpha1.PhaseStarting, v1alpha1.ReasonWaitingForRunners)
	eventually(t, "the runners asked more than once", func() error {
		if n := runner.warms(ns); n < 4 {
			return fmt.Errorf("%d asks", n)
		}
		return nil
	})
	if n := runner.resumes(ns); n != 0 {
		t.Fatalf("%d runners resumed while k6 did not answer", n)
	}
	// k6 answers: the run starts with the pods still not Ready.
	runner.mu.Lock()
	runner.k6Down[ns] = false
	runner.mu.Unlock()
	waitPhase(t, run, v1alpha1.PhaseRunning, "")
	for _, pod := range pods {
		got := &corev1.Pod{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(pod), got); err != nil {
			t.Fatal(err)
		}
		if decide.PodReady(got) {
			t.Fatalf("pod %s is Ready: the test meant to start before the probe", pod.Name)
		}
	}
	if n := runner.resumes(ns); n != 2 {
		t.Errorf("%d runners resumed, want 2", n)
	}
}
