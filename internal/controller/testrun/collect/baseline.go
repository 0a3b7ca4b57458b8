package collect

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	rc "fleetbench.dev/fleetbench/internal/controller/ctrlkit"
	"fleetbench.dev/fleetbench/internal/controller/testrun/admit"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	"fleetbench.dev/fleetbench/pkg/judge/compare"
	"fleetbench.dev/fleetbench/pkg/seal"
)

// compareWithBaseline compares the run's record with the pinned baseline and the pinned
// reference (spec.baseline.reference), each once: a decided comparison
// (status.comparison.decision) is not made again, but read back for the verdict.
func (r *Stage) compareWithBaseline(ctx context.Context, s *decide.Scope, cur compare.Record) (baseline, reference *v1alpha1.Comparison, err error) {
	run := s.Run
	if run.Spec.Baseline == nil {
		return nil, nil, nil
	}
	if baseline, err = r.compareWith(ctx, s, run.Status.Comparison, cur); err != nil || baseline == nil {
		return nil, nil, err
	}
	s.Decided.Comparison = baseline
	if reference, err = r.compareWith(ctx, s, run.Status.ReferenceComparison, cur); err != nil {
		return nil, nil, err
	}
	s.Decided.Reference = reference
	return baseline, reference, nil
}

// compareWith compares cur with the run pinned in pinned; nil when nothing was pinned.
func (r *Stage) compareWith(ctx context.Context, s *decide.Scope, pinned *v1alpha1.Comparison, cur compare.Record) (*v1alpha1.Comparison, error) {
	run := s.Run
	if pinned == nil || pinned.Baseline == nil {
		return nil, nil
	}
	if pinned.Decision != "" {
		return pinned, nil
	}
	c := v1alpha1.Comparison{Decision: v1alpha1.ComparisonNoData}
	base, err := r.ReadKept(ctx, run.Namespace, pinned.Baseline.Name, pinned.Baseline.UID)
	switch {
	case err != nil && (ctx.Err() != nil || rc.IsAPIError(err) || seal.Refused(err)):
		return nil, err // the API server's, or the budget's wait cut short: retried; a tampered record fails the run
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
	return &c, nil
}

// keepRecord keeps the record of a Succeeded run, with its verdict, for later runs to compare
// with: partial results are not a baseline.
func (r *Stage) keepRecord(ctx context.Context, s *decide.Scope, cur compare.Record, e decide.Ending) error {
	run := s.Run
	if e.Regressed() {
		for _, c := range []struct {
			what    string
			decided *v1alpha1.Comparison
		}{{"baseline", cmp.Or(s.Decided.Comparison, run.Status.Comparison)}, {"fixed reference", cmp.Or(s.Decided.Reference, run.Status.ReferenceComparison)}} {
			if c.decided != nil && c.decided.Decision == v1alpha1.ComparisonRegressed && c.decided.Baseline != nil {
				r.Recorder.Eventf(run, nil, corev1.EventTypeWarning, "Regressed", "Compare", "regressed against the %s %s: %s", c.what, c.decided.Baseline.Name, c.decided.Worst)
			}
		}
	}
	if e.Phase != v1alpha1.PhaseSucceeded {
		return nil
	}
	cur.Run.Verdict = string(e.Verdict)
	switch err := r.CreateKeptRecord(ctx, run, cur); {
	case errors.Is(err, admit.ErrKeptForeign), errors.Is(err, admit.ErrKeptTooLarge):
		r.Recorder.Eventf(run, nil, corev1.EventTypeWarning, "ResultsNotKept", "Keep", "%s: this run cannot be a baseline once it is deleted", err.Error())
	case err != nil:
		return err
	default:
		r.PruneKept(ctx, run.Namespace)
	}
	return nil
}
