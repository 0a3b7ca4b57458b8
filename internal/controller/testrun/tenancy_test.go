package testrun

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/naming"
	"fleetbench.dev/fleetbench/pkg/target"
)

// What a target takes from its tenant, and what it may not have (issue 36, item 4): the suite's
// manager copies labels team and cost-center and allows egress inside 10.0.0.0/8 only.

// labelNamespace sets labels on the test's namespace, as an admin would.
func labelNamespace(t *testing.T, ns string, labels map[string]string) {
	t.Helper()
	got := &corev1.Namespace{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: ns}, got); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(got.DeepCopy())
	if got.Labels == nil {
		got.Labels = map[string]string{}
	}
	for k, v := range labels {
		got.Labels[k] = v
	}
	if err := env.Client.Patch(ctx, got, patch); err != nil {
		t.Fatal(err)
	}
}

// TestTargetNamespaceTakesTheTenantsChosenLabels: the target namespace carries the tenant's
// labels the admin chose, as they were when it was made, and no other of the tenant's.
func TestTargetNamespaceTakesTheTenantsChosenLabels(t *testing.T) {
	ns := setup(t)
	labelNamespace(t, ns, map[string]string{"team": "payments", "cost-center": "cc-42", "mesh": "strict"})
	run := tw.MakeTestRun("labelled", ns).Obj()
	create(t, run)
	k := newKubelet(t, run)
	waitPhase(t, run, v1alpha1.PhaseProvisioning, "")
	got := &corev1.Namespace{}
	eventually(t, "the target namespace", func() error { return env.Client.Get(ctx, client.ObjectKey{Name: k.targetNS()}, got) })
	if got.Labels["team"] != "payments" || got.Labels["cost-center"] != "cc-42" {
		t.Errorf("target namespace labels %v, want the tenant's team and cost-center", got.Labels)
	}
	if _, ok := got.Labels["mesh"]; ok {
		t.Errorf("target namespace labels %v: took a label the admin did not choose", got.Labels)
	}
	if got.Labels[target.EnforceLabel] != string(v1alpha1.PodSecurityRestricted) || got.Labels[naming.LabelTestRunUID] == "" {
		t.Errorf("target namespace labels %v, want the operator's own Pod Security and ownership labels", got.Labels)
	}
	// Copied once: a later change of the tenant's labels is not followed.
	labelNamespace(t, ns, map[string]string{"team": "billing"})
	k.targetReady()
	waitPhase(t, run, v1alpha1.PhaseStarting, "")
	if err := env.Client.Get(ctx, client.ObjectKey{Name: k.targetNS()}, got); err != nil || got.Labels["team"] != "payments" {
		t.Errorf("target namespace labels %v (%v), want team=payments as copied", got.Labels, err)
	}
}

// TestEgressOutsideTheAllowListFails: a run whose egress reaches beyond the admin's allow-list
// ends Failed EgressNotAllowed, naming the field, the list and the fix, before anything is made
// (the chart's admission policy refuses it at apply; this is the manager's own check).
func TestEgressOutsideTheAllowListFails(t *testing.T) {
	ns := setup(t)
	run := tw.MakeTestRun("reach-out", ns).Obj()
	run.Spec.Target.Egress = []v1alpha1.TargetEgress{{CIDR: "10.20.0.0/16"}, {CIDR: "0.0.0.0/0", Ports: []v1alpha1.EgressPort{{Port: 443}}}}
	create(t, run)
	got := waitPhase(t, run, v1alpha1.PhaseFailed, v1alpha1.ReasonEgressNotAllowed)
	if err := saysAll(got.Status.Message, []string{"spec.target.egress[1].cidr 0.0.0.0/0", "--egress-allow-list: 10.0.0.0/8", "ask your admin"}); err != nil {
		t.Error(err)
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: naming.TargetNamespace(ns, run.Name)}, &corev1.Namespace{}); !apierrors.IsNotFound(err) {
		t.Errorf("a refused run's target namespace was made: %v", err)
	}
}

