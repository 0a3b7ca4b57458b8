// Package v1alpha1 holds the fleetbench.dev/v1alpha1 API: Profiles that size a target,
// TestRuns that provision a target and drive distributed k6 load against it, and
// CapacityPlans that repeat a TestRun across profiles to build a sizing table.
//
// +kubebuilder:object:generate=true
// +groupName=fleetbench.dev
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of every kind in this package.
	GroupVersion = schema.GroupVersion{Group: "fleetbench.dev", Version: "v1alpha1"}

	// SchemeBuilder registers this package's kinds with a runtime.Scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds this package's kinds to a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
