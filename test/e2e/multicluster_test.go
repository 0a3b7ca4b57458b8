//go:build e2e && multicluster

package e2e

import (
	"fmt"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/config"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/naming"
)

// These tests need the two local clusters joined by MultiKueue, fleetbench installed in both:
// `make e2e-multicluster` (hack/e2e/run.sh with E2E_CLUSTERS=2) makes them. Cluster 1 is the
// manager (KUBECONFIG); cluster 2, the worker "cluster-2", is FLEETBENCH_E2E_CLUSTER2_KUBECONFIG.
// Its LocalQueue zone-cluster-2 dispatches there (hack/cluster/kueue.sh multikueue).

const (
	workerCluster = "cluster-2"
	zoneQueue     = "zone-cluster-2"
)

// workerEnv is the env of cluster 2, and clients of both clusters that know Kueue's kinds.
func workerEnv(t *testing.T) (worker *env, homeKueue, workerKueue client.Client) {
	t.Helper()
	path := os.Getenv("FLEETBENCH_E2E_CLUSTER2_KUBECONFIG")
	if path == "" {
		t.Fatal("no second cluster: run `make e2e-multicluster` (E2E_CLUSTERS=2), which boots two clusters joined by MultiKueue")
	}
	workerCfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	homeCfg, err := config.GetConfig()
	if err != nil {
		t.Fatal(err)
	}
	return newEnvFor(t, rest.CopyConfig(workerCfg)), kueueClientFor(t, homeCfg), kueueClientFor(t, workerCfg)
}

// kueueClientFor is a client of the cluster cfg reaches that knows Kueue's kinds; Kueue must
// be there.
func kueueClientFor(t *testing.T, cfg *rest.Config) client.Client {
	t.Helper()
	c, err := kueueClientOf(t, cfg)
	if err != nil {
		t.Fatalf("Kueue on %s: %v (make e2e-multicluster installs it in both clusters)", cfg.Host, err)
	}
	return c
}

// exposedNginx is an nginx in ns of the home cluster behind a NodePort: the URL a worker
// cluster's runners reach it by (a node IP of the home cluster, on the clusters' shared segment).
func (e *env) exposedNginx(t *testing.T, ns, name string) string {
	t.Helper()
	pod := nginxPod(ns, name)
	e.createServedPod(t, e.c, pod, 8080)
	svc := &corev1.Service{}
	if err := e.c.Get(e.ctx, client.ObjectKey{Namespace: ns, Name: name}, svc); err != nil {
		t.Fatal(err)
	}
	svc.Spec.Type = corev1.ServiceTypeNodePort
	if err := e.c.Update(e.ctx, svc); err != nil {
		t.Fatal(err)
	}
	// Any node's address serves a NodePort; the pod's own is one that surely runs.
	node := &corev1.Node{}
	if err := e.c.Get(e.ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
		t.Fatal(err)
	}
	if err := e.c.Get(e.ctx, client.ObjectKey{Name: pod.Spec.NodeName}, node); err != nil {
		t.Fatal(err)
	}
	for _, a := range node.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			return fmt.Sprintf("http://%s:%d", a.Address, svc.Spec.Ports[0].NodePort)
		}
	}
	t.Fatalf("node %s has no InternalIP", node.Name)
	return ""
}

// localQueue makes LocalQueue name in ns on ClusterQueue cq.
func localQueue(t *testing.T, e *env, c client.Client, ns, name, cq string) {
	t.Helper()
	lq := &kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: kueue.LocalQueueSpec{ClusterQueue: kueue.ClusterQueueReference(cq)}}
	if err := c.Create(e.ctx, lq); err != nil {
		t.Fatalf("LocalQueue %s/%s: %v", ns, name, err)
	}
}

const dispatchScript = `import http from 'k6/http';
export const options = { scenarios: { s: { executor: 'shared-iterations', vus: 4, iterations: 200, maxDuration: '60s' } } };
export default function () { http.get(` + "`${__ENV.TARGET_URL}/`" + `); }
`

// dispatchSetup is namespace name in both clusters with the LocalQueue zone-cluster-2 in each
// (MultiKueue's rule), an nginx of cluster 1 behind a NodePort, and a run of script against it
// that MultiKueue dispatches through that queue, not created yet.
func dispatchSetup(t *testing.T, name, script string) (home, worker *env, run *v1alpha1.TestRun) {
	t.Helper()
	home = newEnv(t)
	worker, homeKueue, workerKueue := workerEnv(t)
	ns := home.namespace(t, name)
	worker.namespace(t, ns)
	localQueue(t, home, homeKueue, ns, zoneQueue, zoneQueue)
	localQueue(t, worker, workerKueue, ns, zoneQueue, "fleetbench")
	url := home.exposedNginx(t, ns, "target")
	run = tw.MakeTestRun("dispatched", ns).External(url).Inline(script).Parallelism(2).Obj()
	run.Spec.ManagedBy = v1alpha1.ManagedByMultiKueue
	run.Spec.Queue = &v1alpha1.QueueSpec{LocalQueue: zoneQueue}
	home.dumpOnFailure(t, client.ObjectKeyFromObject(run), naming.TargetNamespace(ns, run.Name))
	worker.dumpOnFailure(t, client.ObjectKeyFromObject(run), naming.TargetNamespace(ns, run.Name))
	return home, worker, run
}

