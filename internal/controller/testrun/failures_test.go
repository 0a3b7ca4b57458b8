package testrun

import (
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/measure"
	"fleetbench.dev/fleetbench/pkg/naming"
	"fleetbench.dev/fleetbench/pkg/runners"
)

func TestFailurePathsEndInFailedWithTheirReason(t *testing.T) {
	fast := &v1alpha1.TimeoutsSpec{Provisioning: "2s", RunnersReady: "2s", Run: "2s", Collection: "2s"}
	cases := []struct {
		name   string
		run    func(ns string) *v1alpha1.TestRun
		act    func(t *testing.T, k *kubelet)
		reason string
		// says are parts of the message the user must read: the cause and the fix.
		says []string
		// within bounds how long after creation Failed must come.
		within time.Duration
	}{
		{name: "profile missing", reason: v1alpha1.ReasonProfileNotFound, within: 15 * time.Second,
			run: func(ns string) *v1alpha1.TestRun {
				return tw.MakeTestRun("no-profile", ns).Profile("C9").Timeouts(fast).Obj()
			}},
		{name: "target never ready", reason: v1alpha1.ReasonTargetNotReady, within: 15 * time.Second,
			run: func(ns string) *v1alpha1.TestRun { return tw.MakeTestRun("never-ready", ns).Timeouts(fast).Obj() }},
		// Admission leaves core types copied into pods to the API server: its refusal ends the run.
		{name: "target refused by the API server", reason: v1alpha1.ReasonInvalidTarget, within: 15 * time.Second,
			says: []string{"the API server refused the target's Deployment", `env[3].name: Invalid value: "A=B"`, "spec.target"},
			run: func(ns string) *v1alpha1.TestRun {
				return tw.MakeTestRun("refused-target", ns).Components(v1alpha1.Component{Name: "web", Kind: v1alpha1.ComponentWebServer,
					Env: []corev1.EnvVar{{Name: "A=B", Value: "x"}}}).Obj()
			}},
		{name: "target image missing", reason: v1alpha1.ReasonTargetImageNotPresent, within: 15 * time.Second,
			run: func(ns string) *v1alpha1.TestRun { return tw.MakeTestRun("no-image", ns).Obj() },
			act: func(t *testing.T, k *kubelet) {
				k.targetPodWaiting("ErrImageNeverPull", "Container image \"fleetbench/nginx:dev\" is not present with pull policy of Never")
			}},
		{name: "target image cannot be pulled", reason: v1alpha1.ReasonTargetImageNotPresent, within: 25 * time.Second,
			says: []string{"ImagePullBackOff", "registry.fleetbench.test", "still failing after", "imagePullSecrets"},
			run:  func(ns string) *v1alpha1.TestRun { return tw.MakeTestRun("no-pull", ns).Obj() },
			act: func(t *testing.T, k *kubelet) {
				k.targetPodWaiting("ImagePullBackOff", `Back-off pulling image "registry.fleetbench.test/nginx:dev": ErrImagePull: dial tcp: lookup registry.fleetbench.test: no such host`)
			}},
		{name: "target image runs as root", reason: v1alpha1.ReasonTargetRunsAsRoot, within: 15 * time.Second,
			says: []string{"container legacy: container has runAsNonRoot and image will run as root", "runAsUser", "spec.target.podSecurity: baseline"},
			run: func(ns string) *v1alpha1.TestRun {
				return tw.MakeTestRun("root-image", ns).Components(v1alpha1.Component{Name: "legacy", Kind: v1alpha1.ComponentCustom,
					Image: "legacy:1", Ports: []corev1.ContainerPort{{ContainerPort: 8080}}}).Obj()
			},
			act: func(t *testing.T, k *kubelet) {
				k.targetPodWaiting("CreateContainerConfigError", `container has runAsNonRoot and image will run as root (pod: "stack", container: legacy)`)
			}},
		{name: "runner image cannot be pulled", reason: v1alpha1.ReasonRunnerImageNotPresent, within: 25 * time.Second,
			says: []string{"ErrImagePull", "still failing after", "spec.runner.image"},
			run:  func(ns string) *v1alpha1.TestRun { return tw.MakeTestRun("no-runner-pull", ns).Obj() },
			act: func(t *testing.T, k *kubelet) {
				k.targetReady()
				k.podsFor(k.jobs(1), func(_ int, pod *corev1.Pod) {
					pod.Status.Phase = corev1.PodPending
					pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "k6", Image: "registry.fleetbench.test/runner:x",
						State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull", Message: "unauthorized"}}}}
				})
			}},
		{name: "runner image missing", reason: v1alpha1.ReasonRunnerImageNotPresent, within: 15 * time.Second,
			run: func(ns string) *v1alpha1.TestRun { return tw.MakeTestRun("no-runner-image", ns).Obj() },
			act: func(t *testing.T, k *kubelet) {
				k.targetReady()
				k.podsFor(k.jobs(1), func(_ int, pod *corev1.Pod) {
					pod.Status.Phase = corev1.PodPending
					pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "k6", Image: "fleetbench/runner:test",
						State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImageNeverPull"}}}}
				})
			}},
		{name: "runner unschedulable", reason: v1alpha1.ReasonRunnerUnschedulable, within: 15 * time.Second,
			run: func(ns string) *v1alpha1.TestRun { return tw.MakeTestRun("unschedulable", ns).Timeouts(fast).Obj() },
			act: func(t *testing.T, k *kubelet) {
				k.targetReady()
				k.podsFor(k.jobs(1), func(_ int, pod *corev1.Pod) {
					pod.Status.Phase = corev1.PodPending
					pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
						Reason: "Unschedulable", Message: "0/1 nodes are available: 1 Insufficient cpu"}}
				})
			}},
		{name: "separate runners on too few nodes", reason: v1alpha1.ReasonRunnerUnschedulable, within: 15 * time.Second,
			says: []string{"each of the 3 runners on its own node, but the cluster has 0 schedulable nodes", "lower spec.parallelism to 0", "anti-affinity"},
			run: func(ns string) *v1alpha1.TestRun {
				return tw.MakeTestRun("separate", ns).Parallelism(3).Separate().Obj()
			},
			act: func(t *testing.T, k *kubelet) {
				k.targetReady()
				k.podsFor(k.jobs(3), func(i int, pod *corev1.Pod) {
					if i < 2 {
						setRunning(pod, i)
						return
					}
					pod.Status.Phase = corev1.PodPending
					pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
						Reason: "Unschedulable", Message: "0/2 nodes are available: 2 node(s) didn't match pod anti-affinity rules"}}
				})
			}},
		{name: "runner pod never created (quota)", reason: v1alpha1.ReasonRunnerNotCreated, within: 15 * time.Second,
			run: func(ns string) *v1alpha1.TestRun { return tw.MakeTestRun("quota", ns).Timeouts(fast).Obj() },
			act: func(t *testing.T, k *kubelet) { k.targetReady(); k.jobs(1) }},
		{name: "runner mounts a volume it does not declare", reason: v1alpha1.ReasonRunnerRejected, within: 15 * time.Second,
			says: []string{"was refused", "volumeMounts", "Not found"},
			run: func(ns string) *v1alpha1.TestRun {
				return tw.MakeTestRun("undeclared", ns).Runner(&v1alpha1.RunnerSpec{
					VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}}).Obj()
			}},
		{name: "runner cannot reach the target", reason: v1alpha1.ReasonRunnerFailedBeforeStart, within: 15 * time.Second,
			says: []string{"exited with code 90 (could not reach the target", "web.", "NetworkPolicy"},
			run:  func(ns string) *v1alpha1.TestRun { return tw.MakeTestRun("unreachable", ns).Obj() },
			act: func(t *testing.T, k *kubelet) {
				k.targetReady()
				k.podsFor(k.jobs(1), func(_ int, pod *corev1.Pod) {
					var addrs string
					for _, e := range pod.Spec.Containers[0].Env {
						if e.Name == measure.ReachEnv {
							addrs = e.Value
						}
					}
					if addrs == "" {
						t.Errorf("runner pod env lacks %s", measure.ReachEnv)
					}
					pod.Status.Phase = corev1.PodFailed
					pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: runners.ContainerName, State: corev1.ContainerState{
						Terminated: &corev1.ContainerStateTerminated{ExitCode: measure.ExitTargetUnreachable, Reason: "Error", Message: "the target was not reachable from this runner within 1m0s; " +
							addrs + ": dial tcp: connect: connection refused (a NetworkPolicy or the network keeps the runner out)\n"}}}}
				})
			}},
		{name: "script does not compile", reason: v1alpha1.ReasonScriptInvalid, within: 15 * time.Second,
			says: []string{"k6 could not load the script", "Line 4:35 Unexpected token", "fix spec.script"},
			run: func(ns string) *v1alpha1.TestRun {
				return tw.MakeTestRun("broken", ns).Annotation(manualPreflight, "true").Obj()
			},
			act: func(t *testing.T, k *kubelet) {
				job := k.preflightJob()
				log := `time="2026-11-23T14:15:30Z" level=error msg="could not initialize 'test.js': file:///fleetbench/script/test.js: Line 4:35 Unexpected token ; (and 2 more errors)"`
				if err := preflightPod(k.ctx, env.Client, job, 107, log); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "runner script error before start", reason: v1alpha1.ReasonRunnerFailedBeforeStart, within: 15 * time.Second,
			run: func(ns string) *v1alpha1.TestRun { return tw.MakeTestRun("script-error", ns).Obj() },
			act: func(t *testing.T, k *kubelet) {
				k.targetReady()
				// k6 fails while loading the script, before its API (and so readiness) is up.
				pods := k.podsFor(k.jobs(1), func(_ int, pod *corev1.Pod) { pod.Status.Phase = corev1.PodRunning })
				k.Finish(pods[0], 107, "Error")
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ns := setup(t)
			run := tc.run(ns)
			create(t, run)
			if tc.act != nil {
				tc.act(t, newKubelet(t, run))
			}
			got := waitPhase(t, run, v1alpha1.PhaseFailed, tc.reason)
			if took := got.Status.CompletionTime.Sub(got.CreationTimestamp.Time); took > tc.within {
				t.Errorf("Failed after %s, want within %s", took, tc.within)
			}
			if got.Status.Verdict != v1alpha1.VerdictFailed || got.Status.Message == "" {
				t.Errorf("verdict %q message %q", got.Status.Verdict, got.Status.Message)
			}
			for _, part := range tc.says {
				if !strings.Contains(got.Status.Message, part) {
					t.Errorf("message %q lacks %q", got.Status.Message, part)
				}
			}
			eventually(t, "no runner left waiting", func() error {
				var jobs batchv1.JobList
				if err := env.Client.List(ctx, &jobs, client.InNamespace(ns)); err != nil {
					return err
				}
				for _, j := range jobs.Items {
					// An ended pre-flight keeps its Job, for kubectl logs, as an ended runner does.
					preflight := j.Labels[naming.LabelRole] == naming.RolePreflight && tc.reason == v1alpha1.ReasonScriptInvalid
					if j.DeletionTimestamp.IsZero() && tc.reason != v1alpha1.ReasonRunnerFailedBeforeStart && !preflight {
						return fmt.Errorf("runner Job %s outlived the failure", j.Name)
					}
				}
				return nil
			})
			tw.WantConditions(t, got, map[string]string{
				v1alpha1.ConditionReady: "False/" + v1alpha1.ReasonFailed, v1alpha1.ConditionStalled: "True/" + tc.reason,
				v1alpha1.ConditionComplete: "True/" + tc.reason, v1alpha1.ConditionReconciling: "False/" + tc.reason,
			})
			if tc.reason == v1alpha1.ReasonScriptInvalid {
				// Provisioned alongside the pre-flight, the target of a script that does not load
				// is released at once; it never saw a request.
				notStarted(t, run)
				eventually(t, "the target released", func() error {
					target := &corev1.Namespace{}
					err := env.Client.Get(ctx, client.ObjectKey{Name: naming.TargetNamespace(ns, run.Name)}, target)
					if err == nil && target.DeletionTimestamp.IsZero() {
						return fmt.Errorf("a script that does not load keeps no target; namespace %s is kept", target.Name)
					}
					return client.IgnoreNotFound(err)
				})
			}
			t.Logf("%s: %s", got.Status.Reason, got.Status.Message)
		})
	}
}

