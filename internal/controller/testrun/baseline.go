package testrun

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	rc "fleetbench.dev/fleetbench/internal/controller/ctrlkit"
	"fleetbench.dev/fleetbench/pkg/judge"
	"fleetbench.dev/fleetbench/pkg/judge/compare"
	"fleetbench.dev/fleetbench/pkg/measure"
)

// The baseline (spec.baseline) is resolved once, before anything is provisioned, and pinned in
// status.comparison.baseline (name, UID, source), so a newer matching run does not change it
// mid-run; the comparison with the pinned one is made when the results are merged.
//
// By name: the TestRun of that name in the run's namespace once it finished Succeeded (Source
// TestRun; a run still going is waited for until the provisioning deadline), else the newest
// kept record of a deleted run of that name (Source Kept). By selector: the newest run that
// PASSED, among the namespace's TestRuns and the kept records of deleted ones whose labels
// match, never the run itself. Only PASSED: a REGRESSED run never becomes the bar, so one
// regression does not lower it for the next release (no ratchet); FAILED and INCONCLUSIVE
// numbers are not trusted.

// baselineLookup is what load found of spec.baseline; at most one of found, waiting, missing.
type baselineLookup struct {
	found *v1alpha1.ComparedRun
	// waiting names the baseline TestRun that has not finished yet.
	waiting string
	// missing says why no baseline was found, and what to do.
	missing string
}

// baselinePoll is how often a run waiting for its baseline looks again (no watch reports
// another TestRun's end to this one).
const baselinePoll = 5 * time.Second

// loadBaseline resolves spec.baseline until it is pinned.
func (r *Reconciler) loadBaseline(ctx context.Context, s *scope) error {
	run := s.run
	if run.Spec.Baseline == nil || run.Status.Comparison != nil || isFinished(run) {
		return nil
	}
	kept, err := r.listKept(ctx, run.Namespace)
	if err != nil {
		return err
	}
	var runs v1alpha1.TestRunList
	if err := r.List(ctx, &runs, client.InNamespace(run.Namespace)); err != nil {
		return err
	}
	s.baseline = resolveBaseline(run, runs.Items, kept)
	return nil
}

// resolveBaseline picks the baseline of run among the namespace's TestRuns and kept records.
func resolveBaseline(run *v1alpha1.TestRun, runs []v1alpha1.TestRun, kept []keptRef) *baselineLookup {
	spec := run.Spec.Baseline
	keptOf := map[string]keptRef{} // by UID
	for _, k := range kept {
		keptOf[k.uid] = k
	}
	live := map[string]bool{}
	for i := range runs {
		live[string(runs[i].UID)] = true
	}
	if name := spec.Name; name != "" {
		if name == run.Name {
			return &baselineLookup{missing: "spec.baseline.name names this TestRun: name an earlier run"}
		}
		for i := range runs {
			b := &runs[i]
			if b.Name != name {
				continue
			}
			switch {
			case !isFinished(b):
				return &baselineLookup{waiting: name}
			case b.Status.Phase == v1alpha1.PhaseFailed:
				return &baselineLookup{missing: fmt.Sprintf("TestRun %s ended Failed (%s): its results are not a baseline; name a run that Succeeded", name, b.Status.Reason)}
			}
			if _, ok := keptOf[string(b.UID)]; !ok {
				return &baselineLookup{missing: fmt.Sprintf("TestRun %s has no kept results (it ended before fleetbench kept them, or they were too large, or beyond the retention count); run it again", name)}
			}
			return &baselineLookup{found: comparedRun(name, string(b.UID), "TestRun", b.Status.CompletionTime)}
		}
		for _, k := range kept { // newest first
			if k.run == name && !live[k.uid] {
				return &baselineLookup{found: comparedRun(name, k.uid, "Kept", &metav1.Time{Time: k.completion})}
			}
		}
		return &baselineLookup{missing: fmt.Sprintf("no TestRun %s and no kept results of one in namespace %s; run the baseline first, or set spec.baseline.onMissing: Warn to run without a comparison", name, run.Namespace)}
	}
	sel, err := metav1.LabelSelectorAsSelector(spec.Selector)
	if err != nil {
		return &baselineLookup{missing: "spec.baseline.selector is not a valid label selector: " + err.Error()}
	}
	// Newest by completion time, which status and the kept record hold to the second; runs that
	// ended in the same second are told apart by name, so the choice never depends on list order.
	var best *v1alpha1.ComparedRun
	consider := func(c *v1alpha1.ComparedRun) {
		if best == nil || c.CompletionTime.After(best.CompletionTime.Time) ||
			(c.CompletionTime.Equal(best.CompletionTime) && c.Name > best.Name) {
			best = c
		}
	}
	for i := range runs {
		b := &runs[i]
		_, hasKept := keptOf[string(b.UID)]
		if b.UID != run.UID && b.Status.Phase == v1alpha1.PhaseSucceeded && b.Status.Verdict == v1alpha1.VerdictPassed &&
			b.Status.CompletionTime != nil && hasKept && sel.Matches(labels.Set(b.Labels)) {
			consider(comparedRun(b.Name, string(b.UID), "TestRun", b.Status.CompletionTime))
		}
	}
	for _, k := range kept {
		if !live[k.uid] && k.uid != string(run.UID) && k.verdict == string(v1alpha1.VerdictPassed) && keptMatches(k, sel) {
			consider(comparedRun(k.run, k.uid, "Kept", &metav1.Time{Time: k.completion}))
		}
	}
	if best == nil {
		return &baselineLookup{missing: fmt.Sprintf("no TestRun that PASSED and no kept results in namespace %s match spec.baseline.selector %s; run the baseline first, or set spec.baseline.onMissing: Warn to run without a comparison", run.Namespace, sel)}
	}
	return &baselineLookup{found: best}
}

