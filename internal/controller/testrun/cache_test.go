package testrun

import (
	"cmp"
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/naming"
)

// TestCacheHoldsOnlyFleetbenchObjects fills the cluster with 5,000 Pods and 2,000 ConfigMaps
// that are not fleetbench's. A TestRun still runs to Succeeded, and the manager's cache holds
// none of them. The heap lines are a benchmark, not an assertion.
func TestCacheHoldsOnlyFleetbenchObjects(t *testing.T) {
	heapBefore := heapInUseMiB()
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = 2000, 4000
	bulk, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	const namespaces, podsEach, configMapsEach = 10, 500, 200
	var noise []string
	for range namespaces {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "unrelated-"}}
		if err := bulk.Create(ctx, ns); err != nil {
			t.Fatal(err)
		}
		noise = append(noise, ns.Name)
	}
	created := time.Now()
	createAll(t, bulk, noise, podsEach, func(ns string, i int) client.Object {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("app-%d", i), Namespace: ns, Labels: map[string]string{"app": "shop"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "shop:1"}}}}
	})
	createAll(t, bulk, noise, configMapsEach, func(ns string, i int) client.Object {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("settings-%d", i), Namespace: ns},
			Data: map[string]string{"k": "v"}}
	})
	t.Logf("created %d Pods and %d ConfigMaps in %s", namespaces*podsEach, namespaces*configMapsEach, time.Since(created).Round(time.Millisecond))
	t.Cleanup(func() {
		for _, ns := range noise {
			_ = bulk.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(ns))
			_ = bulk.DeleteAllOf(ctx, &corev1.ConfigMap{}, client.InNamespace(ns))
		}
	})

	// The script comes from the user's own ConfigMap, which carries no fleetbench label: the
	// operator reads it around the cache.
	ns := setup(t)
	userScript := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "my-script", Namespace: ns},
		Data: map[string]string{"load.js": tw.DefaultScript}}
	if err := env.Client.Create(ctx, userScript); err != nil {
		t.Fatal(err)
	}
	run := tw.MakeTestRun("among-many", ns).Parallelism(2).Devices(20, "1s").Duration("5s").
		Script(v1alpha1.ScriptSpec{ConfigMap: &v1alpha1.ConfigMapScript{Name: "my-script", File: "load.js"}}).Obj()
	k, pods := startRunning(t, run, 2)
	start := time.Now()
	for _, pod := range pods {
		logs.set(pod, load(pod, start), nil)
		k.Finish(pod, 0, "Completed")
	}
	waitPhase(t, run, v1alpha1.PhaseSucceeded, v1alpha1.ReasonCompleted)
	heapAfter := heapInUseMiB()

	var cachedPods corev1.PodList
	if err := manager.Cache.List(ctx, &cachedPods); err != nil {
		t.Fatal(err)
	}
	var cachedConfigMaps corev1.ConfigMapList
	if err := manager.Cache.List(ctx, &cachedConfigMaps); err != nil {
		t.Fatal(err)
	}
	ours := 0
	for _, list := range []kruntime.Object{&cachedPods, &cachedConfigMaps} {
		if err := apimeta.EachListItem(list, func(item kruntime.Object) error {
			o := item.(client.Object)
			if o.GetLabels()[naming.LabelTestRun] == "" {
				t.Errorf("the cache holds %s/%s, which is not fleetbench's", o.GetNamespace(), o.GetName())
				return nil
			}
			ours++
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	// This run's two runners, its target pod and its script ConfigMap at least.
	if ours < 4 {
		t.Errorf("the cache holds %d of fleetbench's objects; the TestRun's runners, target and script must be among them", ours)
	}

	// For comparison, what caching every Pod and ConfigMap costs, as the manager did before.
	whole := heapOfWholeCache(t)
	t.Logf("BENCH manager heap in use: %.1f MiB before the 7,000 unrelated objects, %.1f MiB after them and a TestRun "+
		"(cache holds %d Pods, %d ConfigMaps); an unfiltered cache of the same Pods and ConfigMaps adds %.1f MiB",
		heapBefore, heapAfter, len(cachedPods.Items), len(cachedConfigMaps.Items), whole)
}

// createAll creates perNamespace objects in each namespace, 32 at a time.
func createAll(t *testing.T, c client.Client, namespaces []string, perNamespace int, obj func(ns string, i int) client.Object) {
	t.Helper()
	work := make(chan client.Object)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for o := range work {
				if err := c.Create(ctx, o); err != nil {
					mu.Lock()
					firstErr = cmp.Or(firstErr, err)
					mu.Unlock()
				}
			}
		}()
	}
	for _, ns := range namespaces {
		for i := range perNamespace {
			work <- obj(ns, i)
		}
	}
	close(work)
	wg.Wait()
	if firstErr != nil {
		t.Fatal(firstErr)
	}
}

// heapOfWholeCache starts an informer cache with no selector, lists every Pod and ConfigMap
// through it, and says how much heap that took.
func heapOfWholeCache(t *testing.T) float64 {
	t.Helper()
	before := heapInUseMiB()
	whole, err := cache.New(env.Config, cache.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { _ = whole.Start(cctx) }()
	if !whole.WaitForCacheSync(cctx) {
		t.Fatal("the unfiltered cache did not start")
	}
	// Listing starts and syncs the informers; the lists themselves are dropped before measuring.
	for _, list := range []client.ObjectList{&corev1.PodList{}, &corev1.ConfigMapList{}} {
		if err := whole.List(cctx, list); err != nil {
			t.Fatal(err)
		}
	}
	after := heapInUseMiB()
	runtime.KeepAlive(whole)
	return after - before
}

func heapInUseMiB() float64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapInuse) / (1 << 20)
}
