package place

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// TestPlace: a pod gets the admitted labels and tolerations beside its own, each toleration
// once, and the TestRun's or Profile's maps and slices it was built from are not written.
func TestPlace(t *testing.T) {
	noSchedule := corev1.Toleration{Key: "spot", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
	own := map[string]string{"zone": "a"}
	ownTolerations := make([]corev1.Toleration, 1, 4) // room to append into: must not be used
	ownTolerations[0] = noSchedule
	pod := corev1.PodSpec{NodeSelector: own, Tolerations: ownTolerations}
	p := &v1alpha1.AdmittedPodSet{Name: "runners", NodeSelector: map[string]string{"pool": "spot"},
		Tolerations: []v1alpha1.SnapshotToleration{
			{Key: "spot", Operator: "Exists", Effect: "NoSchedule"},
			{Key: "gpu", Operator: "Exists", Effect: "NoExecute", TolerationSeconds: ptr.To[int64](30)},
		}}
	Place(&pod, p)
	if want := map[string]string{"zone": "a", "pool": "spot"}; !reflect.DeepEqual(pod.NodeSelector, want) {
		t.Errorf("nodeSelector %v, want %v", pod.NodeSelector, want)
	}
	want := []corev1.Toleration{noSchedule,
		{Key: "gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](30)}}
	if !reflect.DeepEqual(pod.Tolerations, want) {
		t.Errorf("tolerations %+v, want %+v", pod.Tolerations, want)
	}
	if len(own) != 1 || ownTolerations[:2][1] != (corev1.Toleration{}) {
		t.Errorf("Place wrote into the spec's own nodeSelector %v or tolerations %v", own, ownTolerations[:2])
	}
	before := pod.DeepCopy()
	Place(&pod, nil)
	if !reflect.DeepEqual(&pod, before) {
		t.Error("Place without an admission changed the pod")
	}
}

// TestSame: tolerations are equal by value, their seconds included.
func TestSame(t *testing.T) {
	a := corev1.Toleration{Key: "k", Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](30)}
	b := a
	b.TolerationSeconds = ptr.To[int64](30)
	if !Same(a, b) {
		t.Error("equal seconds behind two pointers are not the same")
	}
	b.TolerationSeconds = ptr.To[int64](31)
	if Same(a, b) || Same(a, corev1.Toleration{Key: "k", Effect: corev1.TaintEffectNoExecute}) {
		t.Error("different seconds are the same")
	}
}

// TestPodSet finds a pod set's placement, nil for none.
func TestPodSet(t *testing.T) {
	adm := &v1alpha1.QueueAdmission{PodSets: []v1alpha1.AdmittedPodSet{{Name: "target"}, {Name: "runners", Flavors: []string{"spot"}}}}
	if got := PodSet(adm, "runners"); got == nil || got.Flavors[0] != "spot" {
		t.Errorf("runners: %+v", got)
	}
	if PodSet(adm, "preflight") != nil || PodSet(nil, "runners") != nil {
		t.Error("a pod set without placement has one")
	}
}
