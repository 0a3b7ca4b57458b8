package controller

import (
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"fleetbench.dev/fleetbench/internal/controller/children"
)

// WithKueue adds Kueue's Workloads to the cache options when served (KueueServed's answer),
// holding only fleetbench's (those of queued TestRuns, by label). Without Kueue it adds
// nothing: the cache refuses a kind the API server does not know. The same answer goes to the
// TestRun controller (testrun.Options.Kueue): asked once, so the cache and the watches agree.
func WithKueue(opts cache.Options, served bool) cache.Options {
	if !served {
		return opts
	}
	if opts.ByObject == nil {
		opts.ByObject = map[client.Object]cache.ByObject{}
	}
	for _, k := range children.Kinds {
		if k.Kueue && k.Cached {
			opts.ByObject[k.Object.DeepCopyObject().(client.Object)] = cache.ByObject{Label: OwnedSelector()}
		}
	}
	return opts
}

// KueueServed says whether the API server serves kueue.x-k8s.io/v1beta2 Workloads and
// LocalQueues (Kueue's CRDs are installed). Main and the envtest managers ask it once, at start.
func KueueServed(cfg *rest.Config) (bool, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return false, err
	}
	list, err := dc.ServerResourcesForGroupVersion(kueuev1beta2.GroupVersion.String())
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	served := func(name string) bool {
		return slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == name })
	}
	return served("workloads") && served("localqueues"), nil
}
