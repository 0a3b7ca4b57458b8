package target

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Label keys a target namespace never takes from its tenant's: fleetbench's own (they prove
// whose target it is), the API server's name label, and Pod Security's, which the operator sets
// from the target's own level (never above the tenant's: NotPermitted).
var reservedLabelPrefixes = []string{"fleetbench.dev/", "pod-security.kubernetes.io/"}

const metadataNameLabel = corev1.LabelMetadataName

// ParsePropagatedLabels reads the admin's comma-separated label keys whose values a target
// namespace copies from its TestRun's namespace (--propagate-namespace-labels), refusing keys
// that are not label keys or that the operator sets itself.
func ParsePropagatedLabels(s string) ([]string, error) {
	var keys []string
	for _, k := range strings.Split(s, ",") {
		k = strings.TrimSpace(k)
		if k == "" {
			continue
		}
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return nil, fmt.Errorf("%q is not a label key: %s", k, strings.Join(errs, "; "))
		}
		if k == metadataNameLabel {
			return nil, fmt.Errorf("%q is set by the API server to each namespace's own name", k)
		}
		for _, prefix := range reservedLabelPrefixes {
			if strings.HasPrefix(k, prefix) {
				return nil, fmt.Errorf("%q is set by the operator itself (every %s* label): it cannot be copied from the tenant", k, prefix)
			}
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// CopyTenantLabels gives ns, a target namespace about to be created, the labels of keys that
// tenant, its TestRun's namespace, carries, so that policies selecting namespaces by those
// labels follow the tenant to its targets. A key the operator set already is left as it is.
func CopyTenantLabels(ns, tenant *corev1.Namespace, keys []string) {
	for _, k := range keys {
		v, ok := tenant.Labels[k]
		if _, set := ns.Labels[k]; !ok || set {
			continue
		}
		if ns.Labels == nil {
			ns.Labels = map[string]string{}
		}
		ns.Labels[k] = v
	}
}
