package drive

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	rc "fleetbench.dev/fleetbench/internal/controller/ctrlkit"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	"fleetbench.dev/fleetbench/internal/controller/testrun/runenv"
	"fleetbench.dev/fleetbench/internal/controller/testrun/runio"
	"fleetbench.dev/fleetbench/pkg/naming"
	"fleetbench.dev/fleetbench/pkg/queue"
	"fleetbench.dev/fleetbench/pkg/zones"
)

// ReconcileStart samples the idle target, then un-pauses every runner at once and records the
// spread of their acknowledgements.
func (r *Stage) ReconcileStart(ctx context.Context, s *decide.Scope) (ctrl.Result, error) {
	if s.Started() {
		return ctrl.Result{}, nil
	}
	if s.Target() == nil {
		err := r.measureBefore(ctx, s)
		if errors.Is(err, runio.ErrPending) {
			return rc.After(runio.SampleLimit), nil // sampled off the worker; its end wakes the run
		}
		ready := s.Condition(v1alpha1.ConditionTargetReady)
		if errors.Is(err, errNotScrapedYet) && ready != nil && s.Now.Before(ready.LastTransitionTime.Add(beforeSampleGrace)) {
			s.Enter(v1alpha1.PhaseStarting, v1alpha1.ReasonWaitingForTargetSample, err.Error()+"; the load starts once the idle target is sampled")
			return rc.After(2 * time.Second), nil
		}
	}

	if result, proceed := r.setupOnce(s); !proceed {
		return result, nil
	}
	// Armed. With zones, every zone starts together (holdStart, below).
	result, at, proceed, err := r.holdStart(ctx, s)
	if err != nil || !proceed {
		return result, err
	}
	acks := r.resumeAll(ctx, s, at)
	var first, last time.Time
	for i, a := range acks {
		if a.err != nil {
			// Runners that did start are not paused again; the rest are retried shortly.
			msg := fmt.Sprintf("runner %d: %v", i, a.err)
			s.RecordCondition(v1alpha1.ConditionStarted, metav1.ConditionFalse, v1alpha1.ReasonResumeFailed, msg)
			return s.WaitOrFail(s.RunnersReadyDeadline(), time.Second, v1alpha1.PhaseStarting, v1alpha1.ReasonResumeFailed,
				v1alpha1.ReasonStartFailed, "could not start "+msg, "; the runner's k6 REST API did not answer"), nil
		}
		if a.at.IsZero() {
			continue
		}
		if first.IsZero() || a.at.Before(first) {
			first = a.at
		}
		if a.at.After(last) {
			last = a.at
		}
	}
	if first.IsZero() {
		first, last = s.Now, s.Now
	}
	skew := last.Sub(first)
	runenv.StartSkew.Observe(skew.Seconds())
	offsets := make([]string, len(acks))
	for i, a := range acks {
		if !a.at.IsZero() {
			offsets[i] = a.at.Sub(first).String()
		}
	}
	logf.FromContext(ctx).Info("runners started", "first", first, "skew", skew, "acknowledgedAfterFirst", offsets)
	recordZoneStart(s, first)
	started := metav1.NewTime(first)
	s.Decided.StartTime = &started
	s.Decided.StartSkew = skew.Round(time.Microsecond).String()
	msg := fmt.Sprintf(v1alpha1.MessageStarted, len(s.Runners), skew.Round(time.Microsecond))
	s.RecordCondition(v1alpha1.ConditionStarted, metav1.ConditionTrue, v1alpha1.ReasonStarted, msg)
	s.Enter(v1alpha1.PhaseRunning, v1alpha1.ReasonRunning, msg)
	return ctrl.Result{}, nil
}

type ack struct {
	at  time.Time
	err error
}

