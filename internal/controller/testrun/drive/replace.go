package drive

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	rc "fleetbench.dev/fleetbench/internal/controller/ctrlkit"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	"fleetbench.dev/fleetbench/internal/controller/testrun/runio"
	"fleetbench.dev/fleetbench/pkg/measure"
	"fleetbench.dev/fleetbench/pkg/naming"
	"fleetbench.dev/fleetbench/pkg/runners"
)

// A runner lost after the start of a run under spec.runnerLoss.policy Replace is replaced: a
// new Job, <run>-runner-<i>-r<k>, runs runner i's execution segment and device ids for what
// is left of the load (runners.RemainingConfig), with setup()'s data read from a live runner.
// The order keeps one live runner per segment: the lost runner's Job is deleted before the
// replacement's is created, the replacement starts paused, and it is resumed only once the
// lost pod has ended, is gone, or is past its deletion's grace on a node that no longer
// answers (after a Stop sent to it, for a runner that lost only its kubelet). What the lost
// runner measured until the operator's last live read is kept in the replacement's ConfigMap
// and merged with the rest; the time between is the gap status.gaps records.

// ConfigMap keys of a replacement's ConfigMap: its k6 config is runners.ConfigKey.
const LostEnvelopeKey = "lost-envelope"

// RoleReplacement labels a replacement's ConfigMap.
const roleReplacement = "replacement"

// minRemaining: a loss with less of the load left is recorded as a gap, not replaced.
const minRemaining = 5 * time.Second

// lostPodGrace is how long past its deletion time a lost pod that has not ended is taken for
// dead: its node no longer runs it, or no longer reports that it stopped.
const lostPodGrace = 5 * time.Second

func findGap(gaps []v1alpha1.RunnerGap, i, k int) int {
	return slices.IndexFunc(gaps, func(g v1alpha1.RunnerGap) bool { return int(g.Runner) == i && int(g.Replacement) == k })
}

// ReconcileReplace replaces the runners lost since the start, resumes the replacements that
// are Ready, and records the gaps. It never waits: reconcileRun goes on with the fleet
// (s.replaceRecheck says when to look again).
func (r *Stage) ReconcileReplace(ctx context.Context, s *decide.Scope) (ctrl.Result, error) {
	run := s.Run
	if !s.Started() || !s.Replaces() || run.Status.Reason == v1alpha1.ReasonStoppingRunners {
		return ctrl.Result{}, nil
	}
	r.Seen.Open(run.UID, run.Namespace, len(s.Runners))
	gaps := slices.Clone(s.Gaps())
	changed := false
	// Gaps decided here are kept in status even when a later step fails: the next reconcile
	// goes on from them (and from the records in the replacements' ConfigMaps).
	defer func() {
		if changed {
			s.Decided.Gaps = &gaps
		}
	}()
	planned := false
	for i := range s.Runners {
		// A loss recorded without a replacement (too late in the load) stays accounted for.
		if g := findGap(gaps, i, s.Runners[i].Replacement+1); g >= 0 && gaps[g].Job == "" {
			s.Runners[i].AfterLoss = true
		}
		// A replacement whose gap a lost status write did not keep: recorded from its record.
		if k := s.Runners[i].Replacement; k > 0 && findGap(gaps, i, k) < 0 {
			g, found, _, err := r.recordedGap(ctx, run, s.Runners[i].Job.Name, i, k)
			if err != nil {
				return ctrl.Result{}, err
			}
			if !found {
				g = v1alpha1.RunnerGap{Runner: int32(i), Replacement: int32(k), Cause: "Unknown", LostAt: s.Runners[i].Job.CreationTimestamp}
			}
			g.Job = s.Runners[i].Job.Name
			gaps = append(gaps, g)
			changed = true
		}
		// A lost runner whose Job was deleted and whose replacement's create failed: made now.
		if s.Runners[i].Job == nil {
			if g := latestGap(gaps, i); g >= 0 && gaps[g].Job != "" && gaps[g].ReplacedAt == nil {
				k := int(gaps[g].Replacement)
				s.Runners[i] = decide.RunnerState{Index: i, Replacement: k, Plan: &decide.ReplacementPlan{K: k, ConfigMap: gaps[g].Job}}
				planned = true
			}
		}
	}
	s.Summary = decide.Classify(s.Runners)

	for i, v := range s.Summary.Views {
		if v.Class != decide.RunnerLost && v.Class != decide.RunnerOOMKilled {
			continue
		}
		g, err := r.replaceLost(ctx, s, v, replacedSoFar(gaps))
		if err != nil || s.Failure != nil {
			return ctrl.Result{}, err
		}
		planned = planned || s.Runners[i].Plan != nil
		if findGap(gaps, i, int(g.Replacement)) >= 0 {
			continue // in status already: a cache that still shows the lost Job
		}
		gaps = append(gaps, g)
		changed = true
		r.Recorder.Eventf(run, nil, corev1.EventTypeWarning, v1alpha1.ReasonRunnerReplaced, "Replace", "%s", decide.GapText(g, "runner %d lost (%s); "))
	}
	if planned {
		if err := r.CreateRunnerJobs(ctx, s); err != nil || s.Failure != nil {
			return ctrl.Result{}, err
		}
	}
	if r.resumeReplacements(ctx, s, gaps) {
		changed = true
	}
	s.RecordGapless(gaps)
	return ctrl.Result{}, nil
}

