package queue

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

func sizedPodSet(name string, count int32, cpu, mem string) kueue.PodSet {
	req := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}
	return kueue.PodSet{Name: kueue.PodSetReference(name), Count: count, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: req}}}}}}
}

func TestPodSetsDiffer(t *testing.T) {
	want := []kueue.PodSet{sizedPodSet("target", 1, "1", "512Mi"), sizedPodSet("runners", 2, "500m", "256Mi")}
	withPlacement := []kueue.PodSet{sizedPodSet("target", 1, "1000m", "512Mi"), sizedPodSet("runners", 2, "0.5", "256Mi")}
	withPlacement[1].Template.Spec.NodeSelector = map[string]string{"zone": "a"}
	tests := []struct {
		name string
		got  []kueue.PodSet
		diff string
	}{
		{"the same, quantities written otherwise and placement added", withPlacement, ""},
		{"a pod set missing", want[:1], "1 pod sets, want 2"},
		{"fewer runners", []kueue.PodSet{want[0], sizedPodSet("runners", 1, "500m", "256Mi")}, "pod set 1 is runners x1, want runners x2"},
		{"another name", []kueue.PodSet{sizedPodSet("other", 1, "1", "512Mi"), want[1]}, "pod set 0 is other x1, want target x1"},
		{"less cpu", []kueue.PodSet{want[0], sizedPodSet("runners", 2, "100m", "256Mi")}, "pod set runners asks 100m cpu a pod, want 500m"},
		{"a resource more", []kueue.PodSet{want[0], func() kueue.PodSet {
			p := sizedPodSet("runners", 2, "500m", "256Mi")
			p.Template.Spec.Overhead = corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}
			return p
		}()}, "pod set runners asks 1 nvidia.com/gpu a pod, want 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := PodSetsDiffer(want, tt.got); got != tt.diff {
				t.Errorf("PodSetsDiffer = %q, want %q", got, tt.diff)
			}
		})
	}
}
