package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Load zones (spec.zones) spread one TestRun's runners over several clusters. The run stays in
// its home cluster; each zone of another cluster becomes a zone run, a TestRun that Kueue's
// MultiKueue dispatches there (spec.managedBy, testrun_dispatch.go) and whose status comes
// back to the home cluster through MultiKueue's status copy:
//   - The fleet's execution segments are cut once over every zone's runners in the order the
//     zones are listed (spec.zoneOf says which a zone run holds), so the union of all runners
//     is exactly one k6 run.
//   - Every zone arms (its runners paused and ready) before any starts. The home run then
//     dispatches a ZoneStart per other zone with the planned start time, and every zone
//     resumes its runners at that time by its own clock.
//   - Each zone run reports its runners' result envelopes in status.zoneRun; the home run
//     merges them with its own runners' exactly as it merges runners.

// ZoneSpec is one load zone: a cluster and the runners it runs.
type ZoneSpec struct {
	// name of the zone, as status, kubectl fleetbench and the report show it.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=20
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// cluster is the MultiKueueCluster whose fleetbench runs this zone's runners, dispatched
	// through the LocalQueue zone-<cluster> of the run's namespace; unset: this (the home)
	// cluster. Exactly one zone is the home cluster's.
	// +optional
	// +kubebuilder:validation:MaxLength=40
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Cluster string `json:"cluster,omitempty"`

	// runners is how many runners the zone runs, each with its own execution segment of the fleet.
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	Runners int32 `json:"runners"`
}

// ZoneOfSpec marks a zone run: which home run it is a zone of, and which of the fleet's
// execution segments its runners hold. fleetbench sets it on the zone runs it makes.
type ZoneOfSpec struct {
	// run is the home TestRun's name.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Run string `json:"run"`
	// zone is the zone's name in the home run's spec.zones.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=20
	Zone string `json:"zone"`
	// firstSegment is the fleet index of this zone's first runner; its runners hold the
	// segments firstSegment .. firstSegment+parallelism-1 of fleetRunners.
	// +required
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=799
	FirstSegment int32 `json:"firstSegment"`
	// fleetRunners is every zone's runners together: the fleet's segment count.
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=800
	FleetRunners int32 `json:"fleetRunners"`
}

// FleetRunners is how many runners share the load across every zone: n, the run's own
// runners, without zones.
func (s *TestRunSpec) FleetRunners(n int) int {
	switch {
	case s.ZoneOf != nil:
		return int(s.ZoneOf.FleetRunners)
	case len(s.Zones) > 0:
		total := 0
		for _, z := range s.Zones {
			total += int(z.Runners)
		}
		return total
	}
	return n
}

// FleetIndex is the fleet-wide index, and so the execution segment, of the run's runner i.
func (s *TestRunSpec) FleetIndex(i int) int {
	switch {
	case s.ZoneOf != nil:
		return int(s.ZoneOf.FirstSegment) + i
	case len(s.Zones) > 0:
		first, _ := s.ZoneSegments(s.HomeZone().Name)
		return first + i
	}
	return i
}

// HomeZone is the zone the home cluster runs (admission keeps exactly one); nil without zones.
func (s *TestRunSpec) HomeZone() *ZoneSpec {
	for i := range s.Zones {
		if s.Zones[i].Cluster == "" {
			return &s.Zones[i]
		}
	}
	return nil
}

// ZoneSegments is the fleet index of zone's first runner, and its runner count: zones take
// consecutive segments in the order listed.
func (s *TestRunSpec) ZoneSegments(zone string) (first, runners int) {
	for _, z := range s.Zones {
		if z.Name == zone {
			return first, int(z.Runners)
		}
		first += int(z.Runners)
	}
	return first, 0
}

// ZoneState is where one zone of a zoned run stands.
// +kubebuilder:validation:Enum=Pending;Armed;Running;Ended;Failed;Lost
type ZoneState string

const (
	// ZonePending: the zone's runners are being dispatched, made or readied.
	ZonePending ZoneState = "Pending"
	// ZoneArmed: every runner of the zone is ready and paused, waiting for the start.
	ZoneArmed ZoneState = "Armed"
	// ZoneRunning: the zone's runners were started.
	ZoneRunning ZoneState = "Running"
	// ZoneEnded: the zone's load ended and its results were merged.
	ZoneEnded ZoneState = "Ended"
	// ZoneFailed: the zone could not arm, or its run failed without results.
	ZoneFailed ZoneState = "Failed"
	// ZoneLost: the zone stopped reporting mid-run; the results leave it out.
	ZoneLost ZoneState = "Lost"
)

