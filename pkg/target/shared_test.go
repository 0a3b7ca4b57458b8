package target

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/naming"
)

// TestSharedNamespaceTargets: two TestRuns' targets in one namespace an admin made. Every object
// carries its run in its name and labels, the runners' variables point at the run's own
// Services, the policy fences only the run's pods, and nothing claims the namespace.
func TestSharedNamespaceTargets(t *testing.T) {
	const ns = "fb-targets"
	build := func(name, runNS string, sizing v1alpha1.SizingMode, opts Options) *Objects {
		t.Helper()
		tr := tw.MakeTestRun(name, runNS).Sizing(sizing).Components(
			v1alpha1.Component{Name: "web", Kind: v1alpha1.ComponentWebServer, Share: ptr.To[int32](50)},
			v1alpha1.Component{Name: "db", Kind: v1alpha1.ComponentDatabase, Share: ptr.To[int32](50)}).Obj()
		tr.Spec.Target.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "registry.cred"}}
		objs, err := Build(tr, c1, ns, opts)
		if err != nil {
			t.Fatal(err)
		}
		return objs
	}
	shared := Options{SharedNamespace: true}
	for _, tc := range []struct {
		name        string
		sizing      v1alpha1.SizingMode
		deployments []string
	}{
		{"one machine", v1alpha1.SizingOneMachine, []string{naming.SharedTargetObject("team-a", "load", "stack")}},
		{"per component", v1alpha1.SizingPerComponent, []string{
			naming.SharedTargetObject("team-a", "load", "web"), naming.SharedTargetObject("team-a", "load", "db")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := build("load", "team-a", tc.sizing, shared), build("load", "team-b", tc.sizing, shared)
			if a.Namespace != nil || a.Quota != nil {
				t.Errorf("a shared namespace is the admin's: namespace %v, quota %v", a.Namespace, a.Quota)
			}
			names := map[string]bool{}
			for _, objs := range []*Objects{a, b} {
				objects := []interface {
					GetName() string
					GetNamespace() string
					GetLabels() map[string]string
				}{objs.NetworkPolicy}
				for _, d := range objs.Deployments {
					objects = append(objects, d)
				}
				for _, s := range objs.Services {
					objects = append(objects, s)
				}
				for _, o := range objects {
					// A Deployment and a Service may share a name; two of one kind may not.
					key := fmt.Sprintf("%T %s/%s", o, o.GetNamespace(), o.GetName())
					if names[key] {
						t.Errorf("two objects: %s", key)
					}
					names[key] = true
					if errs := validation.IsDNS1035Label(o.GetName()); len(errs) > 0 {
						t.Errorf("%s: %v", o.GetName(), errs)
					}
					if o.GetNamespace() != ns || o.GetLabels()[naming.LabelTestRunNS] == "" || o.GetLabels()[naming.LabelTestRun] != "load" {
						t.Errorf("%s in %s labelled %v", o.GetName(), o.GetNamespace(), o.GetLabels())
					}
				}
			}
			for i, want := range tc.deployments {
				d := a.Deployments[i]
				if d.Name != want {
					t.Errorf("deployment %d is %s, want %s", i, d.Name, want)
				}
				if sel := d.Spec.Selector.MatchLabels; sel[naming.LabelTestRunNS] != "team-a" || sel[naming.LabelTestRun] != "load" {
					t.Errorf("deployment %s selects %v: it would adopt another run's pods", d.Name, sel)
				}
				refs := d.Spec.Template.Spec.ImagePullSecrets
				if len(refs) != 1 || refs[0].Name != naming.SharedTargetObject("team-a", "load", "pull-registry.cred") {
					t.Errorf("pull secrets %v, want the run's copy", refs)
				}
			}
			web := naming.SharedTargetObject("team-a", "load", "web")
			env := envMap(a.Env)
			if env["TARGET_WEB_HOST"] != web+"."+ns+".svc" || env["TARGET_WEB_URL"] != "http://"+web+"."+ns+".svc:80" || env["TARGET_DB_PORT"] != "5432" {
				t.Errorf("runners would not reach the run's own Services: %v", env)
			}
			if a.Services[0].Name != web || a.Services[0].Spec.Selector[naming.LabelTestRunNS] != "team-a" {
				t.Errorf("service %s selects %v", a.Services[0].Name, a.Services[0].Spec.Selector)
			}
			policy := a.NetworkPolicy.Spec
			if policy.PodSelector.MatchLabels[naming.LabelTestRunNS] != "team-a" || policy.PodSelector.MatchLabels[naming.LabelTestRun] != "load" {
				t.Errorf("the policy must select only this run's target pods: %v", policy.PodSelector)
			}
			from := policy.Ingress[0].From
			if from[0].NamespaceSelector.MatchLabels[corev1.LabelMetadataName] != "team-a" || from[0].PodSelector.MatchLabels[naming.LabelRole] != naming.RoleRunner ||
				from[1].PodSelector.MatchLabels[naming.LabelTestRunNS] != "team-a" || from[1].NamespaceSelector != nil {
				t.Errorf("the policy must admit this run's runners and its own target pods only: %+v", from)
			}
			src := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "registry.cred", Namespace: "team-a"}, Type: corev1.SecretTypeDockerConfigJson}
			secret := PullSecret(tw.MakeTestRun("load", "team-a").Obj(), src, ns, shared)
			if secret.Name != a.Deployments[0].Spec.Template.Spec.ImagePullSecrets[0].Name || secret.Namespace != ns {
				t.Errorf("the copied Secret %s/%s is not the one the pods name", secret.Namespace, secret.Name)
			}
		})
	}

	// A namespace of the run's own keeps the names runs have always had.
	own := build("load", "team-a", v1alpha1.SizingOneMachine, Options{})
	if own.Namespace == nil || own.Quota == nil || own.Deployments[0].Name != "target-stack" || own.Services[0].Name != "web" ||
		own.NetworkPolicy.Name != "runners-only" || len(own.NetworkPolicy.Spec.PodSelector.MatchLabels) != 0 ||
		own.Deployments[0].Spec.Template.Spec.ImagePullSecrets[0].Name != "registry.cred" {
		t.Errorf("own namespace: %s %s %s %v", own.Deployments[0].Name, own.Services[0].Name, own.NetworkPolicy.Name, own.NetworkPolicy.Spec.PodSelector)
	}
}
