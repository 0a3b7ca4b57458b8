package runenv

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// Seal signs a record the operator keeps in a tenant's namespace, right before it is written.
func (r *Env) Seal(cm *corev1.ConfigMap) { r.RecordKey.Seal(cm) }

// Unseal checks a record read back from a tenant's namespace before any of it is decoded: the
// tenant may have written anything into it. Its error names the ConfigMap and says why.
func (r *Env) Unseal(cm *corev1.ConfigMap) error {
	if err := r.RecordKey.Verify(cm); err != nil {
		return fmt.Errorf("ConfigMap %s/%s was not read: %w; delete it and run again", cm.Namespace, cm.Name, err)
	}
	return nil
}
