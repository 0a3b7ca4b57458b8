package testrun

import (
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/controller"
	"fleetbench.dev/fleetbench/internal/controller/testrun/admit"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	"fleetbench.dev/fleetbench/internal/controller/testrun/runenv"
	"fleetbench.dev/fleetbench/internal/testenv"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/naming"
	"fleetbench.dev/fleetbench/pkg/target"
)

// Issue 23, item 1: one tenant's TestRun must never reach another tenant's target namespace.

// TestTenantsTargetNamespacesNeverCollide: run x in team-a-prod and run prod-x in team-a read
// alike and get namespaces of their own; each carries its run's UID. A run whose computed
// namespace is taken by another owner ends Failed TargetNamespaceConflict, never writes that
// namespace into its status, and deleting it leaves the namespace as it was.
func TestTenantsTargetNamespacesNeverCollide(t *testing.T) {
	for _, ns := range []string{"team-a", "team-a-prod"} {
		if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	setup(t) // the Profile
	victim := tw.MakeTestRun("x", "team-a-prod").Devices(10, "1s").Duration("1m").Obj()
	startRunning(t, victim, 1)
	victim = waitPhase(t, victim, v1alpha1.PhaseRunning, "")
	attacker := tw.MakeTestRun("prod-x", "team-a").Obj()
	create(t, attacker)
	newKubelet(t, attacker).targetReady()
	attacker = waitPhase(t, attacker, v1alpha1.PhaseStarting, "")
	if victim.Status.TargetNamespace == attacker.Status.TargetNamespace || victim.Status.TargetNamespace == "" {
		t.Fatalf("team-a-prod/x and team-a/prod-x share the target namespace %q", victim.Status.TargetNamespace)
	}
	for _, run := range []*v1alpha1.TestRun{victim, attacker} {
		ns := &corev1.Namespace{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: run.Status.TargetNamespace}, ns); err != nil {
			t.Fatal(err)
		}
		if ns.Labels[naming.LabelTestRunUID] != string(run.UID) {
			t.Errorf("%s's namespace %s carries UID %q, want %q", run.Name, ns.Name, ns.Labels[naming.LabelTestRunUID], run.UID)
		}
	}

	// A namespace of squat's computed name, made for another TestRun (the victim's labels and UID).
	squat := tw.MakeTestRun("squat", "team-a").Obj()
	taken := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: naming.TargetNamespace(squat.Namespace, squat.Name), Labels: map[string]string{
		naming.LabelTestRun: victim.Name, naming.LabelTestRunNS: victim.Namespace, naming.LabelRole: naming.RoleTarget,
		naming.LabelTestRunUID: string(victim.UID)}}}
	if err := env.Client.Create(ctx, taken); err != nil {
		t.Fatal(err)
	}
	create(t, squat)
	got := waitPhase(t, squat, v1alpha1.PhaseFailed, v1alpha1.ReasonTargetNamespaceConflict)
	if got.Status.TargetNamespace != "" {
		t.Errorf("status.targetNamespace %q names a namespace that is not the run's", got.Status.TargetNamespace)
	}
	if !strings.Contains(got.Status.Message, taken.Name) || !strings.Contains(got.Status.Message, "nothing in it was touched") {
		t.Errorf("message: %s", got.Status.Message)
	}
	if err := env.Client.Delete(ctx, got); err != nil {
		t.Fatal(err)
	}
	eventually(t, "squat deleted", func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(squat), &v1alpha1.TestRun{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there: %w", err)
		}
		return nil
	})
	for _, name := range []string{taken.Name, victim.Status.TargetNamespace} {
		ns := &corev1.Namespace{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, ns); err != nil || !ns.DeletionTimestamp.IsZero() {
			t.Errorf("namespace %s, not squat's, was deleted with it: %v %v", name, err, ns.DeletionTimestamp)
		}
	}
	waitPhase(t, victim, v1alpha1.PhaseRunning, "") // the victim runs on
}

