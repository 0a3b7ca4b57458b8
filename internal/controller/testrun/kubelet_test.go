package testrun

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/testenv"
	"fleetbench.dev/fleetbench/pkg/naming"
	"fleetbench.dev/fleetbench/pkg/runners"
	"fleetbench.dev/fleetbench/pkg/target"
)

// kubelet plays the parts of a cluster envtest lacks: the Deployment and Job controllers
// that create pods, and the kubelet that runs them and reports their state.
type kubelet struct {
	t   *testing.T
	ctx context.Context
	run *v1alpha1.TestRun
	// c is the control plane's client; target the namespace the run's target goes into.
	c      client.Client
	target string
	// node is where the target's pods run; node-1 when empty.
	node string
}

func newKubelet(t *testing.T, run *v1alpha1.TestRun) *kubelet {
	return newKubeletOn(t, env.Client, run, naming.TargetNamespace(run.Namespace, run.Name))
}

// newKubeletOn plays the cluster of client c, for a run whose target goes into targetNS.
func newKubeletOn(t *testing.T, c client.Client, run *v1alpha1.TestRun, targetNS string) *kubelet {
	return &kubelet{t: t, ctx: context.Background(), run: run, c: c, target: targetNS}
}

func (k *kubelet) targetNS() string { return k.target }

// targetDeployments waits for the operator's target Deployment: every run here has one.
func (k *kubelet) targetDeployments() []appsv1.Deployment {
	const want = 1
	var list appsv1.DeploymentList
	eventually(k.t, "target Deployments", func() error {
		if err := k.c.List(k.ctx, &list, client.InNamespace(k.targetNS()), client.MatchingLabels(target.RunLabels(k.run))); err != nil {
			return err
		}
		if len(list.Items) != want {
			return fmt.Errorf("%d target Deployments, want %d", len(list.Items), want)
		}
		return nil
	})
	return list.Items
}

// targetReady runs the target's one Deployment: its pod on node-1, and the Deployment
// reported ready, as the Deployment controller and kubelet would.
func (k *kubelet) targetReady() {
	k.targetReadyWith(0)
}

// targetHostIP is the address of the node the played target runs on.
const targetHostIP = "10.1.0.1"

func (k *kubelet) targetReadyWith(restarts int32) {
	for _, d := range k.targetDeployments() {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: d.Name + "-pod", Namespace: d.Namespace, Labels: d.Spec.Template.Labels},
			Spec:       d.Spec.Template.Spec,
		}
		pod.Spec.NodeName = "node-1"
		if k.node != "" {
			pod.Spec.NodeName = k.node
		}
		if err := k.c.Create(k.ctx, pod); err != nil {
			k.t.Fatal(err)
		}
		pod.Status.Phase, pod.Status.HostIP = corev1.PodRunning, targetHostIP
		for _, c := range pod.Spec.Containers {
			pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{Name: c.Name, Ready: true, RestartCount: restarts,
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}})
		}
		if err := k.c.Status().Update(k.ctx, pod); err != nil {
			k.t.Fatal(err)
		}
		d.Status.Replicas, d.Status.ReadyReplicas, d.Status.AvailableReplicas = 1, 1, 1
		if err := k.c.Status().Update(k.ctx, &d); err != nil {
			k.t.Fatal(err)
		}
	}
}

// targetPodWaiting creates the target's pod from its Deployment's template (so it passes the
// namespace's Pod Security admission as the ReplicaSet's would), stuck with a waiting reason.
func (k *kubelet) targetPodWaiting(reason, message string) {
	d := k.targetDeployments()[0]
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "target-stuck", Namespace: d.Namespace, Labels: d.Spec.Template.Labels},
		Spec:       d.Spec.Template.Spec,
	}
	if err := k.c.Create(k.ctx, pod); err != nil {
		k.t.Fatal(err)
	}
	c := pod.Spec.Containers[0]
	pod.Status.Phase = corev1.PodPending
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: c.Name, Image: c.Image,
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}}}}
	if err := k.c.Status().Update(k.ctx, pod); err != nil {
		k.t.Fatal(err)
	}
}

// targetPodScheduled creates the target's pod on node-1, its container still being created.
func (k *kubelet) targetPodScheduled() {
	d := k.targetDeployments()[0]
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "target-starting", Namespace: d.Namespace, Labels: d.Spec.Template.Labels},
		Spec:       d.Spec.Template.Spec,
	}
	pod.Spec.NodeName = "node-1"
	if err := k.c.Create(k.ctx, pod); err != nil {
		k.t.Fatal(err)
	}
}

// preflightJob waits for the pre-flight Job.
func (k *kubelet) preflightJob() *batchv1.Job {
	job := &batchv1.Job{}
	eventually(k.t, "the pre-flight Job", func() error {
		return k.c.Get(k.ctx, client.ObjectKey{Namespace: k.run.Namespace, Name: naming.PreflightJob(k.run.Name)}, job)
	})
	return job
}

// jobs waits for the runner Jobs.
func (k *kubelet) jobs(want int) []batchv1.Job {
	var list batchv1.JobList
	eventually(k.t, "runner Jobs", func() error {
		if err := k.c.List(k.ctx, &list, client.InNamespace(k.run.Namespace), client.MatchingLabels(runners.RunnerLabels(k.run))); err != nil {
			return err
		}
		if len(list.Items) != want {
			return fmt.Errorf("%d runner Jobs, want %d", len(list.Items), want)
		}
		return nil
	})
	return list.Items
}

