//go:build e2e && multicluster

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/naming"
)

// zoneSetup is namespace name in both clusters with the LocalQueue zone-cluster-2 in each (a
// zone of cluster-2 is dispatched through it), and an nginx of cluster 1 behind a NodePort:
// the URL every zone reaches it by.
func zoneSetup(t *testing.T, name string) (home, worker *env, ns, url string) {
	t.Helper()
	home = newEnv(t)
	worker, homeKueue, workerKueue := workerEnv(t)
	ns = home.namespace(t, name)
	worker.namespace(t, ns)
	localQueue(t, home, homeKueue, ns, zoneQueue, zoneQueue)
	localQueue(t, worker, workerKueue, ns, zoneQueue, "fleetbench")
	return home, worker, ns, home.exposedNginx(t, ns, "target")
}

func twoZones(here, there int32) []v1alpha1.ZoneSpec {
	return []v1alpha1.ZoneSpec{{Name: "home", Runners: here}, {Name: "c2", Cluster: workerCluster, Runners: there}}
}

// zoneScript: 400 iterations shared by the whole fleet, one request each, a threshold judged
// on the merged requests.
const zoneScript = `import http from 'k6/http';
export const options = {
  scenarios: { s: { executor: 'shared-iterations', vus: 8, iterations: 400, maxDuration: '90s' } },
  thresholds: { http_req_failed: ['rate<0.01'] },
};
export default function () { http.get(` + "`${__ENV.TARGET_URL}/`" + `); }
`

// TestLoadZones: one TestRun of 2 zones x 2 runners, one in each local cluster, against one
// nginx of cluster 1: the requests in status equal what nginx served, each zone has its row
// with its own requests and its start offset (the skew between zones), and the same script
// run in one cluster by 4 runners gives the same verdict and the same exact counts.
func TestLoadZones(t *testing.T) {
	home, worker, ns, url := zoneSetup(t, "e2e-zones")
	run := tw.MakeTestRun("zoned", ns).External(url).Inline(zoneScript).Zones(twoZones(2, 2)...).Obj()
	home.dumpOnFailure(t, client.ObjectKeyFromObject(run), "")
	worker.dumpOnFailure(t, client.ObjectKey{Namespace: ns, Name: naming.ZoneRun(run.Name, "c2")}, "")
	before := home.nginxRequests(t, ns, "target")
	created := time.Now()
	if err := home.c.Create(home.ctx, run); err != nil {
		t.Fatal(err)
	}
	got, took := home.waitFinished(t, run, 5*time.Minute)
	t.Logf("zoned run %s/%s %s in %s: %s", got.Status.Phase, got.Status.Reason, got.Status.Verdict, took.Round(time.Second), got.Status.Message)
	if got.Status.Phase != v1alpha1.PhaseSucceeded {
		t.Fatalf("the zoned run is %s/%s: %s", got.Status.Phase, got.Status.Reason, got.Status.Message)
	}
	served := home.nginxRequests(t, ns, "target") - before - 1
	total := totalRequests(got)
	if total != 400 || served != 400 {
		t.Fatalf("the zoned run's status says %d requests, nginx served %d: want 400 of both", total, served)
	}
	if len(got.Status.Zones) != 2 {
		t.Fatalf("status.zones has %d rows, want 2: %+v", len(got.Status.Zones), got.Status.Zones)
	}
	var sum int64
	for _, z := range got.Status.Zones {
		t.Logf("zone %s (cluster %q, run %q): %s, %d runners, %d requests (%d failed), latency %+v, started %s after the first",
			z.Name, z.Cluster, z.Run, z.State, z.Runners, z.Requests, z.FailedRequests, z.Latency, z.StartOffset)
		if z.State != v1alpha1.ZoneEnded || z.StartedAt == nil || z.StartOffset == "" || z.Requests == 0 || z.Latency == nil {
			t.Errorf("zone %s: %s, started %v, offset %q, %d requests: want Ended with a start and requests", z.Name, z.State, z.StartedAt, z.StartOffset, z.Requests)
		}
		sum += z.Requests
	}
	if sum != total {
		t.Errorf("the zones' rows add up to %d requests, the merged result says %d", sum, total)
	}
	if n := podsOf(t, worker, &v1alpha1.TestRun{ObjectMeta: metav1.ObjectMeta{Name: naming.ZoneRun(run.Name, "c2"), Namespace: ns}}); n > 2 {
		t.Errorf("%d runner pods of the zone run in cluster 2, want at most its 2", n)
	}
	t.Logf("apply to done: %s", time.Since(created).Round(100*time.Millisecond))

	// The same script in one cluster, 4 runners.
	single := tw.MakeTestRun("single", ns).External(url).Inline(zoneScript).Parallelism(4).Obj()
	before = home.nginxRequests(t, ns, "target")
	if err := home.c.Create(home.ctx, single); err != nil {
		t.Fatal(err)
	}
	one, _ := home.waitFinished(t, single, 5*time.Minute)
	served = home.nginxRequests(t, ns, "target") - before - 1
	if one.Status.Phase != got.Status.Phase || one.Status.Verdict != got.Status.Verdict {
		t.Errorf("in one cluster the run is %s %s, zoned %s %s", one.Status.Phase, one.Status.Verdict, got.Status.Phase, got.Status.Verdict)
	}
	if n := totalRequests(one); n != total || served != total {
		t.Errorf("in one cluster the status says %d requests and nginx served %d; zoned: %d", n, served, total)
	}
	// The zone runs are gone once the zoned run ended, here and (MultiKueue) in cluster 2.
	zoneRun := &v1alpha1.TestRun{ObjectMeta: metav1.ObjectMeta{Name: naming.ZoneRun(run.Name, "c2"), Namespace: ns}}
	home.waitGone(t, zoneRun, time.Minute)
	worker.waitGone(t, zoneRun, 2*time.Minute)
}

