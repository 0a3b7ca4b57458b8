package controller

import (
	"maps"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/naming"
)

// TestSlimKeepsOnlyWhatIsRead: whatever a tenant puts on an object carrying fleetbench's label
// (a 1 MiB ConfigMap, a pod with huge annotations or spec), the cache keeps of each kind only
// the fields the controllers read: status, labels, owners, a pod's node.
func TestSlimKeepsOnlyWhatIsRead(t *testing.T) {
	huge := strings.Repeat("x", 1<<20)
	meta := func(role string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: role, Namespace: "team-a", UID: "u-1", Labels: map[string]string{naming.LabelRole: role},
			Annotations:     map[string]string{"big": huge},
			OwnerReferences: []metav1.OwnerReference{{Kind: "Job", Name: "j", UID: "job-uid", Controller: ptr.To(true)}},
			ManagedFields:   []metav1.ManagedFieldsEntry{{Manager: "fleetbench"}}}
	}
	spec := corev1.PodSpec{NodeName: "node-2", Containers: []corev1.Container{{Name: "k6", Env: []corev1.EnvVar{{Name: "A", Value: huge}}}}}
	slim := func(obj client.Object) client.Object {
		out, err := Slim(obj)
		if err != nil {
			t.Fatal(err)
		}
		o := out.(client.Object)
		if o.GetAnnotations() != nil || o.GetManagedFields() != nil {
			t.Errorf("%T: annotations or managed fields kept", o)
		}
		if o.GetLabels()[naming.LabelRole] == "" || len(o.GetOwnerReferences()) != 1 || o.GetUID() != "u-1" {
			t.Errorf("%T: labels %v owners %v uid %q: labels, owners and identity stay", o, o.GetLabels(), o.GetOwnerReferences(), o.GetUID())
		}
		return o
	}
	for _, role := range []string{naming.RoleRunner, naming.RolePreflight, naming.RoleTarget, "anything"} {
		pod := slim(&corev1.Pod{ObjectMeta: meta(role), Spec: *spec.DeepCopy(), Status: corev1.PodStatus{PodIP: "10.0.0.7", Phase: corev1.PodRunning}}).(*corev1.Pod)
		if pod.Spec.NodeName != "node-2" || pod.Status.PodIP != "10.0.0.7" || len(pod.Spec.Containers) != 0 {
			t.Errorf("%s pod: node %q IP %q containers %d: node and status stay, the rest of the spec goes", role, pod.Spec.NodeName, pod.Status.PodIP, len(pod.Spec.Containers))
		}
	}
	job := slim(&batchv1.Job{ObjectMeta: meta(naming.RoleRunner), Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: spec}},
		Status: batchv1.JobStatus{Failed: 1}}).(*batchv1.Job)
	if len(job.Spec.Template.Spec.Containers) != 0 || job.Status.Failed != 1 {
		t.Errorf("Job: template %+v status %+v, want no template and the status", job.Spec.Template, job.Status)
	}
	cm := slim(&corev1.ConfigMap{ObjectMeta: meta(naming.RoleResults), Data: map[string]string{"a": huge},
		BinaryData: map[string][]byte{"b": []byte(huge)}}).(*corev1.ConfigMap)
	if cm.Data != nil || cm.BinaryData != nil {
		t.Errorf("ConfigMap: data kept")
	}
	res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	d := slim(&appsv1.Deployment{ObjectMeta: meta(naming.RoleTarget), Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"c": "web"}, Annotations: map[string]string{"big": huge}},
		Spec:       corev1.PodSpec{Containers: spec.Containers, Resources: &corev1.ResourceRequirements{Limits: res}}}},
		Status: appsv1.DeploymentStatus{ReadyReplicas: 1}}).(*appsv1.Deployment)
	tpl := d.Spec.Template
	if len(tpl.Spec.Containers) != 0 || tpl.Annotations != nil || tpl.Labels["c"] != "web" || tpl.Spec.Resources == nil || d.Status.ReadyReplicas != 1 {
		t.Errorf("Deployment: template %+v status %+v, want its labels, pod-level resources and status only", tpl, d.Status)
	}
	svc := slim(&corev1.Service{ObjectMeta: meta(naming.RoleTarget), Spec: corev1.ServiceSpec{Selector: map[string]string{"a": huge}}}).(*corev1.Service)
	np := slim(&networkingv1.NetworkPolicy{ObjectMeta: meta(naming.RoleTarget), Spec: networkingv1.NetworkPolicySpec{PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"a": huge}}}}).(*networkingv1.NetworkPolicy)
	if svc.Spec.Selector != nil || np.Spec.PodSelector.MatchLabels != nil {
		t.Errorf("Service %+v, NetworkPolicy %+v: specs kept", svc.Spec, np.Spec)
	}
	slim(&corev1.Namespace{ObjectMeta: meta("ns")})
	slim(&corev1.ResourceQuota{ObjectMeta: meta("quota")})
	// Every kind the cache selects by label is slimmed.
	for obj, by := range CacheOptions(Namespaces{}).ByObject {
		if by.Transform == nil {
			t.Errorf("%T is cached without a transform", obj)
		}
	}
}

