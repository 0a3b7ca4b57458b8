package testrun

import (
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/controller"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/naming"
	"fleetbench.dev/fleetbench/pkg/target"
)

// TestNamespacedInstall runs the manager as the chart's namespaced install does (watchNamespaces
// team-a, targetNamespace fb-targets), acting with that install's Roles and small ClusterRole
// only, on a control plane of its own: the suite's manager would reconcile every TestRun too.
// Two runs share the admin's namespace with objects of their own and end Succeeded; each takes
// exactly its objects away; a TestRun elsewhere is never touched. Then a manager whose target
// namespace does not exist fails a run TargetNamespaceNotFound.
func TestNamespacedInstall(t *testing.T) {
	const watched, elsewhere, shared = "team-a", "team-x", "fb-targets"
	var objs []client.Object
	for _, ns := range []string{watched, elsewhere, shared} {
		objs = append(objs, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{target.EnforceLabel: "restricted"}}})
	}
	objs = append(objs, tw.MakeProfile("c1", "1", "512Mi").Obj(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "registry-cred", Namespace: watched}, Type: corev1.SecretTypeDockerConfigJson,
		Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{}}`)}})
	e := ownControlPlane(t, objs)
	c := e.Client
	mgr, err := startManagerIn(e, controller.Namespaces{Watch: []string{watched}, Target: shared})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mgr.Stop() })

	stranger := tw.MakeTestRun("stranger", elsewhere).Obj()
	if err := c.Create(ctx, stranger); err != nil {
		t.Fatal(err)
	}
	runs := []*v1alpha1.TestRun{tw.MakeTestRun("load-1", watched).Obj(), tw.MakeTestRun("load-2", watched).Obj()}
	runs[0].Spec.Target.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "registry-cred"}}
	kubelets := make([]*kubelet, len(runs))
	runnerPods := make([]*corev1.Pod, len(runs))
	for i, run := range runs {
		if err := c.Create(ctx, run); err != nil {
			t.Fatal(err)
		}
		kubelets[i] = newKubeletOn(t, c, run, shared)
		kubelets[i].targetReady()
		runnerPods[i] = kubelets[i].runnersReady(1)[0]
		got := waitPhaseOn(t, c, run, v1alpha1.PhaseRunning, "")
		if got.Status.TargetNamespace != shared {
			t.Errorf("%s: status.targetNamespace %q, want %q", run.Name, got.Status.TargetNamespace, shared)
		}
	}
	for i, run := range runs {
		checkSharedTarget(t, c, run, kubelets[i])
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: shared, Name: target.PullSecretName(runs[0], "registry-cred", target.Options{SharedNamespace: true})},
		&corev1.Secret{}); err != nil {
		t.Errorf("load-1's pull Secret was not copied under its own name: %v", err)
	}

	for i, run := range runs {
		logs.set(runnerPods[i], load(runnerPods[i], time.Now()), nil)
		kubelets[i].Finish(runnerPods[i], 0, "Completed")
		waitPhaseOn(t, c, run, v1alpha1.PhaseSucceeded, v1alpha1.ReasonCompleted)
		eventually(t, run.Name+"'s objects gone", func() error { return sharedObjectsLeft(c, shared, run) })
		// envtest has no garbage collector: the test removes the pods it made for the target.
		if err := c.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(shared), client.MatchingLabels(target.RunLabels(run))); err != nil {
			t.Fatal(err)
		}
		for _, other := range runs[i+1:] {
			if err := sharedObjectsLeft(c, shared, other); err == nil {
				t.Errorf("cleaning up %s took %s's objects too", run.Name, other.Name)
			}
		}
		ns := &corev1.Namespace{}
		if err := c.Get(ctx, client.ObjectKey{Name: shared}, ns); err != nil || !ns.DeletionTimestamp.IsZero() || ns.Labels[target.EnforceLabel] != "restricted" ||
			ns.Labels[naming.LabelTestRun] != "" {
			t.Errorf("the shared namespace must stay as the admin made it: %v %+v", err, ns.ObjectMeta)
		}
	}
	// The finalizer lets a TestRun go once its objects are gone.
	if err := c.Delete(ctx, runs[0]); err != nil {
		t.Fatal(err)
	}
	eventually(t, "load-1 deleted", func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(runs[0]), &v1alpha1.TestRun{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there: %w", err)
		}
		return nil
	})

	got := &v1alpha1.TestRun{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(stranger), got); err != nil {
		t.Fatal(err)
	}
	var jobs batchv1.JobList
	if err := c.List(ctx, &jobs, client.InNamespace(elsewhere)); err != nil {
		t.Fatal(err)
	}
	if got.Status.Phase != "" || len(got.Finalizers) > 0 || len(jobs.Items) > 0 {
		t.Errorf("a TestRun outside the watched namespaces was touched: phase %q finalizers %v, %d Jobs", got.Status.Phase, got.Finalizers, len(jobs.Items))
	}
	if err := c.Delete(ctx, stranger); err != nil {
		t.Fatal(err)
	}

	// A target namespace nobody made: the run waits, saying until when, then fails saying who
	// must make it. This manager watches every namespace (the flag alone, with the ClusterRole).
	mgr.Stop()
	mgr, err = startManagerIn(e, controller.Namespaces{Target: "fb-absent"})
	if err != nil {
		t.Fatal(err)
	}
	orphan := tw.MakeTestRun("orphan", watched).Timeouts(&v1alpha1.TimeoutsSpec{Provisioning: "4s"}).Obj()
	if err := c.Create(ctx, orphan); err != nil {
		t.Fatal(err)
	}
	waitPhaseOn(t, c, orphan, v1alpha1.PhasePending, v1alpha1.ReasonTargetNamespaceNotFound)
	got = waitPhaseOn(t, c, orphan, v1alpha1.PhaseFailed, v1alpha1.ReasonTargetNamespaceNotFound)
	for _, part := range []string{"namespace fb-absent", "does not exist", "an admin must create it"} {
		if !strings.Contains(got.Status.Message, part) {
			t.Errorf("message %q lacks %q", got.Status.Message, part)
		}
	}
}

// checkSharedTarget: the run's target in the shared namespace has objects named after the run, a
// NetworkPolicy fencing only its pods, and its runner reaches its own Service.
func checkSharedTarget(t *testing.T, c client.Client, run *v1alpha1.TestRun, k *kubelet) {
	t.Helper()
	d := k.targetDeployments()[0]
	if want := naming.SharedTargetObject(run.Namespace, run.Name, "stack"); d.Name != want {
		t.Errorf("%s: Deployment %s, want %s", run.Name, d.Name, want)
	}
	svc := naming.SharedTargetObject(run.Namespace, run.Name, "web")
	if err := c.Get(ctx, client.ObjectKey{Namespace: k.targetNS(), Name: svc}, &corev1.Service{}); err != nil {
		t.Errorf("%s: Service %s: %v", run.Name, svc, err)
	}
	var policies networkingv1.NetworkPolicyList
	if err := c.List(ctx, &policies, client.InNamespace(k.targetNS()), client.MatchingLabels(target.RunLabels(run))); err != nil {
		t.Fatal(err)
	}
	if len(policies.Items) != 1 || policies.Items[0].Spec.PodSelector.MatchLabels[naming.LabelTestRun] != run.Name {
		t.Errorf("%s: want one NetworkPolicy selecting its pods, got %+v", run.Name, policies.Items)
	}
	var quotas corev1.ResourceQuotaList
	if err := c.List(ctx, &quotas, client.InNamespace(k.targetNS())); err != nil || len(quotas.Items) > 0 {
		t.Errorf("a shared namespace gets no per-run quota: %d, %v", len(quotas.Items), err)
	}
	job := k.jobs(1)[0]
	env := map[string]string{}
	for _, v := range job.Spec.Template.Spec.Containers[0].Env {
		env[v.Name] = v.Value
	}
	if want := svc + "." + k.targetNS() + ".svc"; env["TARGET_WEB_HOST"] != want {
		t.Errorf("%s: runners get TARGET_WEB_HOST %q, want %q", run.Name, env["TARGET_WEB_HOST"], want)
	}
}

// sharedObjectsLeft is nil once none of run's objects is in namespace ns, or an error naming
// what is left. Pods are not counted: the garbage collector, which envtest lacks, removes them.
func sharedObjectsLeft(c client.Client, ns string, run *v1alpha1.TestRun) error {
	for _, list := range []client.ObjectList{&appsv1.DeploymentList{}, &corev1.ServiceList{}, &networkingv1.NetworkPolicyList{}, &corev1.SecretList{}} {
		if err := c.List(ctx, list, client.InNamespace(ns), client.MatchingLabels(target.RunLabels(run))); err != nil {
			return err
		}
		if n := meta.LenList(list); n > 0 {
			return fmt.Errorf("%d %T left", n, list)
		}
	}
	return nil
}
