package children_test

import (
	"reflect"
	"slices"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"fleetbench.dev/fleetbench/internal/controller"
	"fleetbench.dev/fleetbench/internal/controller/children"
	"fleetbench.dev/fleetbench/internal/controller/orphans"
	"fleetbench.dev/fleetbench/internal/controller/testrun"
	"fleetbench.dev/fleetbench/internal/controller/testrun/admit"
)

func has[T any](objs []T, want T) bool {
	return slices.ContainsFunc(objs, func(o T) bool { return reflect.TypeOf(o) == reflect.TypeOf(want) })
}

// cached says whether opts hold want's kind, and with fleetbench's label selector.
func cached(opts map[client.Object]bool, want client.Object) (held, labelled bool) {
	for obj, label := range opts {
		if reflect.TypeOf(obj) == reflect.TypeOf(want) {
			return true, label
		}
	}
	return false, false
}

// consumers are what each reader of children.Kinds derives from it now.
type consumers struct {
	cache, everywhere  map[client.Object]bool // kind → selected by fleetbench's label; kinds cached in every namespace
	owned, labelled    []client.Object        // the TestRun controller's watches
	released           []client.ObjectList    // the release from a shared target namespace
	swept, sweptShared []client.Object        // the orphan sweeper, own namespaces and a shared one
}

func consumersNow() consumers {
	ns := controller.Namespaces{Watch: []string{"team-a"}}
	c := consumers{cache: map[client.Object]bool{}, everywhere: map[client.Object]bool{}}
	for obj, by := range controller.CacheOptions(ns).ByObject {
		c.cache[obj] = by.Label != nil
		if by.Namespaces != nil {
			c.everywhere[obj] = true
		}
	}
	c.owned, c.labelled = testrun.Watches(false)
	c.released = admit.ReleasedLists(false)
	c.swept, c.sweptShared = orphans.Watched(ns), orphans.Watched(controller.Namespaces{Target: "fb-targets"})
	return c
}

// TestAKindAddedInOnePlaceReachesEveryConsumer: two fake kinds added to children.Kinds alone
// reach the manager's cache, the TestRun controller's watches, the release from a shared target
// namespace and the orphan sweeper, each as its row says.
func TestAKindAddedInOnePlaceReachesEveryConsumer(t *testing.T) {
	inTarget := children.Kind{Name: "LimitRange (a fake, in the target namespace)", Object: &corev1.LimitRange{}, List: &corev1.LimitRangeList{},
		Home: children.TargetNamespace, Cached: true, Watch: children.ByOwner, Release: children.Deleted, CreatedBy: "createFake"}
	ownNamespace := children.Kind{Name: "PersistentVolume (a fake, cluster-scoped)", Object: &corev1.PersistentVolume{}, List: &corev1.PersistentVolumeList{},
		Home: children.ClusterScoped, Watch: children.ByLabels, CreatedBy: "createOtherFake"}
	saved := children.Kinds
	t.Cleanup(func() { children.Kinds = saved })

	limitRange, pv := client.Object(&corev1.LimitRange{}), client.Object(&corev1.PersistentVolume{})
	old := consumersNow()
	for _, fake := range []client.Object{limitRange, pv} {
		if held, _ := cached(old.cache, fake); held || has(old.owned, fake) || has(old.labelled, fake) || has(old.swept, fake) || has(old.sweptShared, fake) {
			t.Fatalf("%T is a child before it was added", fake)
		}
	}

	children.Kinds = append(slices.Clone(saved), inTarget, ownNamespace)
	c := consumersNow()
	heldLR, labelledLR := cached(c.cache, limitRange)
	heldPV, _ := cached(c.cache, pv)
	everywhereLR, _ := cached(c.everywhere, limitRange)
	for _, check := range []struct {
		what string
		ok   bool
	}{
		{"cached, selected by fleetbench's label", heldLR && labelledLR},
		{"one cache entry more (the uncached fake none)", len(c.cache) == len(old.cache)+1 && !heldPV},
		{"cached in every namespace, as the target's kinds are", everywhereLR},
		{"watched through its owner", has(c.owned, limitRange) && !has(c.labelled, limitRange)},
		{"watched by its labels", has(c.labelled, pv) && !has(c.owned, pv)},
		{"deleted at a release from a shared namespace", has(c.released, client.ObjectList(&corev1.LimitRangeList{}))},
		{"swept in a shared namespace", has(c.sweptShared, limitRange) && !has(c.sweptShared, pv)},
		{"swept as a run's own cluster-scoped object", has(c.swept, pv) && !has(c.swept, limitRange)},
		{"not at the cost of an existing kind", has(c.owned, client.Object(&batchv1.Job{}))},
	} {
		if !check.ok {
			t.Errorf("a kind added to children.Kinds is not %s", check.what)
		}
	}
}
