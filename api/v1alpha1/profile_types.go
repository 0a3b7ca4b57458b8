package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ProfileSpec is the size of one "machine" a target runs on: the C1–C4 containers and
// H0–H3 hosts of the seed reports become Profiles, so a test names a size, not numbers.
// +kubebuilder:validation:XValidation:rule="isQuantity(string(self.cpu)) && quantity(string(self.cpu)).isGreaterThan(quantity('0'))",message="spec.cpu must be a positive quantity such as 1, 500m or 12"
// +kubebuilder:validation:XValidation:rule="isQuantity(string(self.memory)) && quantity(string(self.memory)).compareTo(quantity('32Mi')) >= 0",message="spec.memory must be at least 32Mi, written like 512Mi or 16Gi"
type ProfileSpec struct {
	// cpu is the CPU the whole target may use (all components together when sized as one machine).
	// +required
	CPU resource.Quantity `json:"cpu"`

	// memory is the memory the whole target may use.
	// +required
	Memory resource.Quantity `json:"memory"`

	// description says what real machine this profile stands for, e.g. "Proxmox LXC, Xeon E5 2.2 GHz".
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Description string `json:"description,omitempty"`

	// nodeSelector places the target's pods on matching nodes.
	// +optional
	// +kubebuilder:validation:MaxProperties=16
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// tolerations let the target's pods run on tainted, dedicated nodes.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// ephemeralStorage is the local disk the whole target may use: its containers' writable
	// layers, logs and the emptyDirs the built-in images write to (a database's data). The
	// target namespace's ResourceQuota caps its requests and limits, and every target container
	// gets its share as both; a target that writes more is evicted. Unset: 2Gi
	// (target.DefaultEphemeralStorage).
	// +optional
	// +kubebuilder:validation:XValidation:rule="isQuantity(string(self)) && quantity(string(self)).isGreaterThan(quantity('0'))",message="spec.ephemeralStorage must be a positive quantity such as 2Gi"
	EphemeralStorage *resource.Quantity `json:"ephemeralStorage,omitempty"`

	// extendedResources grants the target resources beyond cpu, memory and ephemeral-storage,
	// e.g. {nvidia.com/gpu: 1} or {hugepages-2Mi: 256Mi}: components sized perComponent may ask
	// for them in their resources, up to these totals (the quota holds them to it). A target
	// asking for one the Profile does not grant ends Failed NotPermitted before anything is made.
	// +optional
	// +kubebuilder:validation:MaxProperties=6
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.matches('^hugepages-[0-9]+[KMGTPE]i?$') || (k.matches('^[a-z0-9]([-a-z0-9.]*[a-z0-9])?/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$') && !k.matches('(^|[.])kubernetes[.]io/') && !k.startsWith('requests.')))",message="spec.extendedResources keys must be hugepages-<size> or an extended resource such as nvidia.com/gpu (cpu, memory and ephemeral-storage are the Profile's own fields)"
	// +kubebuilder:validation:XValidation:rule="self.all(k, isQuantity(string(self[k])) && quantity(string(self[k])).isGreaterThan(quantity('0')))",message="spec.extendedResources values must be positive quantities such as 1 or 256Mi"
	ExtendedResources map[corev1.ResourceName]resource.Quantity `json:"extendedResources,omitempty"`

	// namespaceSelector limits which namespaces' TestRuns may use this profile, as a Gateway's
	// allowedRoutes does: a TestRun elsewhere ends Failed NotPermitted. Unset, any namespace may
	// (the built-in profiles); an empty selector also matches every namespace.
	// +optional
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`

	// price of a machine of this size, for "which machine for N devices, at what cost"
	// (kubectl fleetbench size, CapacityPlan spec.question). The built-in profiles have none.
	// +optional
	Price *ProfilePrice `json:"price,omitempty"`
}

// ProfilePrice is what a machine of the profile's size costs: per hour for the whole machine,
// or per vCPU-hour and per GiB-hour of memory; amounts are decimal numbers such as 0.0416.
// +kubebuilder:validation:XValidation:rule="has(self.perHour) != (has(self.perVCPUHour) || has(self.perGiBHour))",message="spec.price: set perHour, or perVCPUHour and perGiBHour, not both"
// +kubebuilder:validation:XValidation:rule="has(self.perHour) || (has(self.perVCPUHour) && has(self.perGiBHour))",message="spec.price: perVCPUHour and perGiBHour go together"
type ProfilePrice struct {
	// perHour is the whole machine's price per hour.
	// +optional
	PerHour *PriceAmount `json:"perHour,omitempty"`
	// perVCPUHour is the price of one vCPU for an hour; the profile's cpu is counted.
	// +optional
	PerVCPUHour *PriceAmount `json:"perVCPUHour,omitempty"`
	// perGiBHour is the price of one GiB of memory for an hour; the profile's memory is counted.
	// +optional
	PerGiBHour *PriceAmount `json:"perGiBHour,omitempty"`
	// currency, e.g. EUR or USD.
	// +required
	// +kubebuilder:validation:Pattern=`^[A-Z]{3}$`
	Currency string `json:"currency"`
	// asOf is the date the price was taken (YYYY-MM-DD): prices change, and an answer says
	// how old its price is.
	// +required
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`
	AsOf string `json:"asOf"`
}

// PriceAmount is a non-negative decimal amount such as 0.0416.
// +kubebuilder:validation:Pattern=`^[0-9]{1,9}(\.[0-9]{1,9})?$`
// +kubebuilder:validation:MaxLength=19
type PriceAmount string

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories=fleetbench
// +kubebuilder:printcolumn:name="CPU",type=string,JSONPath=`.spec.cpu`
// +kubebuilder:printcolumn:name="MEMORY",type=string,JSONPath=`.spec.memory`
// +kubebuilder:printcolumn:name="PRICE/H",type=string,JSONPath=`.spec.price.perHour`,priority=1
// +kubebuilder:printcolumn:name="DESCRIPTION",type=string,JSONPath=`.spec.description`,priority=1
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`

// Profile is a named target size, cluster-scoped like a StorageClass.
type Profile struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec ProfileSpec `json:"spec"`
}

// +kubebuilder:object:root=true

// ProfileList is a list of Profiles.
type ProfileList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Profile `json:"items"`
}
