package target

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// Snapshot copies what of a Profile sizes and places a target, for a TestRun's
// status.profile: the run then uses the copy only. A Profile whose nodeSelector or tolerations
// Kubernetes would refuse in a pod is refused here, with what an admin must fix, rather than
// cut to fit the status (a cut one would place pods elsewhere).
func Snapshot(p *v1alpha1.Profile) (v1alpha1.ProfileSnapshot, error) {
	spec := p.Spec.DeepCopy()
	out := v1alpha1.ProfileSnapshot{Name: p.Name, Generation: p.Generation, Spec: v1alpha1.ProfileSnapshotSpec{
		CPU: spec.CPU, Memory: spec.Memory, EphemeralStorage: spec.EphemeralStorage,
		ExtendedResources: spec.ExtendedResources, NodeSelector: spec.NodeSelector,
	}}
	bad := func(what string, errs []string) error {
		return fmt.Errorf("the Profile %s has an invalid %s (%v): an admin must fix it", p.Name, what, errs)
	}
	for k, v := range spec.NodeSelector {
		if errs := append(validation.IsQualifiedName(k), validation.IsValidLabelValue(v)...); len(errs) > 0 {
			return v1alpha1.ProfileSnapshot{}, bad(fmt.Sprintf("nodeSelector entry %q", k), errs)
		}
	}
	for _, t := range spec.Tolerations {
		var errs []string
		if t.Key != "" {
			errs = validation.IsQualifiedName(t.Key)
		}
		errs = append(errs, validation.IsValidLabelValue(t.Value)...)
		if len(t.Operator) > 16 || len(t.Effect) > 32 {
			errs = append(errs, "operator or effect too long")
		}
		if len(errs) > 0 {
			return v1alpha1.ProfileSnapshot{}, bad(fmt.Sprintf("toleration %q", t.Key), errs)
		}
		out.Spec.Tolerations = append(out.Spec.Tolerations, v1alpha1.SnapshotToleration{Key: t.Key, Operator: string(t.Operator),
			Value: t.Value, Effect: string(t.Effect), TolerationSeconds: t.TolerationSeconds})
	}
	return out, nil
}

// FromSnapshot is the Profile a run's snapshot stands for: what Build, NotPermitted and the
// figures read. It has no namespaceSelector: that was checked when the snapshot was taken.
func FromSnapshot(s *v1alpha1.ProfileSnapshot) *v1alpha1.Profile {
	c := s.Spec.DeepCopy()
	p := &v1alpha1.Profile{ObjectMeta: metav1.ObjectMeta{Name: s.Name, Generation: s.Generation}, Spec: v1alpha1.ProfileSpec{
		CPU: c.CPU, Memory: c.Memory, EphemeralStorage: c.EphemeralStorage, ExtendedResources: c.ExtendedResources, NodeSelector: c.NodeSelector,
	}}
	for _, t := range c.Tolerations {
		p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Key: t.Key, Operator: corev1.TolerationOperator(t.Operator),
			Value: t.Value, Effect: corev1.TaintEffect(t.Effect), TolerationSeconds: t.TolerationSeconds})
	}
	return p
}
