package testrun

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	rc "fleetbench.dev/fleetbench/internal/controller/ctrlkit"
	"fleetbench.dev/fleetbench/pkg/judge"
	"fleetbench.dev/fleetbench/pkg/measure"
	"fleetbench.dev/fleetbench/pkg/runners"
)

// reconcileRun waits for every runner to end, sampling the target and judging peak steps
// meanwhile. A runner that fails stops the others (the load it carried is gone, and the rest
// would measure something nobody asked for); so do the run deadline, a peak's breaking point,
// an abortOnFail threshold failing on the merged data and the script's test.abort(). A runner whose own share failed a
// threshold (exit 99) has not failed: thresholds are judged on the merged data.
func (r *Reconciler) reconcileRun(ctx context.Context, s *scope) (ctrl.Result, error) {
	run := s.run
	active := s.summary.active()
	if active == 0 {
		return ctrl.Result{}, nil
	}
	deadline := s.runDeadline()
	holdFrom := finalsFrom(s)
	if !s.now.Before(holdFrom) {
		for _, v := range s.summary.views {
			if v.class == runnerReady {
				r.finals.hold(run, v.pod, deadline.Add(s.timeouts.Collection))
			}
		}
	}
	// Every wait here, teardown's included, ends at the run deadline: checked first, so a runner 0
	// that never reports its end is stopped there like any runner, and the run ends RunTimeout.
	if !rc.Expired(s.now, deadline) {
		if result, waiting := r.teardownOnce(ctx, s); waiting {
			return rc.After(result.RequeueAfter, deadline.Sub(s.now)), nil
		}
	}
	f := s.summary.runFailure()
	peakStop, nextStep := r.evaluatePeak(ctx, s)
	abortStop, nextAbort := r.evaluateAbort(ctx, s)
	scriptStop := r.scriptAbortStop(ctx, s)
	if f != nil || peakStop != "" || abortStop != "" || scriptStop != "" || rc.Expired(s.now, deadline) {
		why := fmt.Sprintf("the load ran past its deadline %s", deadline.UTC().Format(time.RFC3339))
		switch {
		case f != nil:
			why = f.message
		case peakStop != "":
			why = peakStop
		case abortStop != "":
			why = abortStop
		case scriptStop != "":
			why = scriptStop
		}
		s.enter(v1alpha1.PhaseRunning, v1alpha1.ReasonStoppingRunners, why+v1alpha1.MessageStopping)
		// Stopped runners flush their results and exit; a minute past the deadline they are deleted.
		s.stop = &stopDecision{why: why, deleteJobs: rc.Expired(s.now, deadline.Add(time.Minute))}
		return rc.After(10 * time.Second), nil
	}
	s.enter(v1alpha1.PhaseRunning, v1alpha1.ReasonRunning, fmt.Sprintf(v1alpha1.MessageRunning, active, len(s.runners)))
	r.measureDuring(ctx, s)
	nextProgress := r.refreshProgress(ctx, s)
	return rc.After(deadline.Sub(s.now), r.nextSample(s), nextStep, nextAbort, nextProgress, holdFrom.Sub(s.now), s.replaceRecheck), nil
}

// finalsLead is how long before the load's expected end the final envelopes are asked for.
const finalsLead = 30 * time.Second

// finalsFrom is when to start holding requests for the runners' final envelopes: shortly before
// the load's expected end, not for the whole of a two-hour run (a request held that long costs
// memory per runner, about 90 KiB, and idle-connection timeouts on the way may cut it); from the
// start when only the script knows the length. A runner that ends early (stopped, failed) is
// seen through pod status as before.
func finalsFrom(s *scope) time.Time {
	if s.startTime() == nil {
		return time.Time{}
	}
	start := s.startTime().Time
	if expected := runners.ExpectedDuration(&s.run.Spec); expected > finalsLead {
		return start.Add(expected - finalsLead)
	}
	return start
}

