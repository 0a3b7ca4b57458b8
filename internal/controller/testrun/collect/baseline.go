package collect

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	rc "fleetbench.dev/fleetbench/internal/controller/ctrlkit"
	"fleetbench.dev/fleetbench/internal/controller/testrun/admit"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	"fleetbench.dev/fleetbench/pkg/judge/compare"
	"fleetbench.dev/fleetbench/pkg/seal"
)

// compareWithBaseline compares the run's record with the pinned baseline, once: a decided
// comparison (status.comparison.decision) is not made again, but read back for the verdict.
func (r *Stage) compareWithBaseline(ctx context.Context, s *decide.Scope, cur compare.Record) (*v1alpha1.Comparison, error) {
	run := s.Run
	pinned := run.Status.Comparison
	if run.Spec.Baseline == nil || pinned == nil || pinned.Baseline == nil {
		return nil, nil
	}
	if pinned.Decision != "" {
		return pinned, nil
	}
	c := v1alpha1.Comparison{Decision: v1alpha1.ComparisonNoData}
	base, err := r.ReadKept(ctx, run.Namespace, pinned.Baseline.Name, pinned.Baseline.UID)
	switch {
	case err != nil && (ctx.Err() != nil || isAPIError(err) || seal.Refused(err)):
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
	s.Decided.Comparison = &c
	return &c, nil
}

// keepRecord keeps the record of a Succeeded run, with its verdict, for later runs to compare
// with: partial results are not a baseline.
func (r *Stage) keepRecord(ctx context.Context, s *decide.Scope, cur compare.Record, e decide.Ending) error {
	run := s.Run
	if e.Regressed() {
		c := s.Decided.Comparison
		if c == nil {
			c = run.Status.Comparison
		}
		r.Recorder.Eventf(run, nil, corev1.EventTypeWarning, "Regressed", "Compare", "regressed against %s: %s", c.Baseline.Name, c.Worst)
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

// isAPIError says whether err is the API server's (retried) rather than the record's (final).
func isAPIError(err error) bool {
	var status apierrors.APIStatus
	return errors.As(err, &status)
}
