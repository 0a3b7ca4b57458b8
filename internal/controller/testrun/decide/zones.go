package decide

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/zones"
)

// ZoneRow is what a reconcile knows of one zone of a zoned run (spec.zones); the composer
// makes it a row of status.zones, with the zones' start offsets.
type ZoneRow struct {
	Name, Cluster, Run string
	Runners            int32
	State              v1alpha1.ZoneState
	// StartedAt is the zone's first runner's acknowledgement of the start; zero: not started.
	StartedAt time.Time
	Message   string
	// The zone's own numbers, once merged.
	Requests, Failed int64
	Latency          v1alpha1.Latency
}

// ZoneRowsOf are the rows status.zones holds, by zone name: what earlier reconciles decided.
func ZoneRowsOf(st []v1alpha1.ZoneStatus) map[string]ZoneRow {
	out := make(map[string]ZoneRow, len(st))
	for _, z := range st {
		row := ZoneRow{Name: z.Name, Cluster: z.Cluster, Run: z.Run, Runners: z.Runners, State: z.State, Message: z.Message,
			Requests: z.Requests, Failed: z.FailedRequests}
		if z.StartedAt != nil {
			row.StartedAt = z.StartedAt.Time
		}
		if z.Latency != nil {
			row.Latency = *z.Latency
		}
		out[z.Name] = row
	}
	return out
}

// composeZones is status.zones of rows, each started zone's offset from the earliest beside.
func composeZones(rows []ZoneRow) []v1alpha1.ZoneStatus {
	out := make([]v1alpha1.ZoneStatus, 0, len(rows))
	for _, r := range rows {
		z := v1alpha1.ZoneStatus{Name: r.Name, Cluster: r.Cluster, Run: r.Run, Runners: r.Runners, State: r.State, Message: r.Message,
			Requests: r.Requests, FailedRequests: r.Failed}
		if !r.StartedAt.IsZero() {
			at := metav1.NewMicroTime(r.StartedAt)
			z.StartedAt = &at
		}
		if r.Latency != (v1alpha1.Latency{}) {
			l := r.Latency
			z.Latency = &l
		}
		out = append(out, z)
	}
	zones.Offsets(out)
	return out
}