// reconcileCollect reads every runner's result envelope from its log, merges them, and lets
// outcome() decide how the run ends.
func (r *Reconciler) reconcileCollect(ctx context.Context, s *scope) (ctrl.Result, error) {
	run := s.run
	if s.phase() != v1alpha1.PhaseCollecting {
		s.enter(v1alpha1.PhaseCollecting, v1alpha1.ReasonCollecting, v1alpha1.MessageCollecting)
	}
	ended := lastEnd(s)
	envs, problems, err := r.readEnvelopes(ctx, s)
	if err != nil {
		return rc.After(logsLimit), nil // errPending: read off the worker, its end wakes the run
	}
	if s.failure != nil {
		return ctrl.Result{}, nil // an envelope was refused: its runner's results cannot be had
	}
	if len(problems) > 0 && len(envs) < len(s.runners) && s.summary.runFailure() == nil && !rc.Expired(s.now, ended.Add(s.timeouts.Collection)) {
		// Logs can lag the container's exit; failed runners may never print an envelope.
		s.recordCondition(v1alpha1.ConditionResultsCollected, metav1.ConditionFalse, v1alpha1.ReasonReading, strings.Join(problems, "; "))
		return rc.After(500 * time.Millisecond), nil
	}
	if err := r.measureAfter(ctx, s); errors.Is(err, errPending) {
		return rc.After(logsLimit), nil // read off the worker, its end wakes the run
	} else if err != nil {
		return ctrl.Result{}, err
	}

	var merged *judge.Outcome
	var summary measure.Summary
	if len(envs) > 0 {
		var err error
		if summary, err = measure.Merge(envs...); err != nil {
			problems = append(problems, "merging: "+err.Error())
		} else {
			o := judge.BuildWith(&summary, run.Spec.Thresholds, len(s.runners), judge.Options{NoData: run.Spec.ThresholdsOnNoData})
			o.RunnerMemory = judge.RunnersMemory(&summary, &run.Spec)
			adviseParallelism(s, &summary, &o)
			merged = &o
			r.warn(run, eventThresholdNoData, "Collect", o.NoData)
		}
	}
	collectionDuration.Observe(s.now.Sub(ended).Seconds())
	if len(problems) == 0 {
		s.recordCondition(v1alpha1.ConditionResultsCollected, metav1.ConditionTrue, v1alpha1.ReasonCollected, fmt.Sprintf("merged the results of %d runners", len(envs)))
	} else {
		s.recordCondition(v1alpha1.ConditionResultsCollected, metav1.ConditionFalse, v1alpha1.ReasonPartial, strings.Join(problems, "; "))
		logf.FromContext(ctx).Info("results are partial", "problems", problems)
	}

	e := outcome(collected{
		runners: s.summary, report: merged, problems: problems, runDeadline: s.runDeadline(), now: s.now,
		targetProblems: judge.TargetProblems(s.target(), &run.Spec), peak: s.peak(),
		abort: s.abortOnFail(), gaps: s.gaps(), maxGaps: maxGaps(&run.Spec), runnerLeak: runnerLeak(merged),
	}.withTargetLost(s))
	if merged != nil {
		// The warnings the pre-flight knew, and the cut one statusbound left, stay ahead of the merge's own.
		if before := s.results(); before != nil {
			merged.Results.Warnings = mergeWarnings(before.Warnings, merged.Results.Warnings)
		}
		merged.Results.Partial = merged.Results.Partial || e.partial
		r.keepCapacity(ctx, s, &summary, merged)
		if gaps := s.gaps(); len(gaps) > 0 {
			merged.Results.Warnings = mergeWarnings(merged.Results.Warnings, []string{gapsSummary(gaps)})
		}
		if w := runnerLeak(merged); w != "" {
			merged.Results.Warnings = mergeWarnings(merged.Results.Warnings, []string{w})
			r.warn(run, eventRunnerMemoryLeak, "Collect", []string{w})
		}
		s.d.results = merged.Results
		s.d.runnerMemory = merged.RunnerMemory
		s.d.generatorBound = &generatorBound{merged.GeneratorBound, merged.GeneratorBoundReason}
		tl, err := r.storeResult(ctx, run, &summary, merged)
		if err != nil {
			return ctrl.Result{}, err
		}
		if e, err = r.judgeBaseline(ctx, s, &summary, merged.Results, tl, e); err != nil {
			return ctrl.Result{}, err
		}
		// The last progress covers the whole load, so the PROGRESS column ends where it did.
		s.d.progress = progressOf(s, &summary, summary.End)
	}
	if e.thresholds != nil {
		s.recordCondition(e.thresholds.Type, e.thresholds.Status, e.thresholds.Reason, e.thresholds.Message)
	}
	if e.phase == v1alpha1.PhaseFailed {
		s.fail(e.reason, e.message)
		return ctrl.Result{}, nil
	}
	s.d.capacity = judge.Capacity(merged.Results, &run.Spec, s.capacity().DeepCopy())
	s.d.ending = &e
	return afterEnd(), nil
}

// lastEnd is when the last runner's container ended, from pod status, or its load, from the
// final envelope it handed over; creation time at worst.
func lastEnd(s *scope) time.Time {
	var ends []time.Time
	for _, rs := range s.runners {
		if rs.final != nil {
			ends = append(ends, time.Unix(0, rs.final.EndUnixNano))
		}
		if rs.pod == nil {
			continue
		}
		for _, cs := range rs.pod.Status.ContainerStatuses {
			if t := cs.State.Terminated; t != nil && !t.FinishedAt.IsZero() {
				ends = append(ends, t.FinishedAt.Time)
			}
		}
	}
	if len(ends) == 0 {
		if s.startTime() != nil {
			return s.now
		}
		return s.run.CreationTimestamp.Time
	}
	sort.Slice(ends, func(i, j int) bool { return ends[i].Before(ends[j]) })
	return ends[len(ends)-1]
}