// latestGap is the gap of runner i's latest replacement; -1 when it has none.
func latestGap(gaps []v1alpha1.RunnerGap, i int) int {
	at := -1
	for j, g := range gaps {
		if int(g.Runner) == i && (at < 0 || g.Replacement > gaps[at].Replacement) {
			at = j
		}
	}
	return at
}

// replaceLost decides the gap of a lost runner and acts: the gap and its kept results (and,
// when it is replaced, the remaining config) recorded in the replacement's ConfigMap first, then
// its Job deleted and the replacement planned. A retry after any step failed goes on from the
// record (replace_record.go). Past maxReplacements, or for a load that cannot be resumed, it
// records the run's failure instead.
func (r *Stage) replaceLost(ctx context.Context, s *decide.Scope, v decide.RunnerView, replaced int) (v1alpha1.RunnerGap, error) {
	run, i := s.Run, v.Index
	k := v.Replacement + 1
	name := naming.ReplacementJob(run.Name, i, k)
	g, found, foreign, err := r.recordedGap(ctx, run, name, i, k)
	switch {
	case err != nil:
		return g, err
	case foreign:
		s.Fail(v1alpha1.ReasonRunnerRejected, fmt.Sprintf("a ConfigMap named %s exists in namespace %s that this TestRun does not own; delete it", name, run.Namespace))
		return v1alpha1.RunnerGap{}, nil
	case !found:
		if g, err = r.recordLoss(ctx, s, v, replaced, name); err != nil || s.Failure != nil {
			return g, err
		}
	}
	// The record holds the lost runner's results now (or there were none to keep).
	r.Seen.Drop(run.UID, i, v.Replacement)
	if g.Job == "" {
		// Too late to be worth a runner: the rest of the segment's load is part of the gap.
		s.Runners[i].AfterLoss = true
		s.Summary = decide.Classify(s.Runners)
		return g, nil
	}
	// The lost runner's Job goes first: never two runners of one segment.
	if v.Job != nil {
		if err := rc.DeleteExact(ctx, r.Client, v.Job); err != nil {
			return g, err
		}
	}
	s.Runners[i] = decide.RunnerState{Index: i, Replacement: k, Plan: &decide.ReplacementPlan{K: k, ConfigMap: name}}
	s.Summary = decide.Classify(s.Runners)
	return g, nil
}