// TestTargetLostMidRun: the target's namespace, or its workload, deleted while the load runs
// ends the run Failed TargetLost, with what the runners measured until then kept and marked
// partial; not Succeeded with a verdict on a load that hit a vanishing target.
func TestTargetLostMidRun(t *testing.T) {
	for _, tc := range []struct {
		name string
		lose func(t *testing.T, k *kubelet)
		says string
	}{
		{"namespace deleted", func(t *testing.T, k *kubelet) {
			// envtest has no namespace controller: the namespace stays Terminating.
			if err := env.Client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: k.targetNS()}}); err != nil {
				t.Fatal(err)
			}
		}, "is being deleted"},
		{"workload deleted", func(t *testing.T, k *kubelet) {
			d := k.targetDeployments()[0]
			if err := env.Client.Delete(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: d.Namespace, Name: d.Name}}); err != nil {
				t.Fatal(err)
			}
		}, "was deleted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := setup(t)
			run := tw.MakeTestRun("lost", ns).Parallelism(2).Devices(20, "1s").Duration("1m").Obj()
			k, pods := startRunning(t, run, 2)
			tc.lose(t, k)
			eventually(t, "the runners stopped", func() error {
				if runner.stops(pods[0]) == 0 || runner.stops(pods[1]) == 0 {
					return fmt.Errorf("stops %d, %d", runner.stops(pods[0]), runner.stops(pods[1]))
				}
				return nil
			})
			start := time.Now()
			for _, pod := range pods {
				logs.set(pod, load(pod, start), nil)
				k.Finish(pod, decide.ExitStopped, "Error")
			}
			got := waitPhase(t, run, v1alpha1.PhaseFailed, v1alpha1.ReasonTargetLost)
			for _, part := range []string{tc.says, "while the load ran", "run the test again", "partial"} {
				if !strings.Contains(got.Status.Message, part) {
					t.Errorf("message lacks %q: %s", part, got.Status.Message)
				}
			}
			if got.Status.Results == nil || !got.Status.Results.Partial || got.Status.Results.Requests.Total != 200 {
				t.Errorf("want the runners' 200 requests kept, partial: %+v", got.Status.Results)
			}
		})
	}
}

// TestOrphanSweeper: a user strips the target-cleanup finalizer and deletes a running TestRun.
// After the grace the sweeper deletes its target namespace, exactly (UID precondition), with an
// event. A namespace that names the same TestRun but carries no UID (not provably fleetbench's),
// and the namespace of a live TestRun, are never touched.
func TestOrphanSweeper(t *testing.T) {
	ns := setup(t)
	alive := tw.MakeTestRun("alive", ns).Devices(10, "1s").Duration("1m").Obj()
	startRunning(t, alive, 1)
	orphan := tw.MakeTestRun("orphan", ns).Devices(10, "1s").Duration("1m").Obj()
	startRunning(t, orphan, 1)
	orphan = waitPhase(t, orphan, v1alpha1.PhaseRunning, "")
	unlabelled := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "not-fleetbench-", Labels: map[string]string{
		naming.LabelTestRun: orphan.Name, naming.LabelTestRunNS: ns, naming.LabelRole: naming.RoleTarget}}}
	if err := env.Client.Create(ctx, unlabelled); err != nil {
		t.Fatal(err)
	}

	orphan.Finalizers = nil
	if err := env.Client.Update(ctx, orphan); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(ctx, orphan); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(orphan), &v1alpha1.TestRun{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the TestRun without its finalizer is still there: %v", err)
	}
	eventually(t, "the orphaned target namespace deleted", func() error {
		got := &corev1.Namespace{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: orphan.Status.TargetNamespace}, got); err != nil {
			return client.IgnoreNotFound(err)
		}
		if got.DeletionTimestamp.IsZero() {
			return fmt.Errorf("namespace %s still running", got.Name)
		}
		return nil
	})
	eventually(t, "an OrphanDeleted event", func() error {
		var list eventsv1.EventList
		if err := env.Client.List(ctx, &list, client.InNamespace("default")); err != nil {
			return err
		}
		for _, e := range list.Items {
			if e.Reason == "OrphanDeleted" && e.Regarding.Name == orphan.Status.TargetNamespace && strings.Contains(e.Note, string(orphan.UID)) {
				return nil
			}
		}
		return fmt.Errorf("%d events, none OrphanDeleted for %s", len(list.Items), orphan.Status.TargetNamespace)
	})
	// The unlabelled namespace was there all along, named the same TestRun and would have been
	// swept with it; another grace passes for good measure.
	time.Sleep(testOrphanGrace + time.Second)
	for _, name := range []string{unlabelled.Name, naming.TargetNamespace(ns, alive.Name)} {
		got := &corev1.Namespace{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, got); err != nil || !got.DeletionTimestamp.IsZero() {
			t.Errorf("namespace %s was touched: %v %v", name, err, got.DeletionTimestamp)
		}
	}
	waitPhase(t, alive, v1alpha1.PhaseRunning, "")
}

