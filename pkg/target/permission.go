package target

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// EnforceLabel is the label a namespace's Pod Security level is read from.
const EnforceLabel = "pod-security.kubernetes.io/enforce"

// BuiltinLabel marks the built-in Profiles (c1–c4, h0–h3) the chart and config/profiles ship;
// the admin offers them per namespace (the chart's builtinProfiles.offeredTo).
const BuiltinLabel = "fleetbench.dev/builtin"

// levelRank orders the Pod Security Standards from the strictest.
var levelRank = map[string]int{"restricted": 0, "baseline": 1, "privileged": 2}

// NotPermitted says why a TestRun in namespace ns may not have its target provisioned as its
// spec asks, or "" when it may. The operator creates the target's namespace with its own
// powers, so it grants no more than the TestRun's namespace would: a Pod Security level no
// higher than the one enforced there (clusterDefault where it has no label: the API server's
// own default, restricted unless an admin configured another), and a Profile whose
// namespaceSelector, if any, matches the namespace.
func NotPermitted(tr *v1alpha1.TestRun, ns *corev1.Namespace, profile *v1alpha1.Profile, clusterDefault string) string {
	if tr.Spec.Target.External == nil {
		asked := string(podSecurity(tr))
		if rank, source := enforced(ns, clusterDefault); levelRank[asked] > rank {
			return fmt.Sprintf("spec.target.podSecurity %s is above what namespace %s may run (%s): the target would escape its Pod Security; "+
				"use podSecurity restricted, or have an admin label the namespace %s=%s", asked, ns.Name, source, EnforceLabel, asked)
		}
	}
	if profile != nil && profile.Spec.NamespaceSelector != nil {
		selector, err := metav1.LabelSelectorAsSelector(profile.Spec.NamespaceSelector)
		if err != nil {
			return fmt.Sprintf("Profile %s has an invalid namespaceSelector (%v): an admin must fix it", profile.Name, err)
		}
		if !selector.Matches(labels.Set(ns.Labels)) {
			who := "an admin"
			if profile.Labels[BuiltinLabel] == "true" {
				who = "an admin to offer it here (the chart's builtinProfiles.offeredTo, or a label on the namespace that matches)"
			}
			return fmt.Sprintf("Profile %s may be used only from namespaces matching %s (its spec.namespaceSelector); namespace %s does not: "+
				"pick another profile (kubectl get profiles) or ask %s", profile.Name, selector, ns.Name, who)
		}
	}
	return ""
}

// SharedNamespaceRefuses says why the target of tr cannot run in ns, a namespace the targets of
// several TestRuns share (the operator's --target-namespace), or "" when it can. The operator
// never labels that namespace: its admin chose its Pod Security, and a target asking for more
// would only be refused pod by pod.
func SharedNamespaceRefuses(tr *v1alpha1.TestRun, ns *corev1.Namespace, clusterDefault string) string {
	if tr.Spec.Target.External != nil {
		return ""
	}
	asked := string(podSecurity(tr))
	if rank, source := enforced(ns, clusterDefault); levelRank[asked] > rank {
		return fmt.Sprintf("spec.target.podSecurity %s is above what the shared target namespace %s admits (%s); "+
			"use podSecurity restricted, or have an admin label namespace %s %s=%s", asked, ns.Name, source, ns.Name, EnforceLabel, asked)
	}
	return ""
}

// enforced is the Pod Security level ns enforces, as a rank, and where that was read from.
func enforced(ns *corev1.Namespace, clusterDefault string) (rank int, source string) {
	allowed, source := ns.Labels[EnforceLabel], fmt.Sprintf("its label %s=%s", EnforceLabel, ns.Labels[EnforceLabel])
	if allowed == "" {
		allowed, source = clusterDefault, fmt.Sprintf("no %s label, so the cluster default %s", EnforceLabel, clusterDefault)
	}
	rank, known := levelRank[allowed]
	if !known {
		rank, source = 0, fmt.Sprintf("its label %s=%s, not a level fleetbench knows, read as restricted", EnforceLabel, allowed)
	}
	return rank, source
}
