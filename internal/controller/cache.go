// Package controller holds what every fleetbench controller's manager shares; each controller
// lives in a package of its own below it (testrun, and the small reconcile helpers).
package controller

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/controller/children"
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
	// Anyone may put fleetbench's label on an object in their namespace: each kind keeps only
	// the fields the controllers read (Slim), so what a tenant labels costs little memory.
	owned := cache.ByObject{Label: OwnedSelector(), Transform: Slim}
	// Fleetbench's own kinds stay whole but for managed fields: a CapacityPlan read here is
	// written back with Update, which would drop anything left out.
	opts := cache.Options{DefaultTransform: cache.TransformStripManagedFields(), ByObject: map[client.Object]cache.ByObject{
		// A TestRun's reconcile reads it live; the cache serves lists (limits, baselines,
		// plans' children, metrics), which read its status and a few spec fields.
		&v1alpha1.TestRun{}: {Transform: SlimTestRun},
	}}
	for _, obj := range children.Cached(children.Kinds, false) {
		opts.ByObject[obj] = owned
	}
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
		inTargets := children.InTargetNamespaces(children.Kinds)
		for obj, by := range opts.ByObject {
			if children.Among(obj, inTargets) {
				by.Namespaces = map[string]cache.Config{cache.AllNamespaces: {}}
				opts.ByObject[obj] = by
			}
		}
	}
	return opts
}

// Slim is the cache's transform: of every object it keeps the fields the controllers read and
// drops the rest: managed fields and annotations everywhere (nothing reads them); a pod keeps no
// spec but its node (runner, pre-flight and target pods alike: status, labels, owners and node
// are read); a Job no pod template; a ConfigMap no data (the results and the user's script are
// read with the API reader); a Deployment of its pod template only the labels and the pod-level
// resources; a Service and a NetworkPolicy no spec (made once, never read back). At 1,000
// runners the runners' specs were most of the manager's memory; a tenant's labelled 1 MiB
// ConfigMap or annotated pod was cached whole. A new read of a field dropped here must keep it.
func Slim(obj any) (any, error) {
	if o, ok := obj.(metav1.Object); ok {
		o.SetManagedFields(nil)
		o.SetAnnotations(nil)
	}
	switch o := obj.(type) {
	case *corev1.Pod:
		o.Spec = corev1.PodSpec{NodeName: o.Spec.NodeName}
	case *batchv1.Job:
		o.Spec.Template = corev1.PodTemplateSpec{}
	case *corev1.ConfigMap:
		o.Data, o.BinaryData = nil, nil
	case *appsv1.Deployment:
		o.Spec.Template = corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: o.Spec.Template.Labels},
			Spec: corev1.PodSpec{Resources: o.Spec.Template.Spec.Resources}}
	case *corev1.Service:
		// A zoned run's zones reach its target by the Services' NodePorts (provision/zones.go);
		// fleetbench's own Services have one port, so a labelled look-alike keeps no more.
		o.Spec = corev1.ServiceSpec{Type: o.Spec.Type, Ports: o.Spec.Ports[:min(len(o.Spec.Ports), 1)]}
	case *networkingv1.NetworkPolicy:
		o.Spec = networkingv1.NetworkPolicySpec{}
	}
	return obj, nil
}

// SlimTestRun drops from a cached TestRun what a tenant sizes and no list reads (a TestRun's
// reconcile reads it live; the cache serves lists: limits, baselines, plans' children,
// metrics): the inline script, k6 arguments, the runner and target components' env and
// commands, outputs, thresholds and log patterns. So the manager's memory does not follow
// what tenants put there: a few hundred runs of the largest admissible size were most of it.
// Annotations become one hash of them, so predicate.AnnotationChangedPredicate still sees a
// change. A new read of one of these from the cache must keep it here.
func SlimTestRun(obj any) (any, error) {
	run, ok := obj.(*v1alpha1.TestRun)
	if !ok {
		return obj, nil
	}
	run.SetManagedFields(nil)
	if len(run.Annotations) > 0 {
		kept := map[string]string{annotationsHash: hashOf(run.Annotations)}
		// A zoned run checks where MultiKueue sent each zone run (provision/zones.go).
		if w, ok := run.Annotations[v1alpha1.AnnotationWorkerCluster]; ok {
			kept[v1alpha1.AnnotationWorkerCluster] = w
		}
		run.Annotations = kept
	}
	spec := &run.Spec
	spec.Script.Inline = ""
	spec.Arguments, spec.Args = "", nil
	spec.Runner, spec.Outputs, spec.Thresholds = nil, nil, nil
	spec.Target.Components, spec.Target.Egress, spec.Target.ImagePullSecrets = nil, nil, nil
	if spec.Stability != nil {
		spec.Stability = spec.Stability.DeepCopy()
		spec.Stability.LogPatterns = nil
	}
	if z := run.Status.ZoneRun; z != nil {
		// A zone run's envelopes are read live, once, by its zoned run's collection.
		z = z.DeepCopy()
		z.Envelopes, z.Problems = nil, nil
		run.Status.ZoneRun = z
	}
	return run, nil
}

// annotationsHash stands for a cached TestRun's annotations.
const annotationsHash = "fleetbench.dev/annotations-sha256"

func hashOf(m map[string]string) string {
	h := sha256.New()
	for _, k := range slices.Sorted(maps.Keys(m)) {
		fmt.Fprintf(h, "%d:%s%d:%s", len(k), k, len(m[k]), m[k])
	}
	return hex.EncodeToString(h.Sum(nil))
}
