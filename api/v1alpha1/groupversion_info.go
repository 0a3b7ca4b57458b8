// Package v1alpha1 holds the fleetbench.dev/v1alpha1 API: Profiles that size a target,
// TestRuns that provision a target and drive distributed k6 load against it, and
// CapacityPlans that repeat a TestRun across profiles to build a sizing table.
//
// +kubebuilder:object:generate=true
// +groupName=fleetbench.dev
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of every kind in this package.
	GroupVersion = schema.GroupVersion{Group: "fleetbench.dev", Version: "v1alpha1"}

	// SchemeBuilder registers this package's kinds with a runtime.Scheme. apimachinery's
	// builder keeps the API package free of controller-runtime, so clients import it cheaply.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds this package's kinds to a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion,
		&Profile{}, &ProfileList{},
		&TestRun{}, &TestRunList{},
		&CapacityPlan{}, &CapacityPlanList{},
		&ZoneStart{}, &ZoneStartList{},
	)
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