func comparedRun(name, uid, source string, completion *metav1.Time) *v1alpha1.ComparedRun {
	return &v1alpha1.ComparedRun{Name: name, UID: uid, Source: source, CompletionTime: completion.DeepCopy()}
}

// reconcileBaseline pins the baseline that load found, before anything is provisioned; a
// missing one fails the run (onMissing Fail) or is said in status.comparison and an event
// (Warn); a baseline still running is waited for until the provisioning deadline.
func (r *Reconciler) reconcileBaseline(_ context.Context, s *scope) (ctrl.Result, error) {
	b := s.baseline
	if b == nil {
		return ctrl.Result{}, nil
	}
	switch {
	case b.found != nil:
		s.d.comparison = &v1alpha1.Comparison{Baseline: b.found,
			Message: fmt.Sprintf(v1alpha1.MessageBaselinePinned, b.found.Name, b.found.Source)}
	case b.waiting != "":
		if rc.Expired(s.now, s.provisioningDeadline()) {
			s.fail(v1alpha1.ReasonBaselineNotFound, fmt.Sprintf(v1alpha1.MessageBaselineStillRunning, b.waiting))
			return ctrl.Result{}, nil
		}
		s.enter(v1alpha1.PhasePending, v1alpha1.ReasonWaitingForBaseline, fmt.Sprintf(v1alpha1.MessageWaitingForBaseline, b.waiting))
		return rc.After(baselinePoll, s.provisioningDeadline().Sub(s.now)), nil
	case s.run.Spec.Baseline.OnMissing == v1alpha1.BaselineMissingWarn:
		s.d.comparison = &v1alpha1.Comparison{Message: rc.Truncate("no baseline: "+b.missing, 1024)}
		r.recorder.Eventf(s.run, nil, corev1.EventTypeWarning, v1alpha1.ReasonBaselineNotFound, "Resolve", "%s", b.missing)
	default:
		s.fail(v1alpha1.ReasonBaselineNotFound, b.missing)
	}
	return ctrl.Result{}, nil
}

// judgeBaseline builds the run's Record from its merged results, compares it with the pinned
// baseline (once: status.comparison is then decided), turns a PASSED verdict REGRESSED on a
// regression, and keeps the Record of a Succeeded run for later runs.
func (r *Reconciler) judgeBaseline(ctx context.Context, s *scope, summary *measure.Summary, res *v1alpha1.Results, tl *judge.Timeline, e ending) (ending, error) {
	run := s.run
	cur := compare.BuildRecord(compare.RunRef{Name: run.Name, UID: string(run.UID), CompletionTime: s.now, Labels: keptLabels(run)}, res, summary, tl, compare.SubMetricsOf(&run.Spec))
	if pinned := run.Status.Comparison; run.Spec.Baseline != nil && pinned != nil && pinned.Baseline != nil && pinned.Decision == "" {
		c := v1alpha1.Comparison{Decision: v1alpha1.ComparisonNoData}
		base, err := r.readKept(ctx, run.Namespace, pinned.Baseline.Name, pinned.Baseline.UID)
		switch {
		case err != nil && (ctx.Err() != nil || isAPIError(err)):
			return e, err // the API server's, or the budget's wait cut short: retried
		case err != nil:
			c.Message = "the baseline's results could not be read: " + err.Error()
		default:
			c = compare.Compare(*run.Spec.Baseline, base, cur)
			if c.Message == "" {
				c.Message = fmt.Sprintf("compared with %s (%s)", pinned.Baseline.Name, pinned.Baseline.Source)
			}
		}
		c.Baseline = pinned.Baseline.DeepCopy()
		c.Message = rc.Truncate(c.Message, 1024)
		s.d.comparison = &c
		e = regressedEnding(e, &c)
		if e.verdict == v1alpha1.VerdictRegressed {
			r.recorder.Eventf(run, nil, corev1.EventTypeWarning, "Regressed", "Compare", "regressed against %s: %s", c.Baseline.Name, c.Worst)
		}
	}
	if e.phase != v1alpha1.PhaseSucceeded {
		return e, nil // partial results are not a baseline
	}
	cur.Run.Verdict = string(e.verdict)
	switch err := r.createKeptRecord(ctx, run, cur); {
	case errors.Is(err, errKeptForeign), errors.Is(err, errKeptTooLarge):
		r.recorder.Eventf(run, nil, corev1.EventTypeWarning, "ResultsNotKept", "Keep", "%s: this run cannot be a baseline once it is deleted", err.Error())
	case err != nil:
		return e, err
	default:
		r.pruneKept(ctx, run.Namespace)
	}
	return e, nil
}

// isAPIError says whether err is the API server's (retried) rather than the record's (final).
func isAPIError(err error) bool {
	var status apierrors.APIStatus
	return errors.As(err, &status)
}

// regressedEnding is e with a PASSED verdict turned REGRESSED when the comparison regressed;
// FAILED and INCONCLUSIVE stay (their comparison is still shown).
func regressedEnding(e ending, c *v1alpha1.Comparison) ending {
	if c == nil || c.Decision != v1alpha1.ComparisonRegressed || e.phase != v1alpha1.PhaseSucceeded || e.verdict != v1alpha1.VerdictPassed {
		return e
	}
	e.verdict = v1alpha1.VerdictRegressed
	e.message = strings.Replace(e.message, "verdict "+string(v1alpha1.VerdictPassed), "verdict "+string(v1alpha1.VerdictRegressed), 1)
	name := ""
	if c.Baseline != nil {
		name = " " + c.Baseline.Name
	}
	e.message += fmt.Sprintf("; regressed against baseline%s: %s", name, c.Worst)
	return e
}