// replacedSoFar counts the gaps a replacement took over: a loss too late to replace made none,
// and spends nothing of maxReplacements.
func replacedSoFar(gaps []v1alpha1.RunnerGap) int {
	n := 0
	for _, g := range gaps {
		if g.Job != "" {
			n++
		}
	}
	return n
}

// lossCause names what happened to a lost runner, from its pod.
func lossCause(v decide.RunnerView) string {
	pod := v.Pod
	switch {
	case v.Class == decide.RunnerOOMKilled:
		return "OOMKilled"
	case pod == nil:
		return "Deleted"
	case pod.Status.Reason == "Evicted":
		return "Evicted"
	}
	if c := decide.PodCondition(pod, corev1.DisruptionTarget); c != nil && c.Status == corev1.ConditionTrue {
		switch c.Reason {
		case "DeletionByTaintManager":
			return "NodeLost"
		case "EvictionByEvictionAPI", "TerminationByKubelet", "PreemptionByScheduler":
			return "Evicted"
		}
	}
	if pod.DeletionTimestamp != nil {
		return "Deleted"
	}
	if decide.Terminated(pod) {
		return "Killed"
	}
	return "Failed"
}

// callReplace resumes one replacement; a run has one in flight per runner.
func callReplace(i int) runio.CallKind { return runio.CallKind("replace-" + strconv.Itoa(i)) }

// resumeReplacements starts each Ready replacement whose lost runner is gone, off the worker:
// a Stop to the lost pod if it may still run, setup()'s data from a live runner, then Resume.
// It records replacedAt and the gap's estimate once that is done, and says whether it did.
func (r *Stage) resumeReplacements(ctx context.Context, s *decide.Scope, gaps []v1alpha1.RunnerGap) bool {
	changed := false
	for i, v := range s.Summary.Views {
		g := findGap(gaps, i, v.Replacement)
		if v.Replacement == 0 || g < 0 || gaps[g].ReplacedAt != nil {
			continue
		}
		if res, ok := r.Calls.Take(s.Run.UID, callReplace(i)); ok {
			if res.Err != nil {
				logf.FromContext(ctx).Info("starting a replacement runner failed; trying again", "runner", i, "error", res.Err.Error())
				s.RecheckReplace(time.Second)
				continue
			}
			at := res.Val.(time.Time)
			gaps[g].ReplacedAt = &metav1.Time{Time: at}
			from := s.StartTime().Time
			if gaps[g].ObservedUntil != nil {
				from = gaps[g].ObservedUntil.Time
			}
			gaps[g].EstimatedUnobserved = runners.EstimateUnobserved(runners.SegmentRate(&s.Run.Spec, i, len(s.Runners)), from, at)
			changed = true
			r.Recorder.Eventf(s.Run, nil, corev1.EventTypeNormal, v1alpha1.ReasonRunnerReplaced, "Replace", "%s",
				decide.GapText(gaps[g], "runner %d replaced after its loss (%s): "))
			continue
		}
		if v.Class != decide.RunnerReady {
			continue // the pod starts; its events wake the run
		}
		lost := s.LostPods[gaps[g].LostPod]
		if wait := lostPodWait(lost, s.Now); wait > 0 {
			s.RecheckReplace(wait)
			continue
		}
		var donor *corev1.Pod
		if c := s.Condition(v1alpha1.ConditionSetupDone); runners.OnceForTheFleet(len(s.Runners)) && c != nil && c.Status == metav1.ConditionTrue {
			d, ok := s.Summary.FirstWith(func(o decide.RunnerView) bool {
				return o.Index != i && o.Class == decide.RunnerReady && o.Replacement == 0 || o.Index != i && o.Class == decide.RunnerReady && gapResumed(gaps, o)
			})
			if !ok {
				s.RecheckReplace(time.Second) // no live runner holds setup()'s data now
				continue
			}
			donor = d.Pod.DeepCopy()
		}
		pod := v.Pod.DeepCopy()
		if lost != nil && !decide.Terminated(lost) && lost.Status.PodIP != "" {
			lost = lost.DeepCopy()
		} else {
			lost = nil
		}
		r.Calls.Begin(s.Run, callReplace(i), runio.RunnerCallLimit+runio.ScriptCallLimit, true, func(ctx context.Context) (any, error) {
			if lost != nil {
				_ = r.RunnerAPI.Stop(ctx, lost) // a runner whose kubelet alone is gone still runs: stopped first
			}
			if donor != nil {
				data, err := r.RunnerAPI.SetupData(ctx, donor)
				if err != nil {
					return nil, fmt.Errorf("reading setup()'s data from %s: %w", donor.Name, err)
				}
				if err := r.RunnerAPI.SetSetupData(ctx, pod, data); err != nil {
					return nil, err
				}
			}
			if err := r.RunnerAPI.Resume(ctx, pod); err != nil {
				return nil, err
			}
			return time.Now(), nil
		})
		s.RecheckReplace(runio.RunnerCallLimit)
	}
	return changed
}

