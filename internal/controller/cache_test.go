package controller

import (
	"maps"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"fleetbench.dev/fleetbench/pkg/naming"
)

func TestSlimRunnersKeepsWhatReconcilesRead(t *testing.T) {
	spec := corev1.PodSpec{NodeName: "node-2", Containers: []corev1.Container{{Name: "k6", Env: []corev1.EnvVar{{Name: "A", Value: "b"}}}}}
	meta := func(role string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: role, Labels: map[string]string{naming.LabelRole: role},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "fleetbench"}}}
	}
	status := corev1.PodStatus{PodIP: "10.0.0.7", Phase: corev1.PodRunning}
	for _, tc := range []struct {
		role      string
		wholeSpec bool
	}{{naming.RoleRunner, false}, {naming.RolePreflight, false}, {naming.RoleTarget, true}} {
		out, err := SlimRunners(&corev1.Pod{ObjectMeta: meta(tc.role), Spec: *spec.DeepCopy(), Status: status})
		if err != nil {
			t.Fatal(err)
		}
		pod := out.(*corev1.Pod)
		if pod.Spec.NodeName != "node-2" || pod.Status.PodIP != "10.0.0.7" || pod.Labels[naming.LabelRole] != tc.role || pod.ManagedFields != nil {
			t.Errorf("%s pod: node %q IP %q labels %v managed fields %v: node, status and labels stay, managed fields go",
				tc.role, pod.Spec.NodeName, pod.Status.PodIP, pod.Labels, pod.ManagedFields)
		}
		if kept := len(pod.Spec.Containers) == 1; kept != tc.wholeSpec {
			t.Errorf("%s pod: containers kept %v, want %v", tc.role, kept, tc.wholeSpec)
		}
	}
	job := &batchv1.Job{ObjectMeta: meta(naming.RoleRunner), Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: spec}},
		Status: batchv1.JobStatus{Failed: 1}}
	out, err := SlimRunners(job)
	if err != nil {
		t.Fatal(err)
	}
	if j := out.(*batchv1.Job); len(j.Spec.Template.Spec.Containers) != 0 || j.Status.Failed != 1 {
		t.Errorf("runner Job: template %+v status %+v, want no template and the status", j.Spec.Template, j.Status)
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
