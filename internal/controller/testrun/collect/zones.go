package collect

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	rc "fleetbench.dev/fleetbench/internal/controller/ctrlkit"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	"fleetbench.dev/fleetbench/internal/controller/testrun/runio"
	"fleetbench.dev/fleetbench/pkg/judge"
	"fleetbench.dev/fleetbench/pkg/measure"
	"fleetbench.dev/fleetbench/pkg/naming"
	"fleetbench.dev/fleetbench/pkg/zones"
)

// zonePoll is how often a zoned run waiting for its zones' results looks again, beside the
// watch that wakes it when MultiKueue copies a zone run's status home.
const zonePoll = 5 * time.Second

// zoneToRead is one other zone whose run ended: read, checked and decoded with the merge, off
// the shared workers (readZones).
type zoneToRead struct {
	zone, run string
	runners   int
}

// zoneNumbers are one zone's own requests, failures and latency, for its row.
type zoneNumbers struct {
	requests, failed int64
	latency          v1alpha1.Latency
}

// zoneResults are what the zones that ended reported: their envelopes decoded, each zone's own
// numbers, the zones that reported nothing usable (lost, and why), and what is missing.
type zoneResults struct {
	envelopes []measure.Envelope
	numbers   map[string]zoneNumbers
	lost      map[string]string
	problems  []string
}

// gatherZones waits for a zoned run's other zones to end and says which to read. A zone with
// no results by the run's deadline plus the collection timeout is lost: the result is partial,
// the surviving zones' counts exact, the lost one named. wait: not yet.
func gatherZones(s *decide.Scope) (toRead []zoneToRead, problems []string, wait bool) {
	deadline := s.RunDeadline().Add(s.Timeouts.Collection)
	var pending []string
	for _, row := range s.Decided.Zones {
		switch row.State {
		case v1alpha1.ZonePending, v1alpha1.ZoneArmed, v1alpha1.ZoneRunning:
			if row.Cluster != "" && !rc.Expired(s.Now, deadline) {
				pending = append(pending, row.Name)
			}
		}
	}
	if len(pending) > 0 {
		s.Enter(v1alpha1.PhaseCollecting, v1alpha1.ReasonCollecting, fmt.Sprintf("waiting for the results of zone %v (until %s)", pending, deadline.UTC().Format(time.RFC3339)))
		return nil, nil, true
	}
	for i := range s.Decided.Zones {
		row := &s.Decided.Zones[i]
		switch {
		case row.Cluster == "":
		case row.State == v1alpha1.ZoneEnded:
			toRead = append(toRead, zoneToRead{zone: row.Name, run: row.Run, runners: int(row.Runners)})
		case row.State == v1alpha1.ZoneFailed || row.State == v1alpha1.ZoneLost:
			row.State = v1alpha1.ZoneLost
			problems = append(problems, fmt.Sprintf("zone %s was lost: %s", row.Name, row.Message))
		default: // not ended by the deadline
			row.State = v1alpha1.ZoneLost
			row.Message = fmt.Sprintf("no results from cluster %s by %s (the run's deadline and spec.timeouts.collection): the results leave its runners out", row.Cluster, deadline.UTC().Format(time.RFC3339))
			problems = append(problems, fmt.Sprintf("zone %s was lost: %s", row.Name, row.Message))
		}
	}
	return toRead, problems, false
}

// zoneRunReport is one ended zone's run as read: its report home, still encoded.
type zoneRunReport struct {
	zoneToRead
	phase     v1alpha1.TestRunPhase
	message   string
	envelopes [][]byte
	problems  []string
	unusable  string // why the report cannot be used; "" when it can
}

// maxZoneRunBytes is the most a zone run read whole may hold: an object's size limit in etcd.
const maxZoneRunBytes = 3 << 19

// readZones reads each ended zone's run live (the cache keeps no envelopes) and checks it is
// home's and within the size a zone may report. Each read is charged to runio.WireMemory, fair
// by namespace, until release: the reports are held until they are decoded. home is a copy:
// this runs off the worker.
func (r *Stage) readZones(ctx context.Context, home *v1alpha1.TestRun, toRead []zoneToRead) (_ []zoneRunReport, release func()) {
	out := make([]zoneRunReport, 0, len(toRead))
	var releases []func()
	release = func() {
		for _, f := range releases {
			f()
		}
	}
	for _, z := range toRead {
		rep := zoneRunReport{zoneToRead: z}
		zr := &v1alpha1.TestRun{}
		held, err := runio.WireMemory.Acquire(ctx, maxZoneRunBytes)
		if err == nil {
			releases = append(releases, held)
			err = r.APIReader.Get(ctx, client.ObjectKey{Namespace: home.Namespace, Name: z.run}, zr)
		}
		if err != nil {
			rep.unusable = "its zone run could not be read: " + err.Error()
		} else if st := zr.Status.ZoneRun; !zones.Of(zr, home) || st == nil {
			rep.unusable = "its zone run reported no results"
		} else if size := wireSize(st.Envelopes); size > v1alpha1.MaxZoneEnvelopeBytes {
			rep.unusable = fmt.Sprintf("its results are %d KiB, more than the %d KiB a zone may report", size>>10, v1alpha1.MaxZoneEnvelopeBytes>>10)
		} else {
			rep.phase, rep.message, rep.envelopes, rep.problems = zr.Status.Phase, zr.Status.Message, st.Envelopes, st.Problems
		}
		out = append(out, rep)
	}
	return out, release
}