// TestFailedRunnerStopsTheOthers: one runner is OOM-killed mid-run; the others are stopped,
// their results kept and marked partial, and the run fails with the OOM as its reason.
func TestFailedRunnerStopsTheOthers(t *testing.T) {
	ns := setup(t)
	run := tw.MakeTestRun("oom", ns).Parallelism(3).Devices(30, "1s").Duration("1m").Obj()
	k, pods := startRunning(t, run, 3)

	k.Finish(pods[1], 137, "OOMKilled")
	eventually(t, "the other runners stopped", func() error {
		if runner.stops(pods[0]) == 0 || runner.stops(pods[2]) == 0 {
			return fmt.Errorf("stops: %d, %d", runner.stops(pods[0]), runner.stops(pods[2]))
		}
		return nil
	})
	start := time.Now()
	for _, i := range []int{0, 2} {
		logs.set(pods[i], load(pods[i], start), nil)
		k.Finish(pods[i], decide.ExitStopped, "Error")
	}
	got := waitPhase(t, run, v1alpha1.PhaseFailed, v1alpha1.ReasonRunnerOOMKilled)
	if got.Status.Results == nil || !got.Status.Results.Partial || got.Status.Results.Requests.Total != 200 {
		t.Fatalf("want the two surviving runners' 200 requests, partial: %+v", got.Status.Results)
	}
	if !strings.Contains(got.Status.Message, pods[1].Name) {
		t.Errorf("message does not name the OOM-killed runner: %s", got.Status.Message)
	}
}

