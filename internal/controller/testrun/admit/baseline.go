package admit

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	rc "fleetbench.dev/fleetbench/internal/controller/ctrlkit"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	"fleetbench.dev/fleetbench/pkg/judge/verdict"
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

// baselinePoll is how often a run waiting for its baseline looks again (no watch reports
// another TestRun's end to this one).
const baselinePoll = 5 * time.Second

// LoadBaseline resolves spec.baseline until it is pinned.
func (r *Stage) LoadBaseline(ctx context.Context, s *decide.Scope) error {
	run := s.Run
	if run.Spec.Baseline == nil || run.Status.Comparison != nil || decide.IsFinished(run) {
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
	s.Baseline = resolveBaseline(run, runs.Items, kept)
	return nil
}

// resolveBaseline picks the baseline of run among the namespace's TestRuns and kept records,
// and its reference when spec.baseline.reference names one.
func resolveBaseline(run *v1alpha1.TestRun, runs []v1alpha1.TestRun, kept []keptRef) *decide.BaselineLookup {
	spec := run.Spec.Baseline
	found := resolveRun(run, runs, kept, "spec.baseline", spec.Name, spec.Selector, newest)
	if ref := spec.Reference; ref != nil {
		found.Reference = resolveRun(run, runs, kept, "spec.baseline.reference", ref.Name, ref.Selector, oldest)
	}
	return found
}

// pick says which of the runs a selector matches is wanted: the newest (a baseline: the
// previous release) or the oldest (a reference: the first accepted release).
type pick bool

const (
	newest pick = true
	oldest pick = false
)

// resolveRun finds the run name names, or the one the selector picks, for the field at path.
func resolveRun(run *v1alpha1.TestRun, runs []v1alpha1.TestRun, kept []keptRef, path, name string, selector *metav1.LabelSelector, which pick) *decide.BaselineLookup {
	keptOf := map[string]keptRef{} // by UID
	for _, k := range kept {
		keptOf[k.uid] = k
	}
	live := map[string]bool{}
	for i := range runs {
		live[string(runs[i].UID)] = true
	}
	if name != "" {
		if name == run.Name {
			return &decide.BaselineLookup{Missing: path + ".name names this TestRun: name an earlier run"}
		}
		for i := range runs {
			b := &runs[i]
			if b.Name != name {
				continue
			}
			switch {
			case !decide.IsFinished(b):
				return &decide.BaselineLookup{Waiting: name}
			case b.Status.Phase == v1alpha1.PhaseFailed:
				return &decide.BaselineLookup{Missing: fmt.Sprintf("TestRun %s ended Failed (%s): its results are not a baseline; name a run that Succeeded", name, b.Status.Reason)}
			}
			if _, ok := keptOf[string(b.UID)]; !ok {
				return &decide.BaselineLookup{Missing: fmt.Sprintf("TestRun %s has no kept results (it ended before fleetbench kept them, or they were too large, or beyond the retention count); run it again", name)}
			}
			return &decide.BaselineLookup{Found: comparedRun(name, string(b.UID), "TestRun", b.Status.CompletionTime)}
		}
		for _, k := range kept { // newest first
			if k.run == name && !live[k.uid] {
				return &decide.BaselineLookup{Found: comparedRun(name, k.uid, "Kept", &metav1.Time{Time: k.completion})}
			}
		}
		return &decide.BaselineLookup{Missing: fmt.Sprintf("no TestRun %s and no kept results of one in namespace %s; run the baseline first, or set spec.baseline.onMissing: Warn to run without a comparison", name, run.Namespace)}
	}
	sel, err := metav1.LabelSelectorAsSelector(selector)
	if err != nil {
		return &decide.BaselineLookup{Missing: path + ".selector is not a valid label selector: " + err.Error()}
	}
	// By completion time, which status and the kept record hold to the second; runs that ended
	// in the same second are told apart by name, so the choice never depends on list order.
	var best *v1alpha1.ComparedRun
	consider := func(c *v1alpha1.ComparedRun) {
		if best == nil {
			best = c
			return
		}
		if later := c.CompletionTime.After(best.CompletionTime.Time) || (c.CompletionTime.Equal(best.CompletionTime) && c.Name > best.Name); later == bool(which) {
			best = c
		}
	}
	for i := range runs {
		b := &runs[i]
		_, hasKept := keptOf[string(b.UID)]
		if b.UID != run.UID && b.Status.Phase == v1alpha1.PhaseSucceeded && verdict.Passed(b.Status.Verdict) &&
			b.Status.CompletionTime != nil && hasKept && sel.Matches(labels.Set(b.Labels)) {
			consider(comparedRun(b.Name, string(b.UID), "TestRun", b.Status.CompletionTime))
		}
	}
	for _, k := range kept {
		if !live[k.uid] && k.uid != string(run.UID) && verdict.Passed(v1alpha1.Verdict(k.verdict)) && keptMatches(k, sel) {
			consider(comparedRun(k.run, k.uid, "Kept", &metav1.Time{Time: k.completion}))
		}
	}
	if best == nil {
		return &decide.BaselineLookup{Missing: fmt.Sprintf("no TestRun that PASSED and no kept results in namespace %s match %s.selector %s; run the baseline first, or set spec.baseline.onMissing: Warn to run without a comparison", run.Namespace, path, sel)}
	}
	return &decide.BaselineLookup{Found: best}
}

func comparedRun(name, uid, source string, completion *metav1.Time) *v1alpha1.ComparedRun {
	return &v1alpha1.ComparedRun{Name: name, UID: uid, Source: source, CompletionTime: completion.DeepCopy()}
}

// ReconcileBaseline pins the baseline and the reference that load found, before anything is
// provisioned; a missing one fails the run (onMissing Fail) or is said in status and an event
// (Warn); one still running is waited for until the provisioning deadline. A reference that is
// the baseline itself is compared once, as the baseline.
func (r *Stage) ReconcileBaseline(ctx context.Context, s *decide.Scope) (ctrl.Result, error) {
	b := s.Baseline
	if b == nil {
		return ctrl.Result{}, nil
	}
	for _, l := range []*decide.BaselineLookup{b, b.Reference} {
		if l != nil && l.Waiting != "" {
			if rc.Expired(s.Now, s.ProvisioningDeadline()) {
				s.Fail(v1alpha1.ReasonBaselineNotFound, fmt.Sprintf(v1alpha1.MessageBaselineStillRunning, l.Waiting))
				return ctrl.Result{}, nil
			}
			s.Enter(v1alpha1.PhasePending, v1alpha1.ReasonWaitingForBaseline, fmt.Sprintf(v1alpha1.MessageWaitingForBaseline, l.Waiting))
			return rc.After(baselinePoll, s.ProvisioningDeadline().Sub(s.Now)), nil
		}
	}
	var ok bool
	if s.Decided.Comparison, ok = r.pin(s, b, "baseline"); !ok {
		return ctrl.Result{}, nil
	}
	if b.Reference == nil {
		return ctrl.Result{}, nil
	}
	if b.Found != nil && b.Reference.Found != nil && b.Found.UID == b.Reference.Found.UID {
		s.Decided.Reference = &v1alpha1.Comparison{Message: fmt.Sprintf(v1alpha1.MessageReferenceIsBaseline, b.Found.Name)}
		return ctrl.Result{}, nil
	}
	if s.Decided.Reference, ok = r.pin(s, b.Reference, "reference"); ok && b.Reference.Found != nil {
		f := b.Reference.Found
		return ctrl.Result{}, r.MarkReference(ctx, s.Run.Namespace, f.Name, f.UID)
	}
	return ctrl.Result{}, nil
}

// pin is the pinned comparison of what l found for what ("baseline", "reference"); a missing
// one fails the run (ok false), or under onMissing Warn is said in the comparison and an event.
func (r *Stage) pin(s *decide.Scope, l *decide.BaselineLookup, what string) (c *v1alpha1.Comparison, ok bool) {
	switch {
	case l.Found != nil:
		return &v1alpha1.Comparison{Baseline: l.Found, Message: fmt.Sprintf(v1alpha1.MessageBaselinePinned, what, l.Found.Name, l.Found.Source)}, true
	case s.Run.Spec.Baseline.OnMissing == v1alpha1.BaselineMissingWarn:
		r.Recorder.Eventf(s.Run, nil, corev1.EventTypeWarning, v1alpha1.ReasonBaselineNotFound, "Resolve", "no %s: %s", what, l.Missing)
		return &v1alpha1.Comparison{Message: rc.Truncate("no "+what+": "+l.Missing, 1024)}, true
	}
	s.Fail(v1alpha1.ReasonBaselineNotFound, what+": "+l.Missing)
	return nil, false
}