// resumeAll un-pauses every runner in parallel, at at when it is set (holdStart: at most
// startSlack ahead); a runner that already ended (started by an earlier reconcile whose status
// write was lost) is left alone.
func (r *Stage) resumeAll(ctx context.Context, s *decide.Scope, at time.Time) []ack {
	acks := make([]ack, len(s.Runners))
	pods := make([]*corev1.Pod, len(s.Runners))
	for i, rs := range s.Runners {
		if !decide.Terminated(rs.Pod) {
			pods[i] = rs.Pod
		}
	}
	// Every runner's connection is opened first; then all Resume calls leave together. The
	// connections are kept for this only: closed once every runner answered.
	ctx, release := r.RunnerAPI.KeepConnections(ctx)
	defer release()
	var warmed sync.WaitGroup
	start := make(chan struct{})
	for _, pod := range pods {
		if pod != nil {
			warmed.Add(1)
		}
	}
	go func() {
		warmed.Wait()
		if wait := time.Until(at); !at.IsZero() && wait > 0 {
			time.Sleep(min(wait, startSlack)) // the planned start of every zone, by this cluster's clock
		}
		close(start)
	}()
	runio.OnRunners(pods, func(i int, pod *corev1.Pod) {
		_ = r.RunnerAPI.Warm(ctx, pod) // a runner that does not answer fails its Resume below
		warmed.Done()
		<-start
		err := r.RunnerAPI.Resume(ctx, pod)
		acks[i] = ack{at: time.Now(), err: err}
	})
	return acks
}

// zonePoll is how often a held start looks again beside the watches that wake it (a zone
// run's status copied home, a ZoneStart arriving).
const zonePoll = 5 * time.Second

// startSlack is how close to the planned start a held fleet stops requeueing and waits in
// the start itself, its runners' connections open (resumeAll): a requeue and the load of the
// world after it take tens of milliseconds, which would be start skew between zones.
const startSlack = 250 * time.Millisecond

// holdStart holds an armed fleet (its runners ready and paused, setup() done) until its
// zones start it, and says whether it may start now and at what time (zero: at once):
//   - a zoned run (spec.zones) waits until every other zone is armed, then makes one
//     ZoneStart per zone at a planned time, and starts its own runners at that time;
//   - a zone run (spec.zoneOf) reports itself armed and waits for its ZoneStart's time.
func (r *Stage) holdStart(ctx context.Context, s *decide.Scope) (ctrl.Result, time.Time, bool, error) {
	switch {
	case len(s.Run.Spec.Zones) > 0:
		return r.holdForZones(ctx, s)
	case s.Run.Spec.ZoneOf != nil:
		return r.holdForZoneStart(ctx, s)
	}
	return ctrl.Result{}, time.Time{}, true, nil
}

// startsAt holds the start until at: a requeue while it is further than startSlack, then the
// start itself waits out the rest.
func startsAt(s *decide.Scope, at time.Time, msg string) (ctrl.Result, time.Time, bool, error) {
	if wait := at.Sub(s.Now); wait > startSlack {
		s.Enter(v1alpha1.PhaseStarting, v1alpha1.ReasonWaitingForZoneStart, msg+" "+at.UTC().Format(time.RFC3339Nano))
		return rc.After(wait - startSlack), time.Time{}, false, nil
	}
	return ctrl.Result{}, at, true, nil
}

func (r *Stage) holdForZones(ctx context.Context, s *decide.Scope) (ctrl.Result, time.Time, bool, error) {
	rows := s.Decided.Zones
	var unarmed []string
	for i := range rows {
		switch {
		case rows[i].Cluster == "":
			rows[i].State = v1alpha1.ZoneArmed
		case rows[i].State == v1alpha1.ZoneRunning || rows[i].State == v1alpha1.ZoneEnded:
			// Started by its ZoneStart already: this cluster's start came late (a retried
			// resume, a lost status write); the skew will show it.
		case rows[i].State != v1alpha1.ZoneArmed:
			unarmed = append(unarmed, rows[i].Name)
			if m := rows[i].Message; m != "" {
				unarmed[len(unarmed)-1] += " (" + m + ")"
			}
		}
	}
	if len(unarmed) > 0 {
		msg := fmt.Sprintf("the runners here are armed; waiting for zone %s to arm (dispatched, runners ready and paused)", strings.Join(unarmed, ", "))
		first, _, _ := strings.Cut(unarmed[0], " ")
		return s.WaitOrFail(s.RunnersReadyDeadline(), zonePoll, v1alpha1.PhaseStarting, v1alpha1.ReasonWaitingForZones, v1alpha1.ReasonZoneNotArmed,
			msg, "; no zone was started: see the zone's run (kubectl get testrun "+naming.ZoneRun(s.Run.Name, first)+") and its cluster's Kueue"), time.Time{}, false, nil
	}
	at, err := r.ensureZoneStarts(ctx, s)
	if err != nil {
		return ctrl.Result{}, time.Time{}, false, err
	}
	return startsAt(s, at, "every zone is armed; all start at")
}

