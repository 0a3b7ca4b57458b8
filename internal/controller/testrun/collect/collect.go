package collect

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	rc "fleetbench.dev/fleetbench/internal/controller/ctrlkit"
	"fleetbench.dev/fleetbench/internal/controller/testrun/admit"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	"fleetbench.dev/fleetbench/internal/controller/testrun/drive"
	"fleetbench.dev/fleetbench/internal/controller/testrun/runenv"
	"fleetbench.dev/fleetbench/internal/controller/testrun/runio"
	"fleetbench.dev/fleetbench/pkg/judge"
	"fleetbench.dev/fleetbench/pkg/judge/compare"
	"fleetbench.dev/fleetbench/pkg/measure"
	"fleetbench.dev/fleetbench/pkg/seal"
)

// ReconcileCollect reads every runner's result envelope from its log, merges them, and lets
// outcome() decide how the run ends.
func (r *Stage) ReconcileCollect(ctx context.Context, s *decide.Scope) (ctrl.Result, error) {
	run := s.Run
	if s.Phase() != v1alpha1.PhaseCollecting {
		s.Enter(v1alpha1.PhaseCollecting, v1alpha1.ReasonCollecting, v1alpha1.MessageCollecting)
	}
	ended := decide.LastEnd(s)
	envs, problems, err := r.ReadEnvelopes(ctx, s)
	if err != nil {
		return rc.After(runio.LogsLimit), nil // errPending: read off the worker, its end wakes the run
	}
	if s.Failure != nil {
		return ctrl.Result{}, nil // an envelope was refused: its runner's results cannot be had
	}
	if len(problems) > 0 && len(envs) < len(s.Runners) && s.Summary.RunFailure() == nil && !rc.Expired(s.Now, ended.Add(s.Timeouts.Collection)) {
		// Logs can lag the container's exit; failed runners may never print an envelope.
		s.RecordCondition(v1alpha1.ConditionResultsCollected, metav1.ConditionFalse, v1alpha1.ReasonReading, strings.Join(problems, "; "))
		return rc.After(500 * time.Millisecond), nil
	}
	var zoneIn []zoneToRead
	if len(run.Spec.Zones) > 0 {
		toRead, zoneProblems, wait := gatherZones(s)
		if wait {
			return rc.After(zonePoll), nil
		}
		zoneIn, problems = toRead, append(problems, zoneProblems...)
	}
	if err := r.MeasureAfter(ctx, s); errors.Is(err, runio.ErrPending) {
		return rc.After(runio.LogsLimit), nil // read off the worker, its end wakes the run
	} else if err != nil {
		return ctrl.Result{}, err
	}

	var merged *judge.Outcome
	var summary measure.Summary
	var trend keptTrend
	if run.Spec.ZoneOf != nil && len(envs) == 0 {
		s.Decided.ZoneRun = zoneReport(run, nil, problems)
	}
	mergedRunners := 0
	if len(envs) > 0 || len(zoneIn) > 0 {
		judged, done := r.mergeAndJudge(s, envs, zoneIn, problems)
		if !done {
			return rc.After(runio.MergeLimit), nil // off the worker: its end wakes the run
		}
		problems = append(problems, judged.Val.zones.problems...)
		fillZoneRows(s.Decided.Zones, judged.Val.zones.numbers, judged.Val.zones.lost)
		if run.Spec.ZoneOf != nil {
			s.Decided.ZoneRun = zoneReport(run, judged.Val.report, judged.Val.reportProblems)
		}
		mergedRunners = judged.Val.runners
		if err := judged.Err; err != nil {
			problems = append(problems, "merging: "+err.Error())
		} else {
			summary = judged.Val.summary
			o := judged.Val.outcome
			r.AdviseParallelism(s, &summary, &o)
			merged = &o
			trend = judged.Val.trend
			r.Warn(run, runenv.EventThresholdNoData, "Collect", o.NoData)
		}
	}
	runenv.CollectionDuration.Observe(s.Now.Sub(ended).Seconds())
	if len(problems) == 0 {
		s.RecordCondition(v1alpha1.ConditionResultsCollected, metav1.ConditionTrue, v1alpha1.ReasonCollected, fmt.Sprintf("merged the results of %d runners", mergedRunners))
	} else {
		s.RecordCondition(v1alpha1.ConditionResultsCollected, metav1.ConditionFalse, v1alpha1.ReasonPartial, strings.Join(problems, "; "))
		logf.FromContext(ctx).Info("results are partial", "problems", problems)
	}

	facts := decide.Collected{
		Runners: s.Summary, Report: merged, Problems: problems, RunDeadline: s.RunDeadline(), Now: s.Now,
		TargetProblems: judge.TargetProblems(s.Target(), &run.Spec), Uncounted: judge.UncountedPatterns(s.Target(), &run.Spec), Peak: s.Peak(),
		Abort: s.AbortOnFail(), Gaps: s.Gaps(), MaxGaps: decide.MaxGaps(&run.Spec), RunnerLeak: decide.RunnerLeak(merged),
		OnUndecided: decide.OnUndecided(&run.Spec),
	}.WithTargetLost(s)
	var record compare.Record
	if merged != nil {
		// The warnings the pre-flight knew, and the cut one statusbound left, stay ahead of the merge's own.
		if before := s.Results(); before != nil {
			merged.Results.Warnings = decide.MergeWarnings(before.Warnings, merged.Results.Warnings)
		}
		merged.Results.Partial = merged.Results.Partial || facts.Partial()
		r.KeepCapacity(ctx, s, &summary, merged)
		if gaps := s.Gaps(); len(gaps) > 0 {
			merged.Results.Warnings = decide.MergeWarnings(merged.Results.Warnings, []string{decide.GapsSummary(gaps)})
		}
		if w := decide.RunnerLeak(merged); w != "" {
			merged.Results.Warnings = decide.MergeWarnings(merged.Results.Warnings, []string{w})
			r.Warn(run, runenv.EventRunnerMemoryLeak, "Collect", []string{w})
		}
		s.Decided.Results = merged.Results
		s.Decided.RunnerMemory = merged.RunnerMemory
		s.Decided.GeneratorBound = &decide.GeneratorBound{Bound: merged.GeneratorBound, Reason: merged.GeneratorBoundReason}
		tl, err := r.storeResult(ctx, run, &summary, merged)
		if seal.Refused(err) {
			s.Fail(v1alpha1.ReasonRecordTampered, "the run's results: "+err.Error())
			return ctrl.Result{}, nil
		}
		if err != nil {
			return ctrl.Result{}, err
		}
		record = compare.BuildRecord(compare.RunRef{Name: run.Name, UID: string(run.UID), CompletionTime: s.Now, Labels: admit.KeptLabels(run)},
			merged.Results, &summary, tl, compare.SubMetricsOf(&run.Spec))
		shape := admit.ShapeOf(run, run.Status.ScriptDigest)
		record.Shape = &shape
		if facts.Comparison, facts.Reference, err = r.compareWithBaseline(ctx, s, record); seal.Refused(err) {
			s.Fail(v1alpha1.ReasonRecordTampered, "the baseline's kept record: "+err.Error())
			return ctrl.Result{}, nil
		} else if err != nil {
			return ctrl.Result{}, err
		}
		facts.Trend, facts.TrendOnShift = r.judgeTrend(s, trend, record)
	}
	// Every fact is in: the verdict is decided once, here.
	e := decide.Outcome(facts)
	if merged != nil {
		if err := r.keepRecord(ctx, s, record, e); err != nil {
			return ctrl.Result{}, err
		}
		// The last progress covers the whole load, so the PROGRESS column ends where it did.
		s.Decided.Progress = drive.ProgressOf(s, &summary, summary.End)
	}
	if e.Thresholds != nil {
		s.RecordCondition(e.Thresholds.Type, e.Thresholds.Status, e.Thresholds.Reason, e.Thresholds.Message)
	}
	if e.Phase == v1alpha1.PhaseFailed {
		s.Fail(e.Reason, e.Message)
		return ctrl.Result{}, nil
	}
	s.Decided.Capacity = judge.Capacity(merged.Results, &run.Spec, s.Capacity().DeepCopy())
	s.Decided.Ending = &e
	return decide.AfterEnd(), nil
}