// decodeZones decodes each zone's envelopes within the run's envelope limits. A zone that
// reports fewer runners' results than it has (its run failed after the start, or lost runners)
// is a problem: the results are partial; one with none, or refused, is lost.
func decodeZones(reports []zoneRunReport, fleet int, tenant string) zoneResults {
	out := zoneResults{numbers: map[string]zoneNumbers{}, lost: map[string]string{}}
	limits := runio.EnvelopeLimits(fleet, tenant)
	for _, z := range reports {
		if z.unusable != "" {
			out.lost[z.zone] = z.unusable
			continue
		}
		for _, p := range z.problems {
			out.problems = append(out.problems, fmt.Sprintf("zone %s: %s", z.zone, p))
		}
		envs := make([]measure.Envelope, 0, len(z.envelopes))
		var refused error
		for _, text := range z.envelopes {
			env, err := measure.DecodeWithin(text, limits)
			if err != nil {
				refused = err
				break
			}
			envs = append(envs, env)
		}
		switch {
		case refused != nil:
			out.lost[z.zone] = "its results were refused: " + refused.Error()
			continue
		case len(envs) == 0:
			out.lost[z.zone] = fmt.Sprintf("its zone run ended %s with no runner's results: %s", z.phase, z.message)
			continue
		case len(envs) < z.runners:
			out.problems = append(out.problems, fmt.Sprintf("zone %s: %d of its %d runners' results (its run ended %s: %s)", z.zone, len(envs), z.runners, z.phase, z.message))
		}
		out.numbers[z.zone] = numbersOf(envs)
		out.envelopes = append(out.envelopes, envs...)
	}
	for zone, why := range out.lost {
		out.problems = append(out.problems, fmt.Sprintf("zone %s was lost: %s", zone, why))
	}
	slices.Sort(out.problems)
	return out
}

func wireSize(envelopes [][]byte) int {
	n := 0
	for _, e := range envelopes {
		n += len(e)
	}
	return n
}

// numbersOf are the http requests, failed requests and latency of envs: one zone's runners.
func numbersOf(envs []measure.Envelope) zoneNumbers {
	from, to := time.Unix(0, 0), time.Unix(0, math.MaxInt64)
	var n zoneNumbers
	reqs, _ := measure.WindowedAgg(envs, "http_reqs", from, to)
	n.requests = int64(reqs.Sum)
	if failed, ok := measure.WindowedAgg(envs, "http_req_failed", from, to); ok {
		n.failed = int64(failed.NonZero)
	}
	if d, ok := measure.WindowedAgg(envs, "http_req_duration", from, to); ok && d.Count > 0 {
		n.latency = v1alpha1.Latency{Avg: judge.Millis(d.Avg()), P50: judge.Millis(d.Quantile(0.5)), P95: judge.Millis(d.Quantile(0.95)), P99: judge.Millis(d.Quantile(0.99))}
	}
	return n
}

// fillZoneRows puts each zone's numbers in its row (the zones that reported are Ended), and
// marks Lost those whose report could not be used, with why.
func fillZoneRows(rows []decide.ZoneRow, byZone map[string]zoneNumbers, lost map[string]string) {
	for i := range rows {
		if why, ok := lost[rows[i].Name]; ok {
			rows[i].State, rows[i].Message = v1alpha1.ZoneLost, why
			continue
		}
		n, ok := byZone[rows[i].Name]
		if !ok {
			continue
		}
		rows[i].State = v1alpha1.ZoneEnded
		rows[i].Requests, rows[i].Failed, rows[i].Latency = n.requests, n.failed, n.latency
	}
}

// encodeZoneReport is what a zone run reports home: its runners' envelopes, encoded as they
// travel in runner logs, and what they lack; a zone too large to report says so instead.
func encodeZoneReport(envs []measure.Envelope, problems []string) ([][]byte, []string) {
	out := make([][]byte, 0, len(envs))
	size := 0
	for i := range envs {
		var b bytes.Buffer
		if err := measure.Encode(&b, &envs[i]); err != nil {
			return nil, append(problems, "encoding runner "+envs[i].Runner+"'s results: "+err.Error())
		}
		size += b.Len()
		out = append(out, b.Bytes())
	}
	if size > v1alpha1.MaxZoneEnvelopeBytes {
		return nil, append(problems, fmt.Sprintf("the zone's results are %d KiB encoded, more than the %d KiB a zone may report home: fewer runners per zone, or fewer tags and windows",
			size>>10, v1alpha1.MaxZoneEnvelopeBytes>>10))
	}
	return out, problems
}

// DeleteZones deletes a zoned run's zone runs and starts, each proved the run's by its UID
// label in its namespace: MultiKueue then deletes their copies in the zones' clusters, and
// those clusters' fleetbench their runners. Done once the run ended, and on its deletion.
func (r *Stage) DeleteZones(ctx context.Context, run *v1alpha1.TestRun) error {
	if len(run.Spec.Zones) == 0 {
		return nil
	}
	sel := client.MatchingLabels{naming.LabelZoneOfUID: string(run.UID)}
	var starts v1alpha1.ZoneStartList
	if err := r.List(ctx, &starts, client.InNamespace(run.Namespace), sel); err != nil {
		return err
	}
	for i := range starts.Items {
		if zones.Of(&starts.Items[i], run) {
			if err := rc.DeleteExact(ctx, r.Client, &starts.Items[i]); err != nil {
				return err
			}
		}
	}
	var runs v1alpha1.TestRunList
	if err := r.List(ctx, &runs, client.InNamespace(run.Namespace), sel); err != nil {
		return err
	}
	for i := range runs.Items {
		if zr := &runs.Items[i]; zones.Of(zr, run) && zr.Spec.ZoneOf != nil && zr.Spec.ZoneOf.Run == run.Name && zr.Name == naming.ZoneRun(run.Name, zr.Spec.ZoneOf.Zone) {
			if err := rc.DeleteExact(ctx, r.Client, zr); err != nil {
				return err
			}
		}
	}
	return nil
}