// TestLostRunnerAndRunDeadline: a runner whose pod vanished fails the run as lost; a load past
// its deadline is stopped and fails as RunTimeout.
func TestLostRunnerAndRunDeadline(t *testing.T) {
	t.Run("lost", func(t *testing.T) {
		t.Parallel()
		ns := setup(t)
		run := tw.MakeTestRun("lost", ns).Parallelism(2).Devices(20, "1s").Duration("1m").Obj()
		k, pods := startRunning(t, run, 2)
		if err := env.Client.Delete(ctx, pods[0]); err != nil {
			t.Fatal(err)
		}
		job := &batchv1.Job{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: naming.RunnerJob(run.Name, 0)}, job); err != nil {
			t.Fatal(err)
		}
		job.Status.Conditions = append(job.Status.Conditions, batchv1.JobCondition{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded"},
			batchv1.JobCondition{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit"})
		now := metav1.Now()
		job.Status.StartTime, job.Status.Failed = &now, 1
		if err := env.Client.Status().Update(ctx, job); err != nil {
			t.Fatal(err)
		}
		eventually(t, "the surviving runner stopped", func() error {
			if runner.stops(pods[1]) == 0 {
				return fmt.Errorf("not stopped")
			}
			return nil
		})
		logs.set(pods[1], load(pods[1], time.Now()), nil)
		k.Finish(pods[1], decide.ExitStopped, "Error")
		waitPhase(t, run, v1alpha1.PhaseFailed, v1alpha1.ReasonRunnerLost)
	})
	t.Run("run deadline", func(t *testing.T) {
		t.Parallel()
		ns := setup(t)
		run := tw.MakeTestRun("deadline", ns).Timeouts(&v1alpha1.TimeoutsSpec{Run: "2s"}).Obj()
		k, pods := startRunning(t, run, 1)
		eventually(t, "the runner stopped at the deadline", func() error {
			if runner.stops(pods[0]) == 0 {
				return fmt.Errorf("not stopped")
			}
			return nil
		})
		logs.set(pods[0], load(pods[0], time.Now()), nil)
		k.Finish(pods[0], decide.ExitStopped, "Error")
		got := waitPhase(t, run, v1alpha1.PhaseFailed, v1alpha1.ReasonRunTimeout)
		if got.Status.Results == nil || got.Status.Results.Requests.Total != 100 || !got.Status.Results.Partial {
			t.Errorf("results before the deadline must be kept, partial: %+v", got.Status.Results)
		}
	})
}
