package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// ProfileSnapshot is the Profile a TestRun measures, copied into its status at its first
// provisioning step. From then on the run sizes its target and reads its figures from this copy
// only: a Profile edited or deleted while the run goes on changes nothing for it, and the
// generation says which version of the Profile the results belong to.
type ProfileSnapshot struct {
	// name of the Profile (spec.profile).
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// generation of the Profile when it was copied.
	Generation int64 `json:"generation"`

	// spec is the Profile's size and placement as copied. Its namespaceSelector was checked
	// against the TestRun's namespace when it was copied, and is not kept; nor is its description.
	Spec ProfileSnapshotSpec `json:"spec"`
}

// ProfileSnapshotSpec is what of a ProfileSpec sizes and places a target. Its strings are
// bounded as Kubernetes bounds them in a pod (a label value, a qualified name): a Profile with
// longer ones could not place a pod anyway, and is refused when it is copied.
type ProfileSnapshotSpec struct {
	// cpu is the CPU the whole target may use.
	CPU resource.Quantity `json:"cpu"`

	// memory is the memory the whole target may use.
	Memory resource.Quantity `json:"memory"`

	// ephemeralStorage is the local disk the whole target may use; unset: the default.
	// +optional
	EphemeralStorage *resource.Quantity `json:"ephemeralStorage,omitempty"`

	// extendedResources are the resources beyond cpu, memory and ephemeral-storage it grants.
	// +optional
	// +kubebuilder:validation:MaxProperties=6
	ExtendedResources map[corev1.ResourceName]resource.Quantity `json:"extendedResources,omitempty"`

	// nodeSelector places the target's pods.
	// +optional
	// +kubebuilder:validation:MaxProperties=16
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(k) <= 317 && size(self[k]) <= 63)",message="nodeSelector keys are qualified names and values label values"
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// tolerations let the target's pods run on tainted nodes.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	Tolerations []SnapshotToleration `json:"tolerations,omitempty"`
}

// SnapshotToleration is a corev1.Toleration with the bounds the API server holds a pod's to.
type SnapshotToleration struct {
	// +optional
	// +kubebuilder:validation:MaxLength=317
	Key string `json:"key,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=16
	Operator string `json:"operator,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Value string `json:"value,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=32
	Effect string `json:"effect,omitempty"`
	// +optional
	TolerationSeconds *int64 `json:"tolerationSeconds,omitempty"`
}
