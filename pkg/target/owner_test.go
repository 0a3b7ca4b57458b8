package target

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/naming"
)

// TestEveryTargetObjectCarriesItsRunsUID: what the operator may later delete (the namespace, and
// every object it makes, in a namespace of its own or a shared one) names the run's UID, and only
// the run of that UID owns it.
func TestEveryTargetObjectCarriesItsRunsUID(t *testing.T) {
	run := tw.MakeTestRun("load", "team-a").Obj()
	run.UID = types.UID("0b3a2c4e-1111-2222-3333-444455556666")
	run.Spec.Target.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "cred"}}
	for _, opts := range []Options{{}, {SharedNamespace: true}} {
		objs, err := Build(run, c1, "ns", opts)
		if err != nil {
			t.Fatal(err)
		}
		all := []client.Object{objs.NetworkPolicy, PullSecret(run, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "cred"}}, "ns", opts)}
		if objs.Namespace != nil {
			all = append(all, objs.Namespace, objs.Quota)
		}
		for _, d := range objs.Deployments {
			all = append(all, d)
		}
		for _, s := range objs.Services {
			all = append(all, s)
		}
		for _, o := range all {
			if got := o.GetLabels()[naming.LabelTestRunUID]; got != string(run.UID) {
				t.Errorf("shared %v: %T %s carries UID %q, want %q", opts.SharedNamespace, o, o.GetName(), got, run.UID)
			}
			if !OwnedBy(o, run) {
				t.Errorf("shared %v: %T %s is not owned by its own run", opts.SharedNamespace, o, o.GetName())
			}
		}
	}
}

// TestOwnedBy: a name and labels that read like the run's prove nothing; the UID does.
func TestOwnedBy(t *testing.T) {
	created := metav1.NewTime(time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC))
	run := tw.MakeTestRun("x", "team-a-prod").Obj()
	run.UID, run.CreationTimestamp = "uid-victim", created
	obj := func(ns, name, uid string, at time.Time) *corev1.Namespace {
		l := map[string]string{naming.LabelTestRun: name, naming.LabelTestRunNS: ns}
		if uid != "-" {
			l[naming.LabelTestRunUID] = uid
		}
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Labels: l, CreationTimestamp: metav1.NewTime(at)}}
	}
	for _, tc := range []struct {
		name string
		obj  *corev1.Namespace
		want bool
	}{
		{"its UID", obj("team-a-prod", "x", "uid-victim", created.Add(time.Second)), true},
		{"another tenant's run", obj("team-a", "prod-x", "uid-attacker", created.Add(time.Second)), false},
		{"its name, another UID (re-created)", obj("team-a-prod", "x", "uid-earlier", created.Add(time.Second)), false},
		{"its name, an empty UID", obj("team-a-prod", "x", "", created.Add(time.Second)), false},
		{"no labels at all", &corev1.Namespace{}, false},
		{"made before UIDs, after the run", obj("team-a-prod", "x", "-", created.Time), true},
		{"made before UIDs, before the run", obj("team-a-prod", "x", "-", created.Add(-time.Second)), false},
	} {
		if got := OwnedBy(tc.obj, run); got != tc.want {
			t.Errorf("%s: owned %v, want %v", tc.name, got, tc.want)
		}
	}
}
