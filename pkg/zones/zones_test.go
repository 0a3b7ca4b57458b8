package zones

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/runners"
)

func zonedRun() *v1alpha1.TestRun {
	run := &v1alpha1.TestRun{ObjectMeta: metav1.ObjectMeta{Name: "fleet", Namespace: "team", UID: "u-1"}}
	run.Spec.Zones = []v1alpha1.ZoneSpec{{Name: "eu", Cluster: "cluster-2", Runners: 1}, {Name: "home", Runners: 2}, {Name: "us", Cluster: "cluster-3", Runners: 3}}
	run.Spec.Target.External = &v1alpha1.ExternalTarget{URL: "http://10.0.0.1:30080"}
	ttl := int32(60)
	run.Spec.TTLSecondsAfterFinished = &ttl
	return run
}

// TestSegmentsAreCutOnceOverEveryZone: every runner of every zone holds its own segment of one
// sequence over the whole fleet, in the order the zones are listed, and together they cover it.
func TestSegmentsAreCutOnceOverEveryZone(t *testing.T) {
	home := zonedRun()
	whole := runners.Segments(6)
	var got []string
	for _, z := range home.Spec.Zones {
		spec := &home.Spec
		n := int(z.Runners)
		if z.Cluster != "" {
			spec = &Run(home, z, Target{URL: "http://10.0.0.1:30080"}).Spec
			if spec.FixedParallelism() != n {
				t.Errorf("zone %s's run has %d runners, want %d", z.Name, spec.FixedParallelism(), n)
			}
		} else if spec.FixedParallelism() != n {
			t.Errorf("the home run has %d runners of its own, want the home zone's %d", spec.FixedParallelism(), n)
		}
		if spec.FleetRunners(n) != 6 {
			t.Errorf("zone %s: a fleet of %d, want 6", z.Name, spec.FleetRunners(n))
		}
		for i := range n {
			got = append(got, whole[spec.FleetIndex(i)].Segment)
		}
	}
	for i, seg := range got {
		if seg != whole[i].Segment {
			t.Fatalf("runner %d of the fleet holds %s, want %s (all: %v)", i, seg, whole[i].Segment, got)
		}
	}
}

// TestZoneRunIsTheHomeTestDispatched: a zone run is the home run's test, dispatched through
// its zone's LocalQueue, without what only the home run judges or deletes.
func TestZoneRunIsTheHomeTestDispatched(t *testing.T) {
	home := zonedRun()
	zr := Run(home, home.Spec.Zones[2], Target{URL: "http://10.0.0.1:30080"})
	if zr.Name != "fleet-zone-us" || zr.Namespace != "team" {
		t.Errorf("zone run %s/%s", zr.Namespace, zr.Name)
	}
	if zr.Spec.ManagedBy != v1alpha1.ManagedByMultiKueue || zr.Spec.Queue == nil || zr.Spec.Queue.LocalQueue != "zone-cluster-3" {
		t.Errorf("managedBy %q, queue %+v: want MultiKueue through zone-cluster-3", zr.Spec.ManagedBy, zr.Spec.Queue)
	}
	if zr.Spec.Zones != nil || zr.Spec.TTLSecondsAfterFinished != nil {
		t.Errorf("the zone run keeps zones %v or a TTL %v", zr.Spec.Zones, zr.Spec.TTLSecondsAfterFinished)
	}
	if of := zr.Spec.ZoneOf; of == nil || of.Run != "fleet" || of.Zone != "us" || of.FirstSegment != 3 || of.FleetRunners != 6 {
		t.Errorf("zoneOf %+v, want fleet/us from segment 3 of 6", zr.Spec.ZoneOf)
	}
	if !Of(zr, home) || len(zr.OwnerReferences) != 0 {
		t.Errorf("labels %v, owners %v: want the home UID label and no owner reference (MultiKueue copies it to the worker)", zr.Labels, zr.OwnerReferences)
	}
	other := zonedRun()
	other.UID = "u-2"
	if Of(zr, other) {
		t.Error("a zone run of another UID is taken for this run's")
	}
	if home.Spec.Zones == nil || home.Spec.TTLSecondsAfterFinished == nil {
		t.Error("Run changed the home run's spec")
	}
}

func micro(ms int) *metav1.MicroTime {
	t := metav1.NewMicroTime(time.Unix(1_800_000_000, 0).Add(time.Duration(ms) * time.Millisecond))
	return &t
}

// TestStateOf: what a zone run's status, copied home, says of its zone.
func TestStateOf(t *testing.T) {
	cases := []struct {
		name   string
		status v1alpha1.TestRunStatus
		want   v1alpha1.ZoneState
	}{
		{"not reported", v1alpha1.TestRunStatus{Phase: v1alpha1.PhaseProvisioning}, v1alpha1.ZonePending},
		{"armed", v1alpha1.TestRunStatus{Phase: v1alpha1.PhaseStarting, ZoneRun: &v1alpha1.ZoneRunStatus{ArmedAt: micro(0)}}, v1alpha1.ZoneArmed},
		{"started", v1alpha1.TestRunStatus{Phase: v1alpha1.PhaseRunning, ZoneRun: &v1alpha1.ZoneRunStatus{ArmedAt: micro(0), StartedAt: micro(5)}}, v1alpha1.ZoneRunning},
		{"ended with results", v1alpha1.TestRunStatus{Phase: v1alpha1.PhaseSucceeded, ZoneRun: &v1alpha1.ZoneRunStatus{StartedAt: micro(5), Envelopes: [][]byte{[]byte("x")}}}, v1alpha1.ZoneEnded},
		{"failed after its start", v1alpha1.TestRunStatus{Phase: v1alpha1.PhaseFailed, ZoneRun: &v1alpha1.ZoneRunStatus{StartedAt: micro(5)}}, v1alpha1.ZoneEnded},
		{"failed before its start", v1alpha1.TestRunStatus{Phase: v1alpha1.PhaseFailed, Message: "no queue"}, v1alpha1.ZoneFailed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := StateOf(&v1alpha1.TestRun{Status: tc.status})
			if got != tc.want {
				t.Errorf("%s, want %s", got, tc.want)
			}
		})
	}
	if got, _ := StateOf(nil); got != v1alpha1.ZonePending {
		t.Errorf("no zone run: %s, want Pending", got)
	}
}

// TestOffsets: each started zone's offset from the earliest, and the largest is the skew.
func TestOffsets(t *testing.T) {
	rows := []v1alpha1.ZoneStatus{{Name: "a", StartedAt: micro(12)}, {Name: "b", StartedAt: micro(3)}, {Name: "c"}}
	if skew := Offsets(rows); skew != 9*time.Millisecond {
		t.Errorf("skew %s, want 9ms", skew)
	}
	if rows[0].StartOffset != "9ms" || rows[1].StartOffset != "0s" || rows[2].StartOffset != "" {
		t.Errorf("offsets %q %q %q, want 9ms 0s and none", rows[0].StartOffset, rows[1].StartOffset, rows[2].StartOffset)
	}
}
