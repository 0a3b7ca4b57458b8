package testrun

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/testenv"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/naming"
)

// TestTargetMeasurements: a scaled-down Stab-2-2 on C1 with seed 000's memory figures (44 MiB
// before, 57 MiB after, 1000 devices) gets seed 000's derived columns and log findings; a
// target that restarted fails the verdict.
func TestTargetMeasurements(t *testing.T) {
	stability := func(name, ns string) *v1alpha1.TestRun {
		return tw.MakeTestRun(name, ns).Type(v1alpha1.TestTypeStability).Devices(1000, "200s").Duration("10s").
			Stability(&v1alpha1.StabilitySpec{LogPatterns: []v1alpha1.LogPattern{
				{Name: "warning", Regex: "level=warn"}, {Name: "error", Regex: "level=error", FailAbove: ptr.To[int64](0)}}}).Obj()
	}
	for _, tc := range []struct {
		name     string
		restarts int32
		logs     string
		verdict  v1alpha1.Verdict
	}{
		{"healthy", 0, "level=info msg=up\nlevel=warn msg=\"CFG profile sync delayed\"\nlevel=warn msg=again\n", v1alpha1.VerdictPassed},
		{"crashed", 2, "level=error msg=\"simulated crash\"\n", v1alpha1.VerdictFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := setup(t)
			run := stability("stab-"+tc.name, ns)
			create(t, run)
			k := newKubelet(t, run)
			stats.set(k.targetNS(), 44, 10)
			k.targetReadyWith(tc.restarts)
			pods := k.runnersReady(1)
			got := waitPhase(t, run, v1alpha1.PhaseRunning, "")
			if got.Status.Target == nil || got.Status.Target.Memory.BeforeMiB != 44 {
				t.Fatalf("no before sample: %+v", got.Status.Target)
			}
			stats.set(k.targetNS(), 57, 13)
			logs.set(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: k.targetNS(), Name: "target-stack-pod"}}, []byte(tc.logs), nil)
			logs.set(pods[0], load(pods[0], time.Now()), nil)
			k.Finish(pods[0], 0, "Completed")
			got = waitPhase(t, run, v1alpha1.PhaseSucceeded, "")

			m := got.Status.Target.Memory
			// Seed 000, Stab-2-2 / C1: +13 MiB, 29.55 %, 0.013 MiB per device. Utilization is the
			// working set (the fake reports RSS + 50 MiB = 107 MiB) over C1's 512 MiB.
			if m.AfterMiB != 57 || m.IncreaseMiB != 13 || m.IncreasePercent != "29.55" || m.PerDeviceMiB != "0.013" || m.UtilizationPercent != "20.90" {
				t.Errorf("memory = %+v (%+v)", m, meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionTargetMeasured))
			}
			if got.Status.Capacity == nil || got.Status.Capacity.MaxSafeDevicesByMemory != 4785 {
				t.Errorf("capacity = %+v, want 1000 / 0.209 = 4785 devices", got.Status.Capacity)
			}
			if got.Status.Target.CPU.AverageCoresPerCore == "" || got.Status.Target.Samples < 2 || got.Status.Target.Restarts != tc.restarts {
				t.Errorf("cpu %+v samples %d restarts %d", got.Status.Target.CPU, got.Status.Target.Samples, got.Status.Target.Restarts)
			}
			if got.Status.Verdict != tc.verdict {
				t.Errorf("verdict %s, want %s: %s", got.Status.Verdict, tc.verdict, got.Status.Message)
			}
			findings := map[string]int64{}
			for _, f := range got.Status.Target.LogFindings {
				findings[f.Pattern] = f.Count
			}
			if tc.name == "healthy" && (findings["warning"] != 2 || findings["error"] != 0) {
				t.Errorf("findings = %+v", got.Status.Target.LogFindings)
			}
			if tc.name == "crashed" && !strings.Contains(got.Status.Message, "restarted 2 times") {
				t.Errorf("message does not report the restarts: %s", got.Status.Message)
			}
		})
	}
}