// waitHandedOver waits until run in cluster 1 is annotated with the worker Kueue handed it to.
func (e *env) waitHandedOver(t *testing.T, run *v1alpha1.TestRun) {
	t.Helper()
	e.eventually(t, "the run handed to "+workerCluster, 2*time.Minute, func() (bool, string) {
		got := &v1alpha1.TestRun{}
		if err := e.c.Get(e.ctx, client.ObjectKeyFromObject(run), got); err != nil {
			return false, err.Error()
		}
		return got.Annotations[v1alpha1.AnnotationWorkerCluster] == workerCluster,
			fmt.Sprintf("%s/%s %s; annotations %v", got.Status.Phase, got.Status.Reason, got.Status.Message, got.Annotations)
	})
}

// TestTestRunDispatchedToAWorkerCluster: a TestRun with spec.managedBy
// kueue.x-k8s.io/multikueue, queued in cluster 1, is dispatched by Kueue's MultiKueue to
// cluster 2, whose fleetbench runs its 2 runners there against an nginx of cluster 1 (by a
// NodePort); the status in cluster 1 (MultiKueue's copy) ends Succeeded with exactly the
// requests that nginx served, no pod of the run ever ran in cluster 1, and the worker's copy
// is gone once the run ended.
func TestTestRunDispatchedToAWorkerCluster(t *testing.T) {
	home, worker, run := dispatchSetup(t, "e2e-dispatch", dispatchScript)
	ns := run.Namespace
	before := home.nginxRequests(t, ns, "target")
	created := time.Now()
	if err := home.c.Create(home.ctx, run); err != nil {
		t.Fatal(err)
	}
	home.waitHandedOver(t, run)
	handed := time.Since(created)
	got, took := home.waitFinished(t, run, 4*time.Minute)
	t.Logf("handed to %s after %s; %s/%s in %s (as cluster 1 sees it): %s", workerCluster, handed.Round(time.Millisecond),
		got.Status.Phase, got.Status.Reason, took.Round(time.Second), got.Status.Message)
	if got.Status.Phase != v1alpha1.PhaseSucceeded {
		t.Fatalf("the dispatched run is %s/%s: %s", got.Status.Phase, got.Status.Reason, got.Status.Message)
	}
	served := home.nginxRequests(t, ns, "target") - before - 1
	total := int64(-1)
	if r := got.Status.Results; r != nil && r.Requests != nil {
		total = r.Requests.Total
	}
	if total != 200 || served != 200 {
		t.Fatalf("the status in cluster 1 says %d requests, nginx in cluster 1 served %d: want 200 of both", total, served)
	}
	if n := podsOf(t, home, got); n != 0 {
		t.Errorf("%d pods of the run in cluster 1: it must run in the worker only", n)
	}
	// MultiKueue deletes the worker's copy once the run ended there.
	worker.waitGone(t, &v1alpha1.TestRun{ObjectMeta: metav1.ObjectMeta{Name: run.Name, Namespace: ns}}, 2*time.Minute)
}

const dispatchLongScript = `import http from 'k6/http';
export const options = { scenarios: { s: { executor: 'constant-arrival-rate', rate: 20, timeUnit: '1s', duration: '2m', preAllocatedVUs: 4 } } };
export default function () { http.get(` + "`${__ENV.TARGET_URL}/`" + `); }
`

// TestDeletingADispatchedRunStopsTheWorker: deleting a dispatched run in cluster 1 while it
// runs in cluster 2 deletes its Workload, MultiKueue then the worker's copy, and the worker's
// fleetbench its runners: cluster 2 holds nothing of the run and the load on cluster 1's nginx
// stops.
func TestDeletingADispatchedRunStopsTheWorker(t *testing.T) {
	home, worker, run := dispatchSetup(t, "e2e-dispatch-delete", dispatchLongScript)
	ns := run.Namespace
	if err := home.c.Create(home.ctx, run); err != nil {
		t.Fatal(err)
	}
	home.waitHandedOver(t, run)
	copyKey := client.ObjectKeyFromObject(run)
	worker.eventually(t, "the worker's copy running", 2*time.Minute, func() (bool, string) {
		got := &v1alpha1.TestRun{}
		if err := worker.c.Get(worker.ctx, copyKey, got); err != nil {
			return false, err.Error()
		}
		return got.Status.Phase == v1alpha1.PhaseRunning, string(got.Status.Phase) + ": " + got.Status.Message
	})
	if err := home.c.Delete(home.ctx, run); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	home.waitGone(t, &v1alpha1.TestRun{ObjectMeta: metav1.ObjectMeta{Name: run.Name, Namespace: ns}}, time.Minute)
	worker.waitGone(t, &v1alpha1.TestRun{ObjectMeta: metav1.ObjectMeta{Name: run.Name, Namespace: ns}}, 2*time.Minute)
	worker.eventually(t, "the worker's runner pods gone", 2*time.Minute, func() (bool, string) {
		n := podsOf(t, worker, run)
		return n == 0, fmt.Sprintf("%d pods", n)
	})
	t.Logf("the worker's copy and its runners gone %s after the deletion in cluster 1", time.Since(deleted).Round(100*time.Millisecond))
	// No runner is left to send: two reads of nginx's counter 3 s apart differ by the first
	// read's own request only.
	first := home.nginxRequests(t, ns, "target")
	time.Sleep(3 * time.Second)
	if n := home.nginxRequests(t, ns, "target") - first; n != 1 {
		t.Errorf("nginx served %d requests in 3 s after the run was gone everywhere, want only the status read", n-1)
	}
}