// ensureZoneStarts makes each other zone's ZoneStart and the Workload that dispatches it, all
// at one planned time: that of a ZoneStart made by an earlier reconcile, else Lead from now.
func (r *Stage) ensureZoneStarts(ctx context.Context, s *decide.Scope) (time.Time, error) {
	run := s.Run
	others := zones.Others(&run.Spec)
	var at time.Time
	for _, z := range others {
		// Live: a ZoneStart made a moment ago must set the time, not a second one.
		zs := &v1alpha1.ZoneStart{}
		err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: naming.ZoneStart(naming.ZoneRun(run.Name, z.Name))}, zs)
		if err == nil && zones.Of(zs, run) {
			at = zs.Spec.At.Time
			break
		}
		if client.IgnoreNotFound(err) != nil {
			return at, err
		}
	}
	if at.IsZero() {
		at = s.Now.Add(zones.Lead)
	}
	for _, z := range others {
		zoneRun := &v1alpha1.TestRun{ObjectMeta: metav1.ObjectMeta{Name: naming.ZoneRun(run.Name, z.Name), Namespace: run.Namespace}}
		zs := zones.Start(run, zoneRun, at)
		if err := r.Create(ctx, zs); apierrors.IsAlreadyExists(err) {
			// Made by an earlier reconcile, whose Workload create may have failed: made again
			// below. One that is not this run's is left alone, and its zone never starts.
			if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(zs), zs); err != nil || !zones.Of(zs, run) {
				continue
			}
		} else if err != nil {
			return at, err
		}
		wl := queue.StartWorkload(zs, zones.LocalQueue(z.Cluster))
		if err := controllerutil.SetControllerReference(zs, wl, r.Scheme); err != nil {
			return at, err
		}
		if err := r.Create(ctx, wl); err != nil && !apierrors.IsAlreadyExists(err) {
			return at, err
		}
	}
	return at, nil
}

// holdForZoneStart reports the zone run armed, and holds it until its ZoneStart's time.
func (r *Stage) holdForZoneStart(ctx context.Context, s *decide.Scope) (ctrl.Result, time.Time, bool, error) {
	run := s.Run
	report := &v1alpha1.ZoneRunStatus{}
	if run.Status.ZoneRun != nil {
		report = run.Status.ZoneRun.DeepCopy()
	}
	if report.ArmedAt == nil {
		armed := metav1.NewMicroTime(s.Now)
		report.ArmedAt = &armed
	}
	s.Decided.ZoneRun = report
	zs := &v1alpha1.ZoneStart{}
	err := r.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: naming.ZoneStart(run.Name)}, zs)
	if client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, time.Time{}, false, err
	}
	if err != nil || zs.Spec.Run != run.Name || zs.Labels[naming.LabelZoneOfUID] != run.Labels[naming.LabelZoneOfUID] {
		// The home run starts every zone once all are armed; if it never does (it failed, or
		// this cluster was cut off), this zone ends before any load.
		deadline := report.ArmedAt.Add(s.Timeouts.RunnersReady)
		msg := fmt.Sprintf("armed: the runners are ready and paused; waiting for the start of home run %s (a ZoneStart %s)", run.Spec.ZoneOf.Run, naming.ZoneStart(run.Name))
		return s.WaitOrFail(deadline, zonePoll, v1alpha1.PhaseStarting, v1alpha1.ReasonWaitingForZoneStart, v1alpha1.ReasonZoneNotArmed,
			msg, "; the home run never started this zone: see it in its cluster"), time.Time{}, false, nil
	}
	return startsAt(s, zs.Spec.At.Time, "armed; every zone starts at")
}

// recordZoneStart records when this cluster's runners started, first the first's acknowledgement,
// in the zone's row (zoned run) or in the report home (zone run).
func recordZoneStart(s *decide.Scope, first time.Time) {
	at := metav1.NewMicroTime(first)
	if s.Decided.ZoneRun != nil {
		s.Decided.ZoneRun.StartedAt = &at
	}
	for i := range s.Decided.Zones {
		if s.Decided.Zones[i].Cluster == "" {
			s.Decided.Zones[i].State, s.Decided.Zones[i].StartedAt = v1alpha1.ZoneRunning, first
		}
	}
}