// TestKeptTargetIsReleasedWhenItsTimeRunsOut: a KeepUntilDeleted run keeps its target for its
// keepFor after the end (TargetKept True, saying until when), then releases it with a
// KeepExpired event and TargetKept False, while the TestRun and its verdict stay.
func TestKeptTargetIsReleasedWhenItsTimeRunsOut(t *testing.T) {
	ns := setup(t)
	run := tw.MakeTestRun("inspect", ns).Cleanup(v1alpha1.TargetKeepUntilDeleted).Obj()
	run.Spec.Cleanup.KeepFor = "4s"
	k, pods := startRunning(t, run, 1)
	logs.set(pods[0], load(pods[0], time.Now()), nil)
	k.Finish(pods[0], 0, "Completed")
	got := waitPhase(t, run, v1alpha1.PhaseSucceeded, v1alpha1.ReasonCompleted)
	verdict := got.Status.Verdict
	eventually(t, "TargetKept True", func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(run), got); err != nil {
			return err
		}
		c := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionTargetKept)
		if c == nil || c.Status != metav1.ConditionTrue || c.Reason != v1alpha1.ReasonKept {
			return fmt.Errorf("TargetKept = %+v", c)
		}
		return saysAll(c.Message, []string{"kept until", "4s after the run ended: spec.cleanup.keepFor"})
	})
	target := &corev1.Namespace{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: k.targetNS()}, target); err != nil || !target.DeletionTimestamp.IsZero() {
		t.Fatalf("the kept target is gone before its time: %v", err)
	}

	eventually(t, "the kept target released", func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(run), got); err != nil {
			return err
		}
		c := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionTargetKept)
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != v1alpha1.ReasonKeepExpired {
			return fmt.Errorf("TargetKept = %+v", c)
		}
		// envtest has no namespace controller: a deleted namespace stays Terminating.
		err := env.Client.Get(ctx, client.ObjectKey{Name: k.targetNS()}, target)
		if err == nil && target.DeletionTimestamp.IsZero() {
			return fmt.Errorf("target namespace %s not deleted", k.targetNS())
		}
		return client.IgnoreNotFound(err)
	})
	if got.Status.Phase != v1alpha1.PhaseSucceeded || got.Status.Verdict != verdict {
		t.Errorf("the release changed how the run ended: %s %s", got.Status.Phase, got.Status.Verdict)
	}
	eventually(t, "a KeepExpired event", func() error {
		var list eventsv1.EventList
		if err := env.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, e := range list.Items {
			if e.Reason == v1alpha1.ReasonKeepExpired && e.Regarding.Name == run.Name && strings.Contains(e.Note, "released") {
				return nil
			}
		}
		return fmt.Errorf("%d events, none KeepExpired", len(list.Items))
	})
}

// TestBuiltinProfileOnlyWhereOffered: a built-in Profile the admin offered only to labelled
// namespaces (the chart's builtinProfiles.offeredTo, as its namespaceSelector) ends a run
// elsewhere Failed NotPermitted, naming where to offer it, with nothing made; a run from a
// namespace carrying the label gets its target.
func TestBuiltinProfileOnlyWhereOffered(t *testing.T) {
	large := tw.MakeProfile("tenancy-h3", "12", "32Gi").ForNamespaces(map[string]string{"fleetbench.dev/large-profiles": "true"}).Obj()
	large.Labels = map[string]string{target.BuiltinLabel: "true"}
	if err := env.Client.Create(ctx, large); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	elsewhere := setup(t)
	refused := tw.MakeTestRun("big", elsewhere).Profile(large.Name).Obj()
	create(t, refused)
	got := waitPhase(t, refused, v1alpha1.PhaseFailed, v1alpha1.ReasonNotPermitted)
	if err := saysAll(got.Status.Message, []string{"Profile tenancy-h3", "fleetbench.dev/large-profiles=true", "builtinProfiles.offeredTo"}); err != nil {
		t.Error(err)
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: naming.TargetNamespace(elsewhere, refused.Name)}, &corev1.Namespace{}); !apierrors.IsNotFound(err) {
		t.Errorf("a refused run's target namespace was made: %v", err)
	}

	offered := setup(t)
	labelNamespace(t, offered, map[string]string{"fleetbench.dev/large-profiles": "true"})
	run := tw.MakeTestRun("big", offered).Profile(large.Name).Obj()
	create(t, run)
	if got := waitPhase(t, run, v1alpha1.PhaseProvisioning, ""); got.Status.Profile == nil || got.Status.Profile.Name != large.Name {
		t.Errorf("status.profile %+v, want %s fixed", got.Status.Profile, large.Name)
	}
}
