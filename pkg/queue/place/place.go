// Package place puts where Kueue's admission placed a run's pod set (status.admission, decided
// by pkg/queue) on the pods built for it. It imports no Kueue package, so the builders of pods
// (pkg/runners, pkg/target) and the modules that use them (the runner's) do not depend on
// Kueue's API module. Everything here is pure.
package place

import (
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// PodSet is the placement of pod set name in adm; nil when the run was not admitted by Kueue
// or the pod set has none.
func PodSet(adm *v1alpha1.QueueAdmission, name string) *v1alpha1.AdmittedPodSet {
	if adm == nil {
		return nil
	}
	for i := range adm.PodSets {
		if adm.PodSets[i].Name == name {
			return &adm.PodSets[i]
		}
	}
	return nil
}

// Place puts p on a pod: its node labels added to the pod's nodeSelector, its tolerations not
// already there added to the pod's. The pod's own maps and slices may be the TestRun's or the
// Profile's: they are copied, never written. The admission refused labels that contradict the
// pod's (queue.Admission), so none is overwritten.
func Place(pod *corev1.PodSpec, p *v1alpha1.AdmittedPodSet) {
	if p == nil {
		return
	}
	if len(p.NodeSelector) > 0 {
		sel := maps.Clone(pod.NodeSelector)
		if sel == nil {
			sel = map[string]string{}
		}
		maps.Copy(sel, p.NodeSelector)
		pod.NodeSelector = sel
	}
	tolerations := slices.Clone(pod.Tolerations)
	for _, st := range p.Tolerations {
		t := Toleration(st)
		if !slices.ContainsFunc(tolerations, func(o corev1.Toleration) bool { return Same(o, t) }) {
			tolerations = append(tolerations, t)
		}
	}
	if len(tolerations) > 0 {
		pod.Tolerations = tolerations
	}
}

// Toleration is t as a pod carries it.
func Toleration(t v1alpha1.SnapshotToleration) corev1.Toleration {
	return corev1.Toleration{Key: t.Key, Operator: corev1.TolerationOperator(t.Operator), Value: t.Value,
		Effect: corev1.TaintEffect(t.Effect), TolerationSeconds: t.TolerationSeconds}
}

// Same compares two tolerations by value, TolerationSeconds included.
func Same(a, b corev1.Toleration) bool {
	as, bs := a.TolerationSeconds, b.TolerationSeconds
	a.TolerationSeconds, b.TolerationSeconds = nil, nil
	return a == b && (as == nil) == (bs == nil) && (as == nil || *as == *bs)
}
