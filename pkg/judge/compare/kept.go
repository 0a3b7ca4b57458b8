package compare

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"fleetbench.dev/fleetbench/pkg/naming"
)

// KeptRecordIn is the Record a kept-results ConfigMap holds for the run name with uid: the
// ConfigMap must carry the kept-results label and record that UID (anyone who may write
// ConfigMaps in the namespace can make one of that name), and its bytes decode within
// DecodeRecord's bounds. The manager and the plugin both read kept records through it.
func KeptRecordIn(cm *corev1.ConfigMap, name, uid string) (Record, error) {
	if cm.Annotations[naming.AnnotationKeptUID] != uid || cm.Labels[naming.LabelKeptResults] != "true" {
		return Record{}, fmt.Errorf("ConfigMap %s is not the kept record of %s", cm.Name, name)
	}
	return DecodeRecord(cm.BinaryData[naming.KeptRecordKey])
}
