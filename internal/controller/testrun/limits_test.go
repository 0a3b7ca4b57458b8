package testrun

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/controller/testrun/runenv"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/naming"
)

// TestTargetQuotaAndPolicyHoldTheProfile: a GPU Profile's run gets a quota of requests and
// limits of cpu, memory and ephemeral storage and of the GPU it grants, and a policy with
// egress denied but DNS, its own pods and the block it opted into, both accepted by the API
// server; its pods pass the quota's admission. The same component on a Profile that grants no
// GPU ends Failed NotPermitted, with nothing made.
func TestTargetQuotaAndPolicyHoldTheProfile(t *testing.T) {
	ns := setup(t)
	gpu := tw.MakeProfile("limits-gpu", "2", "1Gi").Obj()
	gpu.Spec.EphemeralStorage = ptr.To(resource.MustParse("5Gi"))
	gpu.Spec.ExtendedResources = map[corev1.ResourceName]resource.Quantity{"example.com/gpu": resource.MustParse("1")}
	if err := env.Client.Create(ctx, gpu); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	app := v1alpha1.Component{Name: "app", Kind: v1alpha1.ComponentCustom, Image: "app:dev", Ports: []corev1.ContainerPort{{ContainerPort: 8080}},
		Resources: &corev1.ResourceRequirements{Limits: corev1.ResourceList{"cpu": resource.MustParse("1"), "example.com/gpu": resource.MustParse("1")}}}
	run := tw.MakeTestRun("gpu", ns).Profile("limits-gpu").Sizing(v1alpha1.SizingPerComponent).Components(app).Obj()
	run.Spec.Target.Egress = []v1alpha1.TargetEgress{{CIDR: "10.20.0.0/16", Ports: []v1alpha1.EgressPort{{Port: 443}}}}
	create(t, run)
	k := newKubelet(t, run)
	// The pod made from the template passes the quota's admission (every container bounded).
	k.targetReady()
	// The target came up: the run goes on to its runners.
	waitPhase(t, run, v1alpha1.PhaseStarting, v1alpha1.ReasonWaitingForRunners)

	quota := &corev1.ResourceQuota{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: k.targetNS(), Name: "profile"}, quota); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[corev1.ResourceName]string{
		"requests.cpu": "2", "limits.cpu": "2", "requests.memory": "1Gi", "limits.memory": "1Gi",
		"requests.ephemeral-storage": "5Gi", "limits.ephemeral-storage": "5Gi", "requests.example.com/gpu": "1",
	} {
		if q, ok := quota.Spec.Hard[name]; !ok || q.Cmp(resource.MustParse(want)) != 0 {
			t.Errorf("quota %s = %v, want %s (hard %v)", name, quota.Spec.Hard[name], want, quota.Spec.Hard)
		}
	}
	policy := &networkingv1.NetworkPolicy{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: k.targetNS(), Name: "runners-only"}, policy); err != nil {
		t.Fatal(err)
	}
	if len(policy.Spec.PolicyTypes) != 2 || len(policy.Spec.Egress) != 3 || policy.Spec.Egress[2].To[0].IPBlock.CIDR != "10.20.0.0/16" {
		t.Errorf("policy %+v, want ingress and egress, with the opted-in block", policy.Spec)
	}

	plain := tw.MakeTestRun("no-gpu", ns).Sizing(v1alpha1.SizingPerComponent).Components(app).Obj()
	create(t, plain)
	got := waitPhase(t, plain, v1alpha1.PhaseFailed, v1alpha1.ReasonNotPermitted)
	if !strings.Contains(got.Status.Message, "example.com/gpu") || !strings.Contains(got.Status.Message, "extendedResources") {
		t.Errorf("message %q, want the resource and the Profile field that grants it", got.Status.Message)
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: naming.TargetNamespace(ns, plain.Name)}, &corev1.Namespace{}); !apierrors.IsNotFound(err) {
		t.Errorf("a refused target's namespace was made: %v", err)
	}
}

// TestMaxTargetsPerNamespace runs a manager with --max-targets-per-namespace=2, on a control
// plane of its own (the suite's manager has no limit): a namespace's third run waits Pending
// TargetLimitReached, with nothing made, until one of the two ends, then gets its target; a
// fourth, whose provisioning deadline passes while it waits, ends Failed TargetLimitReached.
func TestMaxTargetsPerNamespace(t *testing.T) {
	const ns = "team-a"
	e := ownControlPlane(t, namespaceAndProfile(ns))
	c := e.Client
	startOwnManager(t, e, func(o *runenv.Options, _ bool) error {
		o.MaxTargetsPerNamespace = 2
		return nil
	})

	runs := make([]*v1alpha1.TestRun, 3)
	kubelets := make([]*kubelet, 3)
	var runnerPods []*corev1.Pod
	for i := range runs {
		runs[i] = tw.MakeTestRun(fmt.Sprintf("load-%d", i+1), ns).Obj()
		if err := c.Create(ctx, runs[i]); err != nil {
			t.Fatal(err)
		}
		kubelets[i] = newKubeletOn(t, c, runs[i], naming.TargetNamespace(ns, runs[i].Name))
		if i < 2 {
			kubelets[i].targetReady()
			runnerPods = append(runnerPods, kubelets[i].runnersReady(1)[0])
			waitPhaseOn(t, c, runs[i], v1alpha1.PhaseRunning, "")
		}
	}
	third := waitPhaseOn(t, c, runs[2], v1alpha1.PhasePending, v1alpha1.ReasonTargetLimitReached)
	if !strings.Contains(third.Status.Message, "--max-targets-per-namespace") || !strings.Contains(third.Status.Message, "waiting until") ||
		third.Status.TargetNamespace != "" {
		t.Errorf("the third run waits as %q, target namespace %q", third.Status.Message, third.Status.TargetNamespace)
	}
	if err := c.Get(ctx, client.ObjectKey{Name: kubelets[2].targetNS()}, &corev1.Namespace{}); !apierrors.IsNotFound(err) {
		t.Errorf("the third run's target namespace was made over the limit: %v", err)
	}

	// load-1 ends: its slot goes to load-3.
	logs.set(runnerPods[0], load(runnerPods[0], time.Now()), nil)
	kubelets[0].Finish(runnerPods[0], 0, "Completed")
	waitPhaseOn(t, c, runs[0], v1alpha1.PhaseSucceeded, v1alpha1.ReasonCompleted)
	kubelets[2].targetReady()
	kubelets[2].runnersReady(1)
	waitPhaseOn(t, c, runs[2], v1alpha1.PhaseRunning, "")

	// load-2 and load-3 hold the two slots until after this one's deadline.
	late := tw.MakeTestRun("load-4", ns).Timeouts(&v1alpha1.TimeoutsSpec{Provisioning: "5s"}).Obj()
	if err := c.Create(ctx, late); err != nil {
		t.Fatal(err)
	}
	got := waitPhaseOn(t, c, late, v1alpha1.PhaseFailed, v1alpha1.ReasonTargetLimitReached)
	if !strings.Contains(got.Status.Message, "ask the admin to raise the limit") {
		t.Errorf("message %q, want what to do", got.Status.Message)
	}
}
