package target

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// TestSnapshotRoundTrip: what sizes and places a target survives the copy into status and
// back; the namespaceSelector (checked at the copy) and the description do not.
func TestSnapshotRoundTrip(t *testing.T) {
	storage := resource.MustParse("4Gi")
	p := &v1alpha1.Profile{ObjectMeta: metav1.ObjectMeta{Name: "c2", Generation: 7}, Spec: v1alpha1.ProfileSpec{
		CPU: resource.MustParse("2"), Memory: resource.MustParse("1Gi"), EphemeralStorage: &storage, Description: "two cores",
		ExtendedResources: map[corev1.ResourceName]resource.Quantity{"nvidia.com/gpu": resource.MustParse("1")},
		NodeSelector:      map[string]string{"pool": "bench"},
		Tolerations:       []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "bench", Effect: corev1.TaintEffectNoSchedule, TolerationSeconds: ptr.To[int64](5)}},
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}},
	}}
	snap, err := Snapshot(p)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Name != "c2" || snap.Generation != 7 {
		t.Errorf("snapshot names %s generation %d", snap.Name, snap.Generation)
	}
	want := p.DeepCopy()
	want.Spec.Description, want.Spec.NamespaceSelector = "", nil
	if diff := cmp.Diff(want.Spec, FromSnapshot(&snap).Spec); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	// The copy shares nothing with the Profile it was taken from.
	p.Spec.NodeSelector["pool"] = "other"
	if snap.Spec.NodeSelector["pool"] != "bench" {
		t.Error("the snapshot changed with the Profile")
	}
}

// TestSnapshotRefusesWhatNoPodTakes: a nodeSelector or toleration Kubernetes would refuse in a
// pod is refused at the copy, naming the Profile, instead of being cut to fit status.
func TestSnapshotRefusesWhatNoPodTakes(t *testing.T) {
	long := strings.Repeat("x", 64)
	for name, spec := range map[string]v1alpha1.ProfileSpec{
		"nodeSelector value": {NodeSelector: map[string]string{"pool": long}},
		"nodeSelector key":   {NodeSelector: map[string]string{strings.Repeat("k", 400): "v"}},
		"toleration key":     {Tolerations: []corev1.Toleration{{Key: "bad key"}}},
		"toleration value":   {Tolerations: []corev1.Toleration{{Key: "k", Value: long}}},
	} {
		_, err := Snapshot(&v1alpha1.Profile{ObjectMeta: metav1.ObjectMeta{Name: "odd"}, Spec: spec})
		if err == nil || !strings.Contains(err.Error(), "Profile odd") || !strings.Contains(err.Error(), "an admin must fix it") {
			t.Errorf("%s: %v", name, err)
		}
	}
}