// TestCacheNamespaces: with watched namespaces the cache holds those and the shared target
// namespace; with fresh target namespaces, the target's kinds everywhere.
func TestCacheNamespaces(t *testing.T) {
	keys := func(m map[string]cache.Config) []string {
		out := slices.Collect(maps.Keys(m))
		slices.Sort(out)
		return out
	}
	for _, tc := range []struct {
		name        string
		ns          Namespaces
		defaults    []string
		podsEvery   bool
		jobsDefault bool
	}{
		{name: "all namespaces", ns: Namespaces{}, jobsDefault: true},
		{name: "a shared target only", ns: Namespaces{Target: "fb-targets"}, jobsDefault: true},
		{name: "watched and a shared target", ns: Namespaces{Watch: []string{"team-a", "team-b"}, Target: "fb-targets"},
			defaults: []string{"fb-targets", "team-a", "team-b"}, jobsDefault: true},
		{name: "watched, target among them", ns: Namespaces{Watch: []string{"team-a", "fb-targets"}, Target: "fb-targets"},
			defaults: []string{"fb-targets", "team-a"}, jobsDefault: true},
		{name: "watched, fresh targets", ns: Namespaces{Watch: []string{"team-a"}}, defaults: []string{"team-a"}, podsEvery: true, jobsDefault: true},
	} {
		opts := CacheOptions(tc.ns)
		if got := keys(opts.DefaultNamespaces); !slices.Equal(got, tc.defaults) {
			t.Errorf("%s: default namespaces %v, want %v", tc.name, got, tc.defaults)
		}
		for obj, by := range opts.ByObject {
			if _, ok := obj.(*v1alpha1.TestRun); ok {
				// Fleetbench's own kind: every one is cached, slimmed.
				if by.Transform == nil || by.Label != nil {
					t.Errorf("%s: TestRuns cached with label %v, transform set %v; want all, slimmed", tc.name, by.Label, by.Transform != nil)
				}
				continue
			}
			_, every := by.Namespaces[cache.AllNamespaces]
			switch obj.(type) {
			case *corev1.Pod, *appsv1.Deployment, *corev1.Service:
				if every != tc.podsEvery {
					t.Errorf("%s: %T cached in every namespace: %v, want %v", tc.name, obj, every, tc.podsEvery)
				}
			case *batchv1.Job, *corev1.ConfigMap:
				if by.Namespaces != nil != !tc.jobsDefault {
					t.Errorf("%s: %T has its own namespaces %v; runner Jobs live in the watched namespaces", tc.name, obj, by.Namespaces)
				}
			}
			if by.Label == nil {
				t.Errorf("%s: %T is cached whole", tc.name, obj)
			}
		}
	}
}
