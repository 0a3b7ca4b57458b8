package admit

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	ctrl "sigs.k8s.io/controller-runtime"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	rc "fleetbench.dev/fleetbench/internal/controller/ctrlkit"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	"fleetbench.dev/fleetbench/pkg/judge/compare"
	"fleetbench.dev/fleetbench/pkg/runners"
	"fleetbench.dev/fleetbench/pkg/seal"
)

// A comparison is only meaningful between runs of one experiment: the same load, script, type
// and Profile (compare.Shape). The run's script digest is recorded once its script is found;
// the shape of the pinned baseline and reference, read from their kept records, is checked
// against the run's before anything is provisioned, and a difference spec.baseline.allowDifferent
// does not name ends the run Failed BaselineMismatch.

// RecordScriptDigest records status.scriptDigest once the script's text is known: its SHA-256,
// or for a script the operator never reads (in the runner image, on a volume) that of where
// it is.
func (r *Stage) RecordScriptDigest(s *decide.Scope) {
	run := s.Run
	if run.Status.ScriptDigest != "" || s.Decided.ScriptDigest != "" {
		return
	}
	text := s.Script
	switch sc := run.Spec.Script; {
	case sc.LocalFile != "":
		text = "localFile\x00" + sc.LocalFile + "\x00" + r.runnerImage(run)
	case sc.VolumeClaim != nil:
		text = "volumeClaim\x00" + sc.VolumeClaim.Name + "\x00" + sc.VolumeClaim.File
	case text == "":
		return // a ConfigMap script not read yet
	}
	sum := sha256.Sum256([]byte(text))
	s.Decided.ScriptDigest = "sha256:" + hex.EncodeToString(sum[:])
}

// runnerImage is the image the run's runners use.
func (r *Stage) runnerImage(run *v1alpha1.TestRun) string {
	if run.Spec.Runner != nil && run.Spec.Runner.Image != "" {
		return run.Spec.Runner.Image
	}
	return r.RunnerImage
}

// ShapeOf is the experiment of run, whose script has digest script, as its kept record carries it.
func ShapeOf(run *v1alpha1.TestRun, script string) compare.Shape {
	return compare.ShapeOf(&run.Spec, runners.UserArgs(&run.Spec), script)
}

// ReconcileBaselineShape checks, once the script digest is known, that the pinned baseline and
// reference ran the same experiment, and records what was checked in their
// status.…baseline.shape.
func (r *Stage) ReconcileBaselineShape(ctx context.Context, s *decide.Scope) (ctrl.Result, error) {
	run := s.Run
	if run.Spec.Baseline == nil || decide.IsFinished(run) {
		return ctrl.Result{}, nil
	}
	cur := ShapeOf(run, cmp.Or(run.Status.ScriptDigest, s.Decided.ScriptDigest))
	// Each pinned in this reconcile, or an earlier one.
	checked, err := r.checkShape(ctx, s, "baseline", cmp.Or(s.Decided.Comparison, run.Status.Comparison), cur)
	if err != nil || s.Failure != nil {
		return ctrl.Result{}, err
	}
	if checked != nil {
		s.Decided.Comparison = checked
	}
	if checked, err = r.checkShape(ctx, s, "reference", cmp.Or(s.Decided.Reference, run.Status.ReferenceComparison), cur); checked != nil {
		s.Decided.Reference = checked
	}
	return ctrl.Result{}, err
}

// checkShape reads the kept record pinned in pinned and compares its shape with cur: the
// comparison with its shape recorded, or the run failed BaselineMismatch (or RecordTampered);
// nil when there is nothing to check.
func (r *Stage) checkShape(ctx context.Context, s *decide.Scope, what string, pinned *v1alpha1.Comparison, cur compare.Shape) (*v1alpha1.Comparison, error) {
	if pinned == nil || pinned.Baseline == nil || pinned.Baseline.Shape != "" || pinned.Decision != "" {
		return nil, nil // nothing pinned, or checked already
	}
	b := pinned.Baseline
	rec, err := r.ReadKept(ctx, s.Run.Namespace, b.Name, b.UID)
	switch {
	case seal.Refused(err):
		s.Fail(v1alpha1.ReasonRecordTampered, fmt.Sprintf("the %s's kept record: %s", what, err.Error()))
		return nil, nil
	case err != nil && (ctx.Err() != nil || rc.IsAPIError(err)):
		return nil, err
	}
	out := pinned.DeepCopy()
	switch {
	case err != nil:
		// Unreadable now: the comparison, made after the load, says so and decides nothing.
		out.Baseline.Shape = rc.Truncate("not checked: "+err.Error(), 512)
	case rec.Shape == nil:
		out.Baseline.Shape = "not checked: the record was kept before records carried their load, script, type and Profile"
	default:
		if diff := compare.Differences(*rec.Shape, cur, s.Run.Spec.Baseline.AllowDifferent); len(diff) > 0 {
			s.Fail(v1alpha1.ReasonBaselineMismatch, rc.Truncate(fmt.Sprintf("the %s %s ran another experiment: %s; compare runs of one experiment "+
				"(spec.baseline.selector or name), or name the intended difference in spec.baseline.allowDifferent (Load, Script, Type, Profile)",
				what, b.Name, strings.Join(diff, "; ")), rc.MaxConditionMessage))
			return nil, nil
		}
		out.Baseline.Shape = rec.Shape.Text()
		if allowed := compare.Differences(*rec.Shape, cur, nil); len(allowed) > 0 {
			out.Baseline.Shape = rc.Truncate(out.Baseline.Shape+"; allowed: "+strings.Join(allowed, "; "), 512)
		}
	}
	return out, nil
}