// ZoneStatus is one zone's row of a zoned run.
type ZoneStatus struct {
	// name of the zone (spec.zones).
	// +kubebuilder:validation:MaxLength=20
	Name string `json:"name"`
	// cluster is the zone's cluster; empty: the home cluster.
	// +optional
	// +kubebuilder:validation:MaxLength=40
	Cluster string `json:"cluster,omitempty"`
	// run is the zone run that carries the zone to its cluster; empty for the home zone.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Run string `json:"run,omitempty"`
	// runners is the zone's runner count.
	Runners int32 `json:"runners"`
	// state: Pending, Armed, Running, Ended, Failed or Lost.
	State ZoneState `json:"state"`
	// startedAt is when the zone's first runner acknowledged the start, by its cluster's clock.
	// +optional
	StartedAt *metav1.MicroTime `json:"startedAt,omitempty"`
	// startOffset is how much later than the earliest zone this zone started, e.g. 3ms: the
	// start skew between zones.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	StartOffset string `json:"startOffset,omitempty"`
	// requests and failedRequests are the zone's own http_reqs and failed ones.
	// +optional
	Requests int64 `json:"requests,omitempty"`
	// +optional
	FailedRequests int64 `json:"failedRequests,omitempty"`
	// latency is the zone's own http_req_duration (avg, p50, p95, p99), e.g. p95 12.3ms: the
	// report draws the zones' side by side.
	// +optional
	Latency *Latency `json:"latency,omitempty"`
	// message says why a zone failed or was lost.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`
}

// ZoneRunStatus is what a zone run reports to its home run, through MultiKueue's status copy.
type ZoneRunStatus struct {
	// armedAt is when every runner of the zone was ready and paused.
	// +optional
	ArmedAt *metav1.MicroTime `json:"armedAt,omitempty"`
	// startedAt is when the zone's first runner acknowledged the start.
	// +optional
	StartedAt *metav1.MicroTime `json:"startedAt,omitempty"`
	// envelopes are the zone's runners' final result envelopes, each in fleetbench's envelope
	// format as a runner prints it (with its length and SHA-256), one per runner that
	// reported: the home run merges them with its own. At most MaxZoneEnvelopeBytes (640 KiB) in all.
	// Bytes, not text: status text is made printable, which would join an envelope's lines.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MaxLength=900000
	Envelopes [][]byte `json:"envelopes,omitempty"`
	// problems say which runners' results the envelopes lack, and why.
	// +optional
	// +kubebuilder:validation:MaxItems=20
	// +kubebuilder:validation:items:MaxLength=1024
	Problems []string `json:"problems,omitempty"`
}

// MaxZoneEnvelopeBytes bounds a zone run's envelopes in its status: base64 in the object
// (x4/3), beside an inline script of up to 256 KiB and the rest of the status, it stays under
// etcd's 1.5 MiB. A zone whose envelopes are larger reports a problem instead of its results.
const MaxZoneEnvelopeBytes = 640 << 10

// ZoneStart starts the runners of a zone run at a planned time. The home run of a zoned run
// makes one per zone of another cluster once every zone is armed; MultiKueue dispatches it
// to the zone's cluster (ZoneStart is in the manager's multiKueue.externalFrameworks), whose
// fleetbench resumes the zone run's runners at spec.at by its own clock.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced
// +kubebuilder:printcolumn:name="Run",type=string,JSONPath=`.spec.run`
// +kubebuilder:printcolumn:name="At",type=string,JSONPath=`.spec.at`
type ZoneStart struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ZoneStartSpec `json:"spec"`
	// +optional
	Status ZoneStartStatus `json:"status,omitempty"`
}

// ZoneStartSpec names the zone run and when it starts.
type ZoneStartSpec struct {
	// run is the zone run (in this namespace) the start is for.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Run string `json:"run"`
	// at is the planned start, by the clocks of the clusters (kept by NTP).
	// +required
	At metav1.MicroTime `json:"at"`
	// managedBy is kueue.x-k8s.io/multikueue in the home cluster; MultiKueue removes it from
	// its copy in the zone's cluster.
	// +optional
	// +kubebuilder:validation:Enum=kueue.x-k8s.io/multikueue
	ManagedBy string `json:"managedBy,omitempty"`
}

// ZoneStartStatus is empty: MultiKueue copies a dispatched object's status home, so the kind
// has one.
type ZoneStartStatus struct{}

// ZoneStartList is a list of ZoneStarts.
// +kubebuilder:object:root=true
type ZoneStartList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ZoneStart `json:"items"`
}

// MessageZoneNoLocalQueue (namespace, LocalQueue, cluster): a zone no LocalQueue dispatches.
const MessageZoneNoLocalQueue = "namespace %s has no LocalQueue %s, the queue that dispatches a zone to cluster %s: " +
	"an admin makes it, on a ClusterQueue whose MultiKueue AdmissionCheck names that cluster (README, Load zones)"

// Reasons of zoned runs.
const (
	// ReasonZoneNotArmed: a zone could not arm (not dispatched, its runners not ready, or its
	// run failed) before its deadline; no zone was started.
	ReasonZoneNotArmed = "ZoneNotArmed"
	// ReasonWaitingForZones: the home zone is armed; other zones are not yet.
	ReasonWaitingForZones = "WaitingForZones"
	// ReasonWaitingForZoneStart: a zone run is armed and waits for its ZoneStart.
	ReasonWaitingForZoneStart = "WaitingForZoneStart"
	// ReasonZoneLost: a zone stopped reporting after it started.
	ReasonZoneLost = "ZoneLost"
)
