package collect

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	"fleetbench.dev/fleetbench/pkg/judge/compare"
	"fleetbench.dev/fleetbench/pkg/judge/shift"
)

// The trend (spec.trend): once the results are merged, the run's record joins the kept records
// its selector matches, in order, and the change points within its last runs go into
// status.trend. The kept records are read with the merge, off the worker: how many and how large
// they are is the namespace's tenants' doing. The analysis of at most maxTrendRuns whole-run
// values a metric is milliseconds, on the worker.

// maxTrendRuns bounds the kept runs a trend reads, besides the run itself.
const maxTrendRuns = 50

// keptTrend is what was read of the trend's kept runs: oldest first, and what was left out.
type keptTrend struct {
	records []compare.Record
	notes   []string
}

// readTrend reads the kept runs spec.trend's selector matches; nothing without spec.trend. What
// cannot be read is said in the notes, never fails the run's merge.
func (r *Stage) readTrend(ctx context.Context, ns, uid string, spec *v1alpha1.TrendSpec) keptTrend {
	if spec == nil {
		return keptTrend{}
	}
	sel, err := metav1.LabelSelectorAsSelector(&spec.Selector)
	if err != nil {
		return keptTrend{notes: []string{"spec.trend.selector is not a label selector: " + err.Error()}}
	}
	records, notes, err := r.KeptMatching(ctx, ns, sel, maxTrendRuns, uid)
	if err != nil {
		return keptTrend{notes: []string{"the kept runs could not be listed or read: " + err.Error()}}
	}
	return keptTrend{records: records, notes: notes}
}

// judgeTrend is status.trend for the run whose record is cur, and the policy that reads it; a
// change for the worse is also a Warning event.
func (r *Stage) judgeTrend(s *decide.Scope, kept keptTrend, cur compare.Record) (*v1alpha1.TrendResult, v1alpha1.TrendOnShift) {
	spec := s.Run.Spec.Trend
	if spec == nil {
		return nil, ""
	}
	if t := s.Run.Status.Trend; t != nil {
		return t, spec.OnShift // decided by an earlier reconcile
	}
	order := spec.OrderBy
	if order == "" {
		order = shift.OrderCompletion
	}
	notes := kept.notes
	sorted, skipped, err := shift.Sort(append(kept.records, cur), order)
	if err != nil {
		notes = append(notes, err.Error())
	}
	if len(skipped) > 0 {
		notes = append(notes, fmt.Sprintf("%d runs without the label of spec.trend.orderBy %s were left out (this one among them: %t)",
			len(skipped), order, slices.ContainsFunc(skipped, func(r compare.Record) bool { return r.Run.UID == cur.Run.UID })))
	}
	lastRuns := int(spec.LastRuns)
	if lastRuns <= 0 {
		lastRuns = 5
	}
	res := shift.Status(shift.Analyze(sorted, nil, shift.Options{}), lastRuns, shift.Options{}, notes)
	s.Decided.Trend = &res
	if worst := shift.Worst(res); worst != "" {
		r.Recorder.Eventf(s.Run, nil, corev1.EventTypeWarning, "TrendShift", "Collect", "shifted for the worse over the kept runs: %s", worst)
	}
	return &res, spec.OnShift
}
