package testrun

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/measure"
	"fleetbench.dev/fleetbench/pkg/naming"
	"fleetbench.dev/fleetbench/pkg/zones"
)

// These tests play Kueue's MultiKueue for a zoned run: the zone run's status is written as
// MultiKueue copies it home from the zone's cluster.

// zonedRun is a run of one runner here and one in cluster-2, whose LocalQueue exists in ns.
func zonedRun(t *testing.T, name, ns string) *v1alpha1.TestRun {
	t.Helper()
	lq := &kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Name: zones.LocalQueue("cluster-2"), Namespace: ns}, Spec: kueue.LocalQueueSpec{ClusterQueue: "zones"}}
	if err := env.Client.Create(ctx, lq); err != nil {
		t.Fatal(err)
	}
	return tw.MakeTestRun(name, ns).External("http://10.0.0.1:30080").Devices(200, "10s").Duration("10s").
		Zones(v1alpha1.ZoneSpec{Name: "home", Runners: 1}, v1alpha1.ZoneSpec{Name: "c2", Cluster: "cluster-2", Runners: 1}).Obj()
}

func zoneRunOf(t *testing.T, run *v1alpha1.TestRun, zone string) *v1alpha1.TestRun {
	t.Helper()
	zr := &v1alpha1.TestRun{}
	eventually(t, "zone run "+zone, func() error {
		return env.Client.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: naming.ZoneRun(run.Name, zone)}, zr)
	})
	return zr
}