// TestLoadZonesOnAProvisionedTarget: a zoned run's target provisioned in cluster 1 (nginx on
// C1) is reached from cluster 2 by a NodePort on a node's address: its zone's runners get
// TARGET_WEB_URL moved there, and the requests in status equal what nginx served.
func TestLoadZonesOnAProvisionedTarget(t *testing.T) {
	home, worker, ns, _ := zoneSetup(t, "e2e-zones-provisioned")
	script := `import http from 'k6/http';
export const options = { scenarios: { s: { executor: 'shared-iterations', vus: 4, iterations: 200, maxDuration: '90s' } } };
export default function () { http.get(` + "`${__ENV.TARGET_WEB_URL}/`" + `); }
`
	run := tw.MakeTestRun("provisioned", ns).Inline(script).Zones(twoZones(1, 1)...).Cleanup(v1alpha1.TargetKeepUntilDeleted).Obj()
	worker.dumpOnFailure(t, client.ObjectKey{Namespace: ns, Name: naming.ZoneRun(run.Name, "c2")}, "")
	got := home.run(t, run, 5*time.Minute)
	if got.Status.Phase != v1alpha1.PhaseSucceeded {
		t.Fatalf("the zoned run is %s/%s: %s", got.Status.Phase, got.Status.Reason, got.Status.Message)
	}
	served := home.nginxRequests(t, naming.TargetNamespace(ns, run.Name), "web") - 1 // minus this read
	if total := totalRequests(got); total != 200 || served != 200 {
		t.Fatalf("the zoned run's status says %d requests, nginx served %d: want 200 of both", total, served)
	}
	for _, z := range got.Status.Zones {
		t.Logf("zone %s: %s, %d requests, started %s after the first", z.Name, z.State, z.Requests, z.StartOffset)
		if z.State != v1alpha1.ZoneEnded || z.Requests == 0 {
			t.Errorf("zone %s: %s with %d requests, want Ended with some", z.Name, z.State, z.Requests)
		}
	}
}

func totalRequests(run *v1alpha1.TestRun) int64 {
	if r := run.Status.Results; r != nil && r.Requests != nil {
		return r.Requests.Total
	}
	return -1
}

// TestZoneThatCannotArmFailsBeforeLoad: a zone that cannot arm fails the run ZoneNotArmed,
// naming the zone, and no zone ever starts (nginx serves nothing):
//   - a cluster no LocalQueue of the namespace dispatches to fails it at once;
//   - a zone MultiKueue cannot place (its namespace is missing in cluster 2) fails it at
//     spec.timeouts.runnersReady.
func TestZoneThatCannotArmFailsBeforeLoad(t *testing.T) {
	home, _, ns, url := zoneSetup(t, "e2e-zones-unarmed")
	cases := []struct {
		name, ns string
		zones    []v1alpha1.ZoneSpec
		want     string
	}{
		{"no queue to the cluster", ns, []v1alpha1.ZoneSpec{{Name: "home", Runners: 1}, {Name: "nowhere", Cluster: "cluster-9", Runners: 1}},
			"zone nowhere: namespace " + ns + " has no LocalQueue zone-cluster-9"},
		{"not placed in time", home.namespace(t, "e2e-zones-unplaced"), twoZones(1, 1), "waiting for zone c2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.ns != ns {
				_, homeKueue, _ := workerEnv(t)
				localQueue(t, home, homeKueue, tc.ns, zoneQueue, zoneQueue) // and no such namespace in cluster 2
			}
			run := tw.MakeTestRun("unarmed", tc.ns).External(url).Inline(zoneScript).Zones(tc.zones...).
				Timeouts(&v1alpha1.TimeoutsSpec{RunnersReady: "30s"}).Obj()
			home.dumpOnFailure(t, client.ObjectKeyFromObject(run), "")
			before := home.nginxRequests(t, ns, "target")
			if err := home.c.Create(home.ctx, run); err != nil {
				t.Fatal(err)
			}
			got, took := home.waitFinished(t, run, 3*time.Minute)
			t.Logf("%s/%s in %s: %s", got.Status.Phase, got.Status.Reason, took.Round(time.Second), got.Status.Message)
			if got.Status.Phase != v1alpha1.PhaseFailed || got.Status.Reason != v1alpha1.ReasonZoneNotArmed || !strings.Contains(got.Status.Message, tc.want) {
				t.Fatalf("the run is %s/%s, want Failed/%s saying %q: %s", got.Status.Phase, got.Status.Reason, v1alpha1.ReasonZoneNotArmed, tc.want, got.Status.Message)
			}
			if got.Status.StartTime != nil {
				t.Errorf("the run started at %s: no zone may start when one cannot arm", got.Status.StartTime)
			}
			if n := home.nginxRequests(t, ns, "target") - before - 1; n != 0 {
				t.Errorf("nginx served %d requests: no zone may start when one cannot arm", n)
			}
			// Its zone runs are deleted once it failed.
			home.waitGone(t, &v1alpha1.TestRun{ObjectMeta: metav1.ObjectMeta{Name: naming.ZoneRun(run.Name, tc.zones[1].Name), Namespace: tc.ns}}, time.Minute)
		})
	}
}

