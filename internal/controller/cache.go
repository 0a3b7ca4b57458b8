// Package controller holds what every fleetbench controller's manager shares; each controller
// lives in a package of its own below it (testrun, and the small reconcile helpers).
package controller

import (
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"fleetbench.dev/fleetbench/pkg/naming"
)

// OwnedSelector matches every object fleetbench makes: each carries its TestRun's name.
func OwnedSelector() labels.Selector {
	req, err := labels.NewRequirement(naming.LabelTestRun, selection.Exists, nil)
	if err != nil {
		panic(err) // a constant key: cannot fail
	}
	return labels.NewSelector().Add(*req)
}

// CacheOptions keep the manager's informers to fleetbench's own objects: in a cluster of
// 50,000 pods it caches the few its TestRuns made, not all of them. A kind read through the
// cached client that is not listed here would be cached whole, so every built-in kind the
// controllers read is; what is not fleetbench's (a user's script ConfigMap, a namespace that
// may belong to someone else) is read with the manager's API reader instead.
func CacheOptions() cache.Options {
	owned := cache.ByObject{Label: OwnedSelector()}
	// Managed fields are a third of a small object and nothing here reads them.
	return cache.Options{DefaultTransform: cache.TransformStripManagedFields(), ByObject: map[client.Object]cache.ByObject{
		&corev1.Pod{}:                 owned,
		&corev1.ConfigMap{}:           owned,
		&corev1.Namespace{}:           owned,
		&corev1.Service{}:             owned,
		&corev1.ResourceQuota{}:       owned,
		&batchv1.Job{}:                owned,
		&appsv1.Deployment{}:          owned,
		&networkingv1.NetworkPolicy{}: owned,
	}}
}