// TestZonedRunStartsEveryZoneTogetherAndMergesThem: a zoned run dispatches its other zone as
// a zone run (its segment of the fleet, MultiKueue's queue, no owner reference), starts
// nothing until that zone is armed, then makes its ZoneStart (and the Workload that dispatches
// it) and starts its own runner at the planned time; it merges the zone's envelopes with its
// own runner's, fills a row per zone, and deletes the zone run and start once it ended.
func TestZonedRunStartsEveryZoneTogetherAndMergesThem(t *testing.T) {
	ns := setup(t)
	run := zonedRun(t, "zoned", ns)
	create(t, run)
	k := newKubelet(t, run)
	pods := k.runnersReady(1)

	zr := zoneRunOf(t, run, "c2")
	if of := zr.Spec.ZoneOf; of == nil || of.FirstSegment != 1 || of.FleetRunners != 2 || zr.Spec.ManagedBy != v1alpha1.ManagedByMultiKueue ||
		zr.Spec.Queue == nil || zr.Spec.Queue.LocalQueue != "zone-cluster-2" || len(zr.OwnerReferences) != 0 {
		t.Fatalf("zone run: zoneOf %+v, managedBy %q, queue %+v, owners %v", zr.Spec.ZoneOf, zr.Spec.ManagedBy, zr.Spec.Queue, zr.OwnerReferences)
	}
	got := waitPhase(t, run, v1alpha1.PhaseStarting, v1alpha1.ReasonWaitingForZones)
	if runner.resumes(ns) != 0 || !strings.Contains(got.Status.Message, "zone c2") {
		t.Fatalf("%d resumes before the zone armed; message %q", runner.resumes(ns), got.Status.Message)
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: naming.ZoneStart(zr.Name)}, &v1alpha1.ZoneStart{}); !apierrors.IsNotFound(err) {
		t.Fatalf("a ZoneStart before every zone armed: %v", err)
	}

	// The zone's cluster armed it.
	armed := metav1.NewMicroTime(time.Now())
	copyStatus(t, zr, func(st *v1alpha1.TestRunStatus) {
		st.Phase, st.Reason = v1alpha1.PhaseStarting, v1alpha1.ReasonWaitingForZoneStart
		st.ZoneRun = &v1alpha1.ZoneRunStatus{ArmedAt: &armed}
	})
	zs := &v1alpha1.ZoneStart{}
	eventually(t, "the zone's ZoneStart", func() error {
		return env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: naming.ZoneStart(zr.Name)}, zs)
	})
	if zs.Spec.Run != zr.Name || zs.Spec.ManagedBy != v1alpha1.ManagedByMultiKueue || !zones.Of(zs, run) {
		t.Errorf("ZoneStart %+v labels %v", zs.Spec, zs.Labels)
	}
	wl := &kueue.Workload{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: naming.Workload(zs.Name)}, wl); err != nil {
		t.Fatalf("the ZoneStart's Workload: %v", err)
	}
	if wl.Spec.QueueName != "zone-cluster-2" || metav1.GetControllerOf(wl) == nil || metav1.GetControllerOf(wl).UID != zs.UID {
		t.Errorf("ZoneStart Workload queue %q, controller %+v", wl.Spec.QueueName, metav1.GetControllerOf(wl))
	}
	got = waitPhase(t, run, v1alpha1.PhaseRunning, "")
	if runner.resumes(ns) != 1 {
		t.Fatalf("%d resumes, want the home zone's 1", runner.resumes(ns))
	}
	if started := got.Status.StartTime.Time; started.Before(zs.Spec.At.Add(-time.Second)) {
		t.Errorf("started %s, before the planned %s", started, zs.Spec.At.Time)
	}

	// Both zones ran 100 requests; the zone's come home in its status.
	start := time.Now()
	var zoneEnv bytes.Buffer
	e := tw.Envelope(tw.RunnerLoad{Runner: "zoned-zone-c2-runner-0", Requests: 100, Start: start, Duration: 10 * time.Second, CPUSeconds: 0.5})
	if err := measure.Encode(&zoneEnv, &e); err != nil {
		t.Fatal(err)
	}
	zoneStarted := metav1.NewMicroTime(zs.Spec.At.Add(3 * time.Millisecond))
	copyStatus(t, zr, func(st *v1alpha1.TestRunStatus) {
		st.Phase, st.Reason = v1alpha1.PhaseSucceeded, v1alpha1.ReasonCompleted
		st.ZoneRun = &v1alpha1.ZoneRunStatus{ArmedAt: &armed, StartedAt: &zoneStarted, Envelopes: [][]byte{zoneEnv.Bytes()}}
	})
	logs.set(pods[0], load(pods[0], start), nil)
	k.Finish(pods[0], 0, "Completed")
	got = waitPhase(t, run, v1alpha1.PhaseSucceeded, v1alpha1.ReasonCompleted)
	if r := got.Status.Results; r == nil || r.Partial || r.Requests == nil || r.Requests.Total != 200 {
		t.Fatalf("results %+v: want 200 requests, both zones merged", got.Status.Results)
	}
	if len(got.Status.Zones) != 2 {
		t.Fatalf("zones %+v", got.Status.Zones)
	}
	for _, z := range got.Status.Zones {
		if z.State != v1alpha1.ZoneEnded || z.Requests != 100 || z.StartedAt == nil || z.StartOffset == "" || z.Latency == nil {
			t.Errorf("zone row %+v: want Ended, 100 requests, a start and its offset, latency", z)
		}
	}
	eventually(t, "the zone run and its start deleted", func() error {
		for _, obj := range []client.Object{zr, zs} {
			err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)
			if err == nil {
				return fmt.Errorf("%s still there", obj.GetName())
			}
			if !apierrors.IsNotFound(err) {
				return err
			}
		}
		return nil
	})
}

