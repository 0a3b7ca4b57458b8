package capacityplan

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/naming"
	"fleetbench.dev/fleetbench/pkg/target"
)

// TestTargetGone: Serial waits for a finished child's target namespace to go or, where targets
// share one (--target-namespace), for the child's own Deployments and pods to go; another
// run's objects there do not hold it. (A fake client stands in for the cache.)
func TestTargetGone(t *testing.T) {
	child := tw.MakeTestRun("plan-c1-0", "team-a").Obj()
	child.Status.TargetNamespace = "fb-targets"
	other := tw.MakeTestRun("plan-c1-1", "team-a").Obj()
	in := func(o client.Object, run string) client.Object {
		labels := target.RunLabels(tw.MakeTestRun(run, "team-a").Obj())
		o.SetNamespace("fb-targets")
		o.SetName(naming.SharedTargetObject("team-a", run, "stack"))
		o.SetLabels(labels)
		return o
	}
	fresh := tw.MakeTestRun("plan-c2-2", "team-a").Obj()
	fresh.UID = "uid-fresh"
	ownNS := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: naming.TargetNamespace("team-a", fresh.Name),
		Labels: map[string]string{naming.LabelTestRun: fresh.Name, naming.LabelTestRunNS: "team-a", naming.LabelTestRunUID: "uid-fresh"}}}
	// Another owner's namespace of that name is not the child's target: it does not hold Serial.
	othersNS := ownNS.DeepCopy()
	othersNS.Labels[naming.LabelTestRunUID] = "uid-other"
	for _, tc := range []struct {
		name    string
		shared  string
		objects []client.Object
		run     string
		gone    bool
	}{
		{"shared, its Deployment left", "fb-targets", []client.Object{in(&appsv1.Deployment{}, child.Name)}, child.Name, false},
		{"shared, its pod left", "fb-targets", []client.Object{in(&corev1.Pod{}, child.Name)}, child.Name, false},
		{"shared, another run's objects only", "fb-targets", []client.Object{in(&appsv1.Deployment{}, other.Name), in(&corev1.Pod{}, other.Name)}, child.Name, true},
		{"own namespace still there", "", []client.Object{ownNS}, fresh.Name, false},
		{"own namespace gone", "", nil, fresh.Name, true},
		{"another owner's namespace of its name", "", []client.Object{othersNS}, fresh.Name, true},
	} {
		r := &Reconciler{Client: fake.NewClientBuilder().WithObjects(tc.objects...).Build(), Options: Options{TargetNamespace: tc.shared}}
		run := child
		if tc.run == fresh.Name {
			run = fresh
		}
		gone, err := r.targetGone(ctx, run)
		if err != nil || gone != tc.gone {
			t.Errorf("%s: gone %v, %v; want %v", tc.name, gone, err, tc.gone)
		}
	}
}
