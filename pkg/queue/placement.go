package queue

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/queue/place"
	"fleetbench.dev/fleetbench/pkg/textsafe"
)

// Where Kueue's admission puts a run's pods. Kueue's job framework, starting an admitted job,
// reads each pod set's assigned ResourceFlavors and adds their nodeLabels to the pods'
// nodeSelector and their tolerations to the pods' own (pkg/podset FromAssignment, Merge); a
// label contradicting the job's own nodeSelector is a permanent error that finishes the
// Workload. Admission does the same for a run, once, when Kueue admits it; place.Place puts
// the result on a pod. The caller reads the flavors (Flavors names them).

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
			return nil, fmt.Errorf("the admission assigns flavors to pod set %q, which the run's Workload does not have", psa.Name)
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
					fn, name, k, v, name, k, tenantValue(own[k]), ownField(name))
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
			if !slices.ContainsFunc(ps.Tolerations, func(o v1alpha1.SnapshotToleration) bool { return place.Same(place.Toleration(o), place.Toleration(st)) }) {
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

// tenantValue is a value the run's author wrote, for a status message: printable, and no
// longer than a label value may be.
func tenantValue(v string) string {
	v = textsafe.Line(v)
	if len(v) > maxLabelValue {
		v = strings.ToValidUTF8(v[:maxLabelValue], "") + "…"
	}
	return v
}

// ownField names where a pod set's own nodeSelector comes from.
func ownField(podSet string) string {
	if podSet == PodSetTarget {
		return "the Profile's nodeSelector"
	}
	return "spec.runner.nodeSelector"
}
