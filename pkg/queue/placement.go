package queue

import (
	"fmt"
	"maps"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// Where Kueue's admission puts a run's pods. Kueue's job framework, starting an admitted job,
// reads each pod set's assigned ResourceFlavors and adds their nodeLabels to the pods'
// nodeSelector and their tolerations to the pods' own (pkg/podset FromAssignment, Merge); a
// label contradicting the job's own nodeSelector is a permanent error that finishes the
// Workload. Admission does the same for a run, once, when Kueue admits it; Place puts the
// result on a pod. The caller reads the flavors (Flavors names them).

// Bounds of one pod set's placement, as status.admission holds it.
const (
	MaxFlavors     = v1alpha1.MaxAdmittedFlavors
	MaxNodeLabels  = v1alpha1.MaxAdmittedNodeLabels
	MaxTolerations = v1alpha1.MaxAdmittedTolerations
	// The sizes Kubernetes accepts in a pod's nodeSelector and tolerations.
	maxQualifiedName = 317
	maxLabelValue    = 63
	maxTolerationOp  = 16
	maxTaintEffect   = 32
)

// Flavors are the ResourceFlavors wl's admission assigns, each once, sorted.
func Flavors(wl *kueue.Workload) []string {
	if wl.Status.Admission == nil {
		return nil
	}
	var out []string
	for _, psa := range wl.Status.Admission.PodSetAssignments {
		out = append(out, assigned(psa)...)
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// assigned are the flavors of one pod set's assignment, each once, sorted.
func assigned(psa kueue.PodSetAssignment) []string {
	var out []string
	for _, f := range psa.Flavors {
		out = append(out, string(f))
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// Admission is where wl's admission puts the run's pods, from the flavors it assigns (flavors:
// by name, as read; a missing one is absent). The error says what makes the placement
// unusable, for the run's status: a flavor gone, flavors contradicting each other or the pod
// set's own nodeSelector (the run's spec.runner.nodeSelector or its Profile's), or more labels
// or tolerations than a pod set holds. Flavors are merged in name order, so the result does
// not depend on map order.
func Admission(wl *kueue.Workload, flavors map[string]*kueue.ResourceFlavor) (*v1alpha1.QueueAdmission, error) {
	if wl.Status.Admission == nil {
		return nil, fmt.Errorf("the Workload %s has no admission", wl.Name)
	}
	out := &v1alpha1.QueueAdmission{ClusterQueue: string(wl.Status.Admission.ClusterQueue)}
	for _, psa := range wl.Status.Admission.PodSetAssignments {
		i := slices.IndexFunc(wl.Spec.PodSets, func(ps kueue.PodSet) bool { return ps.Name == psa.Name })
		if i < 0 {
			return nil, fmt.Errorf("Kueue assigned flavors to pod set %q, which the run's Workload does not have", psa.Name)
		}
		ps, err := podSet(string(psa.Name), assigned(psa), wl.Spec.PodSets[i].Template.Spec.NodeSelector, flavors)
		if err != nil {
			return nil, err
		}
		out.PodSets = append(out.PodSets, ps)
	}
	return out, nil
}

// podSet merges the named flavors for pod set name, whose pods select own.
func podSet(name string, names []string, own map[string]string, flavors map[string]*kueue.ResourceFlavor) (v1alpha1.AdmittedPodSet, error) {
	ps := v1alpha1.AdmittedPodSet{Name: name, Flavors: names}
	if len(names) > MaxFlavors {
		return ps, fmt.Errorf("pod set %s was assigned %d ResourceFlavors, more than the %d a run keeps", name, len(names), MaxFlavors)
	}
	from := map[string]string{} // which flavor set each label, for messages
	for _, fn := range names {
		f := flavors[fn]
		if f == nil {
			return ps, fmt.Errorf("the ResourceFlavor %s assigned to pod set %s is not found", fn, name)
		}
		for _, k := range slices.Sorted(maps.Keys(f.Spec.NodeLabels)) {
			v := f.Spec.NodeLabels[k]
			switch {
			case len(k) > maxQualifiedName || len(v) > maxLabelValue:
				return ps, fmt.Errorf("the ResourceFlavor %s's node label %s is longer than a pod's nodeSelector holds", fn, k)
			case from[k] != "" && ps.NodeSelector[k] != v:
				return ps, fmt.Errorf("the ResourceFlavors %s and %s assigned to pod set %s set node label %s to %q and %q", from[k], fn, name, k, ps.NodeSelector[k], v)
			case own[k] != "" && own[k] != v:
				return ps, fmt.Errorf("the ResourceFlavor %s assigned to pod set %s selects %s=%s, but the %s select %s=%s (%s)",
					fn, name, k, v, name, k, own[k], ownField(name))
			}
			if ps.NodeSelector == nil {
				ps.NodeSelector = map[string]string{}
			}
			ps.NodeSelector[k], from[k] = v, fn
		}
		for _, t := range f.Spec.Tolerations {
			st := v1alpha1.SnapshotToleration{Key: t.Key, Operator: string(t.Operator), Value: t.Value, Effect: string(t.Effect), TolerationSeconds: t.TolerationSeconds}
			if len(st.Key) > maxQualifiedName || len(st.Value) > maxLabelValue || len(st.Operator) > maxTolerationOp || len(st.Effect) > maxTaintEffect {
				return ps, fmt.Errorf("a toleration of the ResourceFlavor %s is longer than a pod's tolerations hold", fn)
			}
			if !slices.ContainsFunc(ps.Tolerations, func(o v1alpha1.SnapshotToleration) bool { return sameToleration(toleration(o), toleration(st)) }) {
				ps.Tolerations = append(ps.Tolerations, st)
			}
		}
	}
	if len(ps.NodeSelector) > MaxNodeLabels || len(ps.Tolerations) > MaxTolerations {
		return ps, fmt.Errorf("the ResourceFlavors of pod set %s carry %d node labels and %d tolerations, more than the %d and %d a run keeps",
			name, len(ps.NodeSelector), len(ps.Tolerations), MaxNodeLabels, MaxTolerations)
	}
	return ps, nil
}

// ownField names where a pod set's own nodeSelector comes from.
func ownField(podSet string) string {
	if podSet == PodSetTarget {
		return "the Profile's nodeSelector"
	}
	return "spec.runner.nodeSelector"
}

// toleration is t as a pod carries it.
func toleration(t v1alpha1.SnapshotToleration) corev1.Toleration {
	return corev1.Toleration{Key: t.Key, Operator: corev1.TolerationOperator(t.Operator), Value: t.Value,
		Effect: corev1.TaintEffect(t.Effect), TolerationSeconds: t.TolerationSeconds}
}

// PodSetOf is the placement of pod set name in adm; nil when the run was not admitted by
// Kueue or the pod set has none.
func PodSetOf(adm *v1alpha1.QueueAdmission, name string) *v1alpha1.AdmittedPodSet {
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

// Place puts p on a pod: its node labels added to the pod's nodeSelector, its tolerations
// not already there added to the pod's. The pod's own maps and slices may be the TestRun's or
// the Profile's: they are copied, never written. Admission refused labels that contradict the
// pod's, so none is overwritten.
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
		t := toleration(st)
		if !slices.ContainsFunc(tolerations, func(o corev1.Toleration) bool { return sameToleration(o, t) }) {
			tolerations = append(tolerations, t)
		}
	}
	if len(tolerations) > 0 {
		pod.Tolerations = tolerations
	}
}

// sameToleration compares two tolerations by value, TolerationSeconds included.
func sameToleration(a, b corev1.Toleration) bool {
	as, bs := a.TolerationSeconds, b.TolerationSeconds
	a.TolerationSeconds, b.TolerationSeconds = nil, nil
	return a == b && (as == nil) == (bs == nil) && (as == nil || *as == *bs)
}
