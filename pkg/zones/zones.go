// Package zones builds the parts of a zoned TestRun (spec.zones) that cross clusters: the zone
// runs Kueue's MultiKueue dispatches, their starts, and the zones' rows from what the zone
// runs report. It makes objects and decides; it never talks to a cluster.
package zones

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/naming"
)

// Lead is how far ahead of now the home run plans the start once every zone is armed: longer
// than MultiKueue takes to dispatch a ZoneStart (about a second on the local clusters), so
// every zone holds its start before the time comes.
const Lead = 5 * time.Second

// LocalQueue is the LocalQueue, in the run's namespace, that dispatches a zone to cluster.
func LocalQueue(cluster string) string { return "zone-" + cluster }

// Others are the zones of spec that run in other clusters, in the order listed.
func Others(spec *v1alpha1.TestRunSpec) []v1alpha1.ZoneSpec {
	var out []v1alpha1.ZoneSpec
	for _, z := range spec.Zones {
		if z.Cluster != "" {
			out = append(out, z)
		}
	}
	return out
}

// Labels mark a zone run or start as home's.
func Labels(home *v1alpha1.TestRun) map[string]string {
	return map[string]string{naming.LabelZoneOf: naming.KeptRunLabel(home.Name), naming.LabelZoneOfUID: string(home.UID)}
}

// Of says whether obj, a zone run or start, was made for home: by its labels, which name
// home's UID, in home's namespace.
func Of(obj metav1.Object, home *v1alpha1.TestRun) bool {
	return obj.GetNamespace() == home.Namespace && obj.GetLabels()[naming.LabelZoneOfUID] == string(home.UID)
}

// Run is zone's zone run of home: home's test against target (home's, as the zone reaches
// it), holding the zone's execution segments of the fleet, dispatched through the zone's
// LocalQueue. What only the home run does is left out: its target is the home's, the
// baseline, trend and capacity are judged on the merged fleet there, and home's TTL deletes
// the zone runs with it.
func Run(home *v1alpha1.TestRun, zone v1alpha1.ZoneSpec, target Target) *v1alpha1.TestRun {
	spec := home.Spec.DeepCopy()
	spec.Target = v1alpha1.TargetSpec{External: &v1alpha1.ExternalTarget{URL: target.URL}}
	spec.Profile = ""
	if len(target.Env) > 0 {
		if spec.Runner == nil {
			spec.Runner = &v1alpha1.RunnerSpec{}
		}
		spec.Runner.Env = append(append([]corev1.EnvVar{}, target.Env...), spec.Runner.Env...)
	}
	first, runners := home.Spec.ZoneSegments(zone.Name)
	spec.Zones = nil
	spec.ZoneOf = &v1alpha1.ZoneOfSpec{Run: home.Name, Zone: zone.Name, FirstSegment: int32(first), FleetRunners: int32(home.Spec.FleetRunners(0))}
	spec.Parallelism = v1alpha1.FixedParallelism(int32(runners))
	spec.ManagedBy = v1alpha1.ManagedByMultiKueue
	queue := &v1alpha1.QueueSpec{}
	if home.Spec.Queue != nil {
		queue = home.Spec.Queue.DeepCopy()
	}
	queue.LocalQueue = LocalQueue(zone.Cluster)
	spec.Queue = queue
	spec.Baseline, spec.Trend, spec.Capacity, spec.TTLSecondsAfterFinished = nil, nil, nil, nil
	return &v1alpha1.TestRun{
		ObjectMeta: metav1.ObjectMeta{Name: naming.ZoneRun(home.Name, zone.Name), Namespace: home.Namespace, Labels: Labels(home)},
		Spec:       *spec,
	}
}

// Start is the ZoneStart that starts zoneRun at at, dispatched as the zone run was.
func Start(home, zoneRun *v1alpha1.TestRun, at time.Time) *v1alpha1.ZoneStart {
	labels := Labels(home)
	labels[naming.LabelTestRun] = zoneRun.Name // its cluster's fleetbench watches it by this label
	return &v1alpha1.ZoneStart{
		ObjectMeta: metav1.ObjectMeta{Name: naming.ZoneStart(zoneRun.Name), Namespace: home.Namespace, Labels: labels},
		Spec:       v1alpha1.ZoneStartSpec{Run: zoneRun.Name, At: metav1.NewMicroTime(at), ManagedBy: v1alpha1.ManagedByMultiKueue},
	}
}

// StateOf is where a zone run stands, as its status (MultiKueue's copy) says, and why when
// it failed. nil: not made yet.
func StateOf(zr *v1alpha1.TestRun) (v1alpha1.ZoneState, string) {
	if zr == nil {
		return v1alpha1.ZonePending, ""
	}
	st := &zr.Status
	report := st.ZoneRun
	ended := st.Phase == v1alpha1.PhaseSucceeded || st.Phase == v1alpha1.PhaseFailed
	switch {
	case ended && report != nil && (len(report.Envelopes) > 0 || report.StartedAt != nil):
		return v1alpha1.ZoneEnded, ""
	case ended:
		return v1alpha1.ZoneFailed, fmt.Sprintf("zone run %s ended %s before it started: %s", zr.Name, st.Phase, st.Message)
	case report != nil && report.StartedAt != nil:
		return v1alpha1.ZoneRunning, ""
	case report != nil && report.ArmedAt != nil:
		return v1alpha1.ZoneArmed, ""
	}
	return v1alpha1.ZonePending, st.Message
}

// Offsets fills each started row's startOffset: how much later than the earliest zone it
// started. It returns the largest, the start skew between zones.
func Offsets(rows []v1alpha1.ZoneStatus) time.Duration {
	var first time.Time
	for _, r := range rows {
		if r.StartedAt != nil && (first.IsZero() || r.StartedAt.Before(&metav1.MicroTime{Time: first})) {
			first = r.StartedAt.Time
		}
	}
	var skew time.Duration
	for i := range rows {
		if rows[i].StartedAt == nil {
			continue
		}
		d := rows[i].StartedAt.Sub(first)
		rows[i].StartOffset = d.Round(time.Microsecond).String()
		skew = max(skew, d)
	}
	return skew
}
