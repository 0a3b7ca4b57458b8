package target

import (
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/naming"
)

// objectNames names a target's objects: fixed names in a namespace of the run's own, names
// carrying the run in a namespace several runs share.
type objectNames struct {
	tr     *v1alpha1.TestRun
	shared bool
}

func (n objectNames) sharedName(object string) string {
	return naming.SharedTargetObject(n.tr.Namespace, n.tr.Name, object)
}

func (n objectNames) deployment(workload string) string {
	if n.shared {
		return n.sharedName(workload)
	}
	return naming.TargetWorkload(workload)
}

// service is also the host runners reach the component at (componentEnv).
func (n objectNames) service(component string) string {
	if n.shared {
		return n.sharedName(component)
	}
	return component
}

func (n objectNames) policy() string {
	if n.shared {
		return n.sharedName("runners-only")
	}
	return "runners-only"
}

func (n objectNames) pullSecret(src string) string {
	if n.shared {
		return n.sharedName("pull-" + src)
	}
	return src
}

func (n objectNames) pullSecrets(refs []corev1.LocalObjectReference) []corev1.LocalObjectReference {
	if refs == nil {
		return nil
	}
	out := make([]corev1.LocalObjectReference, len(refs))
	for i, ref := range refs {
		out[i] = corev1.LocalObjectReference{Name: n.pullSecret(ref.Name)}
	}
	return out
}

// namespace is a target's own namespace, at the Pod Security level the target runs at.
func namespace(tr *v1alpha1.TestRun, ns string, level v1alpha1.PodSecurityLevel) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{
		naming.LabelTestRun:                          tr.Name,
		naming.LabelTestRunUID:                       string(tr.UID),
		naming.LabelTestRunNS:                        tr.Namespace,
		naming.LabelRole:                             naming.RoleTarget,
		"pod-security.kubernetes.io/enforce":         string(level),
		"pod-security.kubernetes.io/enforce-version": "latest",
		// A baseline target still hears what restricted would refuse.
		"pod-security.kubernetes.io/warn":  string(v1alpha1.PodSecurityRestricted),
		"pod-security.kubernetes.io/audit": string(v1alpha1.PodSecurityRestricted),
	}}}
}

// quota holds the namespace to the profile (quotaHard), with room for nothing else.
func quota(tr *v1alpha1.TestRun, ns string, profile *v1alpha1.ProfileSpec) *corev1.ResourceQuota {
	return &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "profile", Namespace: ns, Labels: ownedLabels(tr, targetLabels(tr, "quota"))},
		Spec:       corev1.ResourceQuotaSpec{Hard: quotaHard(profile)},
	}
}

// RunLabels select every object of one TestRun's target, wherever it is: in a shared
// namespace they tell this run's objects from the others'.
func RunLabels(tr *v1alpha1.TestRun) map[string]string {
	return map[string]string{naming.LabelTestRun: tr.Name, naming.LabelTestRunNS: tr.Namespace, naming.LabelRole: naming.RoleTarget}
}

// networkPolicy lets into the target only this TestRun's runners and the target's own pods, and
// lets the target out only to DNS, its own pods and what spec.target.egress names (egressRules).
// In a namespace of its own it covers every pod there; in a shared one only this run's, so one
// run's runners never reach another run's target, nor its target another run's.
func networkPolicy(tr *v1alpha1.TestRun, ns string, names objectNames) *networkingv1.NetworkPolicy {
	own := metav1.LabelSelector{}
	if names.shared {
		own = metav1.LabelSelector{MatchLabels: RunLabels(tr)}
	}
	return &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: names.policy(), Namespace: ns, Labels: ownedLabels(tr, targetLabels(tr, "policy"))},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: own,
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
			Ingress: []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{
				{
					NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: tr.Namespace}},
					PodSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{naming.LabelTestRun: tr.Name, naming.LabelRole: naming.RoleRunner}},
				},
				{PodSelector: own.DeepCopy()},
			}}},
			Egress: egressRules(tr, own),
		},
	}
}

// PullSecret is the copy of the TestRun's image pull Secret src in the target namespace ns,
// labelled as fleetbench's and named as the target's pods refer to it: it goes with the
// namespace, or in a shared one with the run's other objects.
func PullSecret(tr *v1alpha1.TestRun, src *corev1.Secret, ns string, opts Options) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: PullSecretName(tr, src.Name, opts), Namespace: ns, Labels: ownedLabels(tr, targetLabels(tr, "pull-secret"))},
		Type:       src.Type,
		Data:       src.Data,
	}
}

// PullSecretName is the name of the copy of the TestRun's pull Secret src.
func PullSecretName(tr *v1alpha1.TestRun, src string, opts Options) string {
	return objectNames{tr: tr, shared: opts.SharedNamespace}.pullSecret(src)
}