// gapResumed says whether runner o is a replacement already started (it holds setup()'s data).
func gapResumed(gaps []v1alpha1.RunnerGap, o decide.RunnerView) bool {
	g := findGap(gaps, o.Index, o.Replacement)
	return g >= 0 && gaps[g].ReplacedAt != nil
}

// expectedResume is when a replacement made now will resume, which is where its remaining load
// starts, so that it ends with the fleet. A pod on a lost node cannot end before its deletion
// grace runs out (nothing on the node answers), and the replacement waits that out (never two
// runners of one segment): it resumes then. Any other lost pod ends within moments.
func expectedResume(v decide.RunnerView, now time.Time) time.Time {
	if lossCause(v) == "NodeLost" {
		return now.Add(lostPodWait(v.Pod, now))
	}
	return now
}

// lostPodWait is how long a lost pod may still run: 0 once it ended, is gone, or is past its
// deletion time by lostPodGrace (its node no longer reports it).
func lostPodWait(pod *corev1.Pod, now time.Time) time.Duration {
	switch {
	case pod == nil || decide.Terminated(pod):
		return 0
	case pod.DeletionTimestamp != nil:
		return max(pod.DeletionTimestamp.Add(lostPodGrace).Sub(now), 0)
	}
	// Ended in the Job's eyes but not in pod status: its node stopped reporting.
	return 0
}

// keptEnvelopes are the lost runners' results kept in their replacements' ConfigMaps.
func (r *Stage) keptEnvelopes(ctx context.Context, s *decide.Scope) ([]measure.Envelope, []string) {
	var out []measure.Envelope
	var problems []string
	limits := runio.EnvelopeLimits(len(s.Runners), s.Run.Namespace)
	for _, g := range s.Gaps() {
		if g.ObservedUntil == nil {
			continue
		}
		// A loss too late to replace keeps its results in a record of the same name, without a Job.
		name := naming.ReplacementJob(s.Run.Name, int(g.Runner), int(g.Replacement))
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.Run.Namespace}}
		ok, err := r.Controls(ctx, s.Run, cm)
		if err == nil && !ok {
			err = errors.New("the ConfigMap is not this run's")
		}
		if err == nil && cm.UID == "" {
			err = errors.New("its ConfigMap is gone")
		}
		if err != nil {
			problems = append(problems, fmt.Sprintf("the results runner %d kept before its loss: %v", g.Runner, err))
			continue
		}
		if err := r.Unseal(cm); err != nil {
			s.Fail(v1alpha1.ReasonRecordTampered, fmt.Sprintf("the results runner %d kept before its loss: %v", g.Runner, err))
			continue
		}
		env, err := measure.ExtractEnvelopeWithin([]byte(cm.Data[LostEnvelopeKey]), limits)
		if err != nil {
			problems = append(problems, fmt.Sprintf("the results runner %d kept before its loss: %v", g.Runner, err))
			continue
		}
		out = append(out, env)
	}
	return out, problems
}