// TestReleaseTakesOnlyItsOwnFromASharedNamespace: in a target namespace runs share, an object
// named and labelled as this run's but carrying another run's UID (an earlier TestRun of the
// same name) is neither deleted nor waited for by this run's cleanup; its own objects are.
func TestReleaseTakesOnlyItsOwnFromASharedNamespace(t *testing.T) {
	shared := setup(t) // a namespace the test uses as the admin's shared one
	run := tw.MakeTestRun("load", "team-x").Obj()
	run.UID, run.CreationTimestamp = "uid-now", metav1.Now()
	run.Spec.Target.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "cred"}}
	earlier := run.DeepCopy()
	earlier.UID = "uid-earlier"
	objects := func(r *v1alpha1.TestRun, object string) []client.Object {
		labels := map[string]string{naming.LabelTestRunUID: string(r.UID)}
		for k, v := range target.RunLabels(r) {
			labels[k] = v
		}
		meta := func(name string) metav1.ObjectMeta {
			return metav1.ObjectMeta{Namespace: shared, Name: name, Labels: labels}
		}
		sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": object}}
		return []client.Object{
			&appsv1.Deployment{ObjectMeta: meta(naming.SharedTargetObject(r.Namespace, r.Name, object)), Spec: appsv1.DeploymentSpec{Selector: sel,
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel.MatchLabels},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}}},
			&corev1.Secret{ObjectMeta: meta(target.PullSecretName(r, "cred", target.Options{SharedNamespace: true}))},
		}
	}
	ours, theirs := objects(run, "stack"), objects(earlier, "web")
	theirs = theirs[:1] // a pull Secret copy has one name per run name: the earlier one's is below
	secret := objects(earlier, "web")[1]
	for _, o := range append(append(theirs, ours[0]), secret) {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	r := admit.New(&runenv.Env{Client: env.Client, APIReader: env.Client, Options: runenv.Options{TargetNamespace: shared}})
	left, err := r.ReleaseTarget(ctx, run, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 1 || !strings.Contains(left[0], ours[0].GetName()) {
		t.Errorf("left %v, want only its own Deployment %s (deleted just now)", left, ours[0].GetName())
	}
	for _, o := range []client.Object{theirs[0], secret} {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(o), o); err != nil || !o.GetDeletionTimestamp().IsZero() {
			t.Errorf("%T %s of the earlier run was deleted: %v", o, o.GetName(), err)
		}
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(ours[0]), ours[0]); err == nil && ours[0].GetDeletionTimestamp().IsZero() {
		t.Errorf("its own Deployment %s is still there", ours[0].GetName())
	}
}

// TestOrphanSweeperSharedNamespace: in a namespaced install's shared target namespace, objects
// carrying the UID of a TestRun that is gone are deleted after the grace; one without a UID
// label, and one of a live TestRun (by UID), are not. The manager acts with the namespaced
// install's Roles only.
func TestOrphanSweeperSharedNamespace(t *testing.T) {
	e, err := testenv.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Stop() })
	c := e.Client
	const watched, shared = "team-a", "fb-targets"
	for _, ns := range []string{watched, shared} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	live := tw.MakeTestRun("live", watched).External("http://example.test").Obj()
	if err := c.Create(ctx, live); err != nil {
		t.Fatal(err)
	}
	service := func(name, run, uid string) *corev1.Service {
		labels := target.RunLabels(tw.MakeTestRun(run, watched).Obj())
		if uid != "" {
			labels[naming.LabelTestRunUID] = uid
		}
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: shared, Name: name, Labels: labels},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	}
	gone := service("gone", "ghost", "uid-ghost")
	keep := []*corev1.Service{service("no-uid", "ghost", ""), service("live-owner", "live", string(live.UID)),
		service("earlier-live", "live", "uid-earlier")} // the last is an orphan too: another UID
	for _, o := range append([]*corev1.Service{gone}, keep...) {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	mgr, err := startManagerIn(e, controller.Namespaces{Watch: []string{watched}, Target: shared})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mgr.Stop() })
	for _, o := range []*corev1.Service{gone, keep[2]} {
		eventually(t, "orphan "+o.Name+" deleted", func() error {
			if err := c.Get(ctx, client.ObjectKeyFromObject(o), &corev1.Service{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("still there: %w", err)
			}
			return nil
		})
	}
	time.Sleep(testOrphanGrace + time.Second)
	for _, o := range keep[:2] {
		if err := c.Get(ctx, client.ObjectKeyFromObject(o), &corev1.Service{}); err != nil {
			t.Errorf("service %s was deleted: %v", o.Name, err)
		}
	}
}

// A ConfigMap under the name fleetbench keeps a run's script in, that the run did not make, is
// neither mounted into its runners nor deleted with it: the run ends ScriptNotFound saying so.
func TestSquattedScriptConfigMapIsNeitherUsedNorDeleted(t *testing.T) {
	ns := setup(t)
	run := tw.MakeTestRun("squatted", ns).Obj()
	squat := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: naming.ScriptConfigMap(run.Name), Namespace: ns},
		Data: map[string]string{"test.js": "export default function () {}"}}
	if err := env.Client.Create(ctx, squat); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	got := waitPhase(t, run, v1alpha1.PhaseFailed, v1alpha1.ReasonScriptNotFound)
	if !strings.Contains(got.Status.Message, squat.Name) {
		t.Errorf("message %q does not name the ConfigMap", got.Status.Message)
	}
	if err := env.Client.Delete(ctx, run); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the TestRun gone", func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(run), &v1alpha1.TestRun{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there: %w", err)
		}
		return nil
	})
	kept := &corev1.ConfigMap{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(squat), kept); err != nil || kept.UID != squat.UID {
		t.Errorf("the squatting ConfigMap was deleted with the run (%v)", err)
	}
}