// TestTargetMeasuredWithMetricsAPIWhereTheKubeletCannotBeRead: the kubelet summary fails (a
// kubelet whose serving certificate the manager cannot verify, or one it cannot reach); the run
// is measured from metrics.k8s.io, says so, uses the working set for its memory columns and
// integrates CPU from the sampled rates.
func TestTargetMeasuredWithMetricsAPIWhereTheKubeletCannotBeRead(t *testing.T) {
	stats.failSummary(errors.New("the kubelet of node node-1 (10.0.0.1:10250) has a serving certificate the manager cannot verify"))
	t.Cleanup(func() { stats.failSummary(nil) })
	ns := setup(t)
	run := tw.MakeTestRun("metrics-api", ns).Type(v1alpha1.TestTypeStability).Devices(1000, "200s").Duration("10s").
		Stability(&v1alpha1.StabilitySpec{SampleInterval: "1s"}).Obj()
	create(t, run)
	k := newKubelet(t, run)
	k.targetReady()
	pods := k.runnersReady(1)
	// metrics-server has not scraped the new target yet: the start waits for the idle sample.
	waitPhase(t, run, v1alpha1.PhaseStarting, "WaitingForTargetSample")
	stats.set(k.targetNS(), 44, 0)
	got := waitPhase(t, run, v1alpha1.PhaseRunning, "")
	if tu := got.Status.Target; tu == nil || tu.Source != "metricsAPI" || tu.Memory.BeforeMiB != 94 {
		t.Fatalf("before the start: %+v, want source metricsAPI and the working set 44+50 MiB", tu)
	}
	time.Sleep(2500 * time.Millisecond) // a few samples at 0.1 cores
	stats.set(k.targetNS(), 57, 0)
	logs.set(pods[0], load(pods[0], time.Now()), nil)
	k.Finish(pods[0], 0, "Completed")
	got = waitPhase(t, run, v1alpha1.PhaseSucceeded, "")

	tu := got.Status.Target
	if tu.Source != "metricsAPI" || tu.Memory.AfterMiB != 107 || tu.Memory.IncreaseMiB != 13 || tu.Samples < 3 {
		t.Errorf("target = %+v memory %+v", tu, tu.Memory)
	}
	est, _ := strconv.ParseFloat(tu.CPU.EstimatedCoreSeconds, 64)
	avg, _ := strconv.ParseFloat(tu.CPU.AverageCoresPerCore, 64)
	// 0.1 cores throughout on C1's one core: the integral over the run averages back to 0.1.
	if est <= 0 || avg < 0.05 || avg > 0.15 {
		t.Errorf("cpu = %+v, want about 0.1 cores per core integrated from the rates", tu.CPU)
	}
	measured := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionTargetMeasured)
	if measured == nil || !strings.Contains(measured.Message, "metricsAPI") {
		t.Errorf("TargetMeasured = %+v, want it to name the source", measured)
	}
}

// TestOneMachineFallsBackWhereTheAPIServerDropsPodLevelResources runs a manager against a second
// API server whose PodLevelResources gate is off: it drops pod.spec.resources from the target's
// Deployment, so the operator splits the profile among the containers instead (a pod with no
// limit at all would void the profile) and tells the user.
func TestOneMachineFallsBackWhereTheAPIServerDropsPodLevelResources(t *testing.T) {
	old, err := testenv.Start(testenv.WithAPIServerFlag("feature-gates", "PodLevelResources=false"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = old.Stop() })
	mgr, err := startManagerOn(old)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(mgr.Stop)
	preflights, stop := context.WithCancel(ctx)
	t.Cleanup(stop)
	go passPreflights(preflights, old.Client)
	if err := old.Client.Create(ctx, tw.MakeProfile("c1", "1", "512Mi").Obj()); err != nil {
		t.Fatal(err)
	}
	run := tw.MakeTestRun("gate-off", "default").Components(
		v1alpha1.Component{Name: "web", Kind: v1alpha1.ComponentWebServer},
		v1alpha1.Component{Name: "db", Kind: v1alpha1.ComponentDatabase}).Obj()
	if err := old.Client.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	var d appsv1.Deployment
	eventually(t, "the target split evenly", func() error {
		key := client.ObjectKey{Namespace: naming.TargetNamespace("default", "gate-off"), Name: naming.TargetWorkload("stack")}
		if err := old.Client.Get(ctx, key, &d); err != nil {
			return err
		}
		for _, c := range d.Spec.Template.Spec.Containers {
			if c.Resources.Limits.Memory().String() != "256Mi" || c.Resources.Limits.Cpu().String() != "500m" {
				return fmt.Errorf("container %s has %v", c.Name, c.Resources.Limits)
			}
		}
		return nil
	})
	if d.Spec.Template.Spec.Resources != nil {
		t.Errorf("this API server does not keep pod-level resources, yet the pod has %+v", d.Spec.Template.Spec.Resources)
	}
	eventually(t, "a PodLevelResourcesUnavailable event", func() error {
		var list eventsv1.EventList
		if err := old.Client.List(ctx, &list, client.InNamespace("default")); err != nil {
			return err
		}
		for _, e := range list.Items {
			if e.Reason == "PodLevelResourcesUnavailable" && e.Regarding.Name == "gate-off" {
				return nil
			}
		}
		return fmt.Errorf("%d events, none PodLevelResourcesUnavailable", len(list.Items))
	})
}
