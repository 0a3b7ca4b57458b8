package target

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// dnsNamespace is where the cluster's DNS runs; its port 53 is the one egress every target has.
const dnsNamespace = "kube-system"

// egressRules are what the target's pods may connect to: the cluster DNS, the run's own
// components (own selects them), and what spec.target.egress opts into. Everything else is
// denied; replies to connections made to the target (the runners') are not egress and pass.
func egressRules(tr *v1alpha1.TestRun, own metav1.LabelSelector) []networkingv1.NetworkPolicyEgressRule {
	rules := []networkingv1.NetworkPolicyEgressRule{
		{
			To: []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{corev1.LabelMetadataName: dnsNamespace}}}},
			Ports: []networkingv1.NetworkPolicyPort{
				{Protocol: ptr.To(corev1.ProtocolUDP), Port: ptr.To(intstr.FromInt32(53))},
				{Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To(intstr.FromInt32(53))},
			},
		},
		{To: []networkingv1.NetworkPolicyPeer{{PodSelector: own.DeepCopy()}}},
	}
	for _, e := range tr.Spec.Target.Egress {
		rule := networkingv1.NetworkPolicyEgressRule{To: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: e.CIDR}}}}
		for _, p := range e.Ports {
			protocol := p.Protocol
			if protocol == "" {
				protocol = corev1.ProtocolTCP
			}
			rule.Ports = append(rule.Ports, networkingv1.NetworkPolicyPort{Protocol: ptr.To(protocol), Port: ptr.To(intstr.FromInt32(p.Port))})
		}
		rules = append(rules, rule)
	}
	return rules
}

// validEgress checks spec.target.egress as the API server will check the NetworkPolicy's
// ipBlocks; admission refuses most mistakes already (an IPv4-mapped IPv6 block passes it).
func validEgress(tr *v1alpha1.TestRun) error {
	for i, e := range tr.Spec.Target.Egress {
		path := field.NewPath("spec", "target", "egress").Index(i).Child("cidr")
		if errs := validation.IsValidCIDR(path, e.CIDR); len(errs) > 0 {
			return fmt.Errorf("%w; write the block as the API server's NetworkPolicy takes it, e.g. 10.20.0.0/16", errs.ToAggregate())
		}
	}
	return nil
}