// podsFor creates each Job's pod, as the Job controller would, and lets mutate set its status.
func (k *kubelet) podsFor(jobs []batchv1.Job, mutate func(i int, pod *corev1.Pod)) []*corev1.Pod {
	var pods []*corev1.Pod
	for i := range jobs {
		job := &jobs[i]
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Name: job.Name + "-pod", Namespace: job.Namespace, Labels: job.Spec.Template.Labels,
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: job.Name, UID: job.UID, Controller: ptr.To(true)}},
			},
			Spec: job.Spec.Template.Spec,
		}
		if err := k.c.Create(k.ctx, pod); err != nil {
			k.t.Fatal(err)
		}
		mutate(i, pod)
		if err := k.c.Status().Update(k.ctx, pod); err != nil {
			k.t.Fatal(err)
		}
		pods = append(pods, pod)
	}
	return pods
}

// runnersReady creates every runner's pod Running and Ready, paused as k6 --paused is.
func (k *kubelet) runnersReady(n int) []*corev1.Pod {
	return k.podsFor(k.jobs(n), func(i int, pod *corev1.Pod) { setRunning(pod, i) })
}

func setRunning(pod *corev1.Pod, i int) {
	pod.Status.Phase = corev1.PodRunning
	pod.Status.PodIP = fmt.Sprintf("10.244.0.%d", 10+i)
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: runners.ContainerName, Ready: true,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}}}
}

// Finish ends a runner pod with an exit code and reason, as the kubelet reports it.
func (k *kubelet) Finish(pod *corev1.Pod, exit int32, reason string) {
	k.t.Helper()
	if err := k.c.Get(k.ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
		k.t.Fatal(err)
	}
	pod.Status.Phase = corev1.PodSucceeded
	if exit != 0 {
		pod.Status.Phase = corev1.PodFailed
	}
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: runners.ContainerName,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: exit, Reason: reason, FinishedAt: metav1.Now()}}}}
	if err := k.c.Status().Update(k.ctx, pod); err != nil {
		k.t.Fatal(err)
	}
}

func eventually(t *testing.T, what string, check func() error) {
	t.Helper()
	testenv.Eventually(t, what, check)
}

// waitPhase waits for the TestRun to reach phase (and reason, when given) and returns it.
func waitPhase(t *testing.T, run *v1alpha1.TestRun, phase v1alpha1.TestRunPhase, reason string) *v1alpha1.TestRun {
	t.Helper()
	return waitPhaseOn(t, env.Client, run, phase, reason)
}

// waitPhaseOn is waitPhase on the control plane of client c.
func waitPhaseOn(t *testing.T, c client.Client, run *v1alpha1.TestRun, phase v1alpha1.TestRunPhase, reason string) *v1alpha1.TestRun {
	t.Helper()
	got := &v1alpha1.TestRun{}
	eventually(t, fmt.Sprintf("TestRun %s in phase %s %s", run.Name, phase, reason), func() error {
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(run), got); err != nil {
			return err
		}
		if got.Status.Phase != phase || (reason != "" && got.Status.Reason != reason) {
			return fmt.Errorf("phase %s reason %s: %s", got.Status.Phase, got.Status.Reason, got.Status.Message)
		}
		return nil
	})
	return got
}

// manualPreflight on a TestRun keeps passPreflights away from its pre-flight, so the test can
// end it itself.
const manualPreflight = "test.fleetbench.dev/manual-preflight"

// passPreflights plays the Job controller and kubelet for every pre-flight Job: its pod runs
// the runner's check (k6 run's) and exits 0, as it does for the scripts these tests use. It runs until ctx ends.
func passPreflights(ctx context.Context, c client.Client) {
	for ctx.Err() == nil {
		var jobs batchv1.JobList
		if err := c.List(ctx, &jobs, client.MatchingLabels{naming.LabelRole: naming.RolePreflight}); err == nil {
			for i := range jobs.Items {
				job := &jobs.Items[i]
				var run v1alpha1.TestRun
				err := c.Get(ctx, client.ObjectKey{Namespace: job.Namespace, Name: job.Labels[naming.LabelTestRun]}, &run)
				if err != nil || run.Annotations[manualPreflight] != "" {
					continue
				}
				_ = preflightPod(ctx, c, job, 0, "")
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// preflightPod creates the pre-flight Job's pod, ended with exit and log as its termination
// message; a pod that exists already is left alone.
func preflightPod(ctx context.Context, c client.Client, job *batchv1.Job, exit int32, log string) error {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: job.Name + "-pod", Namespace: job.Namespace, Labels: job.Spec.Template.Labels,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: job.Name, UID: job.UID, Controller: ptr.To(true)}}},
		Spec: job.Spec.Template.Spec,
	}
	if err := c.Create(ctx, pod); err != nil {
		return client.IgnoreAlreadyExists(err)
	}
	pod.Status.Phase = corev1.PodSucceeded
	if exit != 0 {
		pod.Status.Phase = corev1.PodFailed
	}
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: runners.ContainerName,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: exit, Message: log, FinishedAt: metav1.Now()}}}}
	return c.Status().Update(ctx, pod)
}