// zoneLongScript: each of the fleet's 8 VUs makes 40 requests, one every 250 ms (10 s).
const zoneLongScript = `import http from 'k6/http';
import { sleep } from 'k6';
export const options = { scenarios: { s: { executor: 'per-vu-iterations', vus: 8, iterations: 40, maxDuration: '60s' } } };
export default function () { http.get(` + "`${__ENV.TARGET_URL}/`" + `); sleep(0.25); }
`

// TestLoadZoneLostMidRun: cluster 2's fleetbench stops mid-run, so its zone stops reporting.
// At the run's deadline plus the collection timeout the run ends with a partial result: the
// home zone's requests exact (its 4 VUs x 40), the lost zone named, and the verdict not PASSED.
func TestLoadZoneLostMidRun(t *testing.T) {
	home, worker, ns, url := zoneSetup(t, "e2e-zones-lost")
	run := tw.MakeTestRun("lost", ns).External(url).Inline(zoneLongScript).Zones(twoZones(1, 1)...).
		Timeouts(&v1alpha1.TimeoutsSpec{Run: "40s", Collection: "15s"}).Obj()
	home.dumpOnFailure(t, client.ObjectKeyFromObject(run), "")
	if err := home.c.Create(home.ctx, run); err != nil {
		t.Fatal(err)
	}
	home.eventually(t, "zone c2 running", 3*time.Minute, func() (bool, string) {
		got := &v1alpha1.TestRun{}
		if err := home.c.Get(home.ctx, client.ObjectKeyFromObject(run), got); err != nil {
			return false, err.Error()
		}
		for _, z := range got.Status.Zones {
			if z.Name == "c2" {
				return z.State == v1alpha1.ZoneRunning, fmt.Sprintf("%s: %s", z.State, z.Message)
			}
		}
		return false, fmt.Sprintf("%s: %s", got.Status.Phase, got.Status.Message)
	})
	worker.scaleManager(t, 0)
	t.Cleanup(func() { worker.scaleManager(t, 1) })
	got, took := home.waitFinished(t, run, 3*time.Minute)
	t.Logf("%s/%s %s in %s: %s", got.Status.Phase, got.Status.Reason, got.Status.Verdict, took.Round(time.Second), got.Status.Message)
	if got.Status.Verdict == v1alpha1.VerdictPassed {
		t.Errorf("a run that lost a zone is PASSED")
	}
	if r := got.Status.Results; r == nil || !r.Partial {
		t.Fatalf("results %+v: want partial", got.Status.Results)
	}
	if n := totalRequests(got); n != 4*40 {
		t.Errorf("the results count %d requests, want exactly the home zone's 160", n)
	}
	for _, z := range got.Status.Zones {
		t.Logf("zone %s: %s %d requests: %s", z.Name, z.State, z.Requests, z.Message)
		if z.Name == "c2" && z.State != v1alpha1.ZoneLost {
			t.Errorf("zone c2 is %s, want Lost", z.State)
		}
	}
}

// scaleManager sets the replicas of the fleetbench manager of e's cluster and waits for them.
func (e *env) scaleManager(t *testing.T, replicas int32) {
	t.Helper()
	d := &appsv1.Deployment{}
	key := client.ObjectKey{Namespace: managerNamespace, Name: "fleetbench-manager"}
	if err := e.c.Get(e.ctx, key, d); err != nil {
		t.Fatal(err)
	}
	d.Spec.Replicas = ptr.To(replicas)
	if err := e.c.Update(e.ctx, d); err != nil {
		t.Fatal(err)
	}
	e.eventually(t, fmt.Sprintf("the manager at %d replicas", replicas), 2*time.Minute, func() (bool, string) {
		if err := e.c.Get(e.ctx, key, d); err != nil {
			return false, err.Error()
		}
		return d.Status.ReadyReplicas == replicas && d.Status.Replicas == replicas, fmt.Sprintf("%d ready of %d", d.Status.ReadyReplicas, d.Status.Replicas)
	})
}