// TestZoneThatFailsBeforeItsStartFailsTheRun: a zone run that ended before it started (its
// cluster refused it) fails the zoned run ZoneNotArmed, naming the zone, before any runner
// started; a zone with no LocalQueue to its cluster fails it at once.
func TestZoneThatFailsBeforeItsStartFailsTheRun(t *testing.T) {
	ns := setup(t)
	run := zonedRun(t, "refused", ns)
	create(t, run)
	k := newKubelet(t, run)
	k.runnersReady(1)
	zr := zoneRunOf(t, run, "c2")
	copyStatus(t, zr, func(st *v1alpha1.TestRunStatus) {
		st.Phase, st.Reason, st.Message = v1alpha1.PhaseFailed, v1alpha1.ReasonQueueRejected, "the prebuilt Workload asks less"
	})
	got := waitPhase(t, run, v1alpha1.PhaseFailed, v1alpha1.ReasonZoneNotArmed)
	if !strings.Contains(got.Status.Message, "zone c2") || !strings.Contains(got.Status.Message, "asks less") || got.Status.StartTime != nil || runner.resumes(ns) != 0 {
		t.Errorf("message %q, started %v, %d resumes", got.Status.Message, got.Status.StartTime, runner.resumes(ns))
	}

	noQueue := tw.MakeTestRun("noqueue", ns).External("http://10.0.0.1:30080").Duration("10s").
		Zones(v1alpha1.ZoneSpec{Name: "home", Runners: 1}, v1alpha1.ZoneSpec{Name: "far", Cluster: "cluster-9", Runners: 1}).Obj()
	create(t, noQueue)
	got = waitPhase(t, noQueue, v1alpha1.PhaseFailed, v1alpha1.ReasonZoneNotArmed)
	if !strings.Contains(got.Status.Message, "no LocalQueue zone-cluster-9") {
		t.Errorf("message %q does not name the missing LocalQueue", got.Status.Message)
	}
	err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: naming.ZoneRun(noQueue.Name, "far")}, &v1alpha1.TestRun{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("a zone run was made with no queue to dispatch it: %v", errors.Join(err))
	}
}

// TestZonedRunExposesItsProvisionedTarget: a zoned run's provisioned target is reached from the
// other cluster by its Services' NodePorts on the target node's address: the zone run is made
// once they are known, with that URL as its external target and TARGET_WEB_* moved there.
func TestZonedRunExposesItsProvisionedTarget(t *testing.T) {
	ns := setup(t)
	base := zonedRun(t, "exposed", ns)
	run := tw.MakeTestRun("exposed", ns).Devices(200, "10s").Duration("10s").Zones(base.Spec.Zones...).Obj()
	create(t, run)
	k := newKubelet(t, run)
	waitPhase(t, run, v1alpha1.PhaseProvisioning, "")
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: naming.ZoneRun(run.Name, "c2")}, &v1alpha1.TestRun{}); !apierrors.IsNotFound(err) {
		t.Fatalf("a zone run before the target's node is known: %v", err)
	}
	k.targetReady()
	zr := zoneRunOf(t, run, "c2")
	var svc corev1.Service
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: naming.TargetNamespace(ns, run.Name), Name: "web"}, &svc); err != nil {
		t.Fatal(err)
	}
	port := svc.Spec.Ports[0].NodePort
	if svc.Spec.Type != corev1.ServiceTypeNodePort || port == 0 {
		t.Fatalf("target Service %s %+v: want a NodePort", svc.Spec.Type, svc.Spec.Ports)
	}
	want := fmt.Sprintf("http://%s:%d", targetHostIP, port)
	if ext := zr.Spec.Target.External; ext == nil || ext.URL != want || len(zr.Spec.Target.Components) != 0 || zr.Spec.Profile != "" {
		t.Errorf("zone run target %+v profile %q: want external %s and nothing to provision", zr.Spec.Target, zr.Spec.Profile, want)
	}
	env := map[string]string{}
	if zr.Spec.Runner != nil {
		for _, e := range zr.Spec.Runner.Env {
			env[e.Name] = e.Value
		}
	}
	if env["TARGET_WEB_URL"] != want || env["TARGET_WEB_HOST"] != targetHostIP || env["TARGET_WEB_PORT"] != fmt.Sprint(port) {
		t.Errorf("zone run env %v: want TARGET_WEB_* at %s", env, want)
	}
}