// judged is a collection's merge and what the judge made of it, and the kept runs of the
// run's trend (spec.trend).
type judged struct {
	summary measure.Summary
	outcome judge.Outcome
	trend   keptTrend
	// runners is how many runners' envelopes were merged (other zones' included).
	runners int
	// A zoned run's other zones: their own numbers, and what they lack.
	zones zoneResults
	// A zone run's report home: its envelopes encoded, and what they lack.
	report         [][]byte
	reportProblems []string
}

// mergeAndJudge merges the envelopes and judges the thresholds off the worker, within the
// namespace's share of runio.CPU: both take as long as the tenant's envelopes and thresholds
// make them. done is false while in flight.
//
// A zoned run decodes its other zones' envelopes here too, and merges them with its own
// runners' as one fleet; a zone run encodes its runners' envelopes to report them home.
func (r *Stage) mergeAndJudge(s *decide.Scope, envs []measure.Envelope, zoneIn []zoneToRead, problems []string) (runio.Typed[judged], bool) {
	spec := s.Run.Spec.DeepCopy()
	runners := spec.FleetRunners(len(s.Runners))
	if spec.ZoneOf != nil {
		runners = len(s.Runners) // the zone judges only its own part; the home run judges the fleet
	}
	ns, uid := s.Run.Namespace, string(s.Run.UID)
	home := ""
	if z := spec.HomeZone(); z != nil {
		home = z.Name
	}
	homeRun := &v1alpha1.TestRun{ObjectMeta: *s.Run.ObjectMeta.DeepCopy()}
	return runio.Poll(r.Calls, s.Run, runio.CallMerge, runio.MergeLimit, func(ctx context.Context) (judged, error) {
		// Reading the trend's kept runs and the zones' reports waits on the API server, not the
		// CPU: before the slot.
		trend := r.readTrend(ctx, ns, uid, spec.Trend)
		reports, release := r.readZones(ctx, homeRun, zoneIn)
		defer release()
		return runio.OnCPU(ctx, func() (judged, error) {
			var j judged
			all := envs
			if home != "" {
				j.zones = decodeZones(reports, runners, ns)
				j.zones.numbers[home] = numbersOf(envs)
				all = append(slices.Clone(envs), j.zones.envelopes...)
				j.zones.envelopes = nil // merged below; not kept with the result
			}
			if spec.ZoneOf != nil {
				j.report, j.reportProblems = encodeZoneReport(envs, problems)
			}
			j.runners = len(all)
			summary, err := measure.Merge(all...)
			if err != nil {
				return j, err
			}
			o := judge.BuildWith(&summary, spec.Thresholds, runners, judge.Options{NoData: spec.ThresholdsOnNoData})
			o.RunnerMemory = judge.RunnersMemory(&summary, spec)
			j.summary, j.outcome, j.trend = summary, o, trend
			return j, nil
		})
	})
}

// zoneReport is status.zoneRun of a zone run whose results are in: what it reported before
// (armed, started) and its envelopes.
func zoneReport(run *v1alpha1.TestRun, envelopes [][]byte, problems []string) *v1alpha1.ZoneRunStatus {
	out := &v1alpha1.ZoneRunStatus{}
	if run.Status.ZoneRun != nil {
		out = run.Status.ZoneRun.DeepCopy()
	}
	out.Envelopes, out.Problems = envelopes, problems
	return out
}
