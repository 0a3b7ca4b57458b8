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
//
// With watched namespaces the cache holds those and the target namespace only, so a namespaced
// install's Roles suffice; cluster-scoped kinds (Profiles) are still read cluster-wide.
func CacheOptions(ns Namespaces) cache.Options {
	owned := cache.ByObject{Label: OwnedSelector()}
	// Managed fields are a third of a small object and nothing here reads them.
	runnerPods := cache.ByObject{Label: OwnedSelector(), Transform: SlimRunners}
	opts := cache.Options{DefaultTransform: cache.TransformStripManagedFields(), ByObject: map[client.Object]cache.ByObject{
		&corev1.Pod{}:                 runnerPods,
		&corev1.ConfigMap{}:           owned,
		&corev1.Namespace{}:           owned,
		&corev1.Service{}:             owned,
		&corev1.ResourceQuota{}:       owned,
		&batchv1.Job{}:                runnerPods,
		&appsv1.Deployment{}:          owned,
		&networkingv1.NetworkPolicy{}: owned,
	}}
	cached := ns.cached()
	if cached == nil {
		return opts
	}
	opts.DefaultNamespaces = map[string]cache.Config{}
	for _, name := range cached {
		opts.DefaultNamespaces[name] = cache.Config{}
	}
	if ns.Target == "" {
		// Watched namespaces with a fresh target namespace per run: those may be anywhere, so
		// the kinds a target is made of are cached in every namespace.
		for obj, by := range opts.ByObject {
			switch obj.(type) {
			case *corev1.Pod, *corev1.Service, *corev1.ResourceQuota, *appsv1.Deployment, *networkingv1.NetworkPolicy:
				by.Namespaces = map[string]cache.Config{cache.AllNamespaces: {}}
				opts.ByObject[obj] = by
			}
		}
	}
	return opts
}

// SlimRunners is the cache's transform for pods and Jobs: besides the managed fields, a runner's
// or pre-flight's pod keeps no spec but its node, and its Job no pod template. The operator wrote
// them once and reads only their status, labels and node; at 1,000 runners they were most of
// the manager's memory. Target pods stay whole (their containers are measured).
func SlimRunners(obj any) (any, error) {
	obj, err := cache.TransformStripManagedFields()(obj)
	if err != nil {
		return obj, err
	}
	switch o := obj.(type) {
	case *corev1.Pod:
		if isRunnerOrPreflight(o.Labels) {
			o.Spec = corev1.PodSpec{NodeName: o.Spec.NodeName}
		}
	case *batchv1.Job:
		if isRunnerOrPreflight(o.Labels) {
			o.Spec.Template = corev1.PodTemplateSpec{}
		}
	}
	return obj, nil
}

func isRunnerOrPreflight(l map[string]string) bool {
	return l[naming.LabelRole] == naming.RoleRunner || l[naming.LabelRole] == naming.RolePreflight
}
