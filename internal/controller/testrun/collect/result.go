package collect

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	"fleetbench.dev/fleetbench/internal/controller/testrun/drive"
	"fleetbench.dev/fleetbench/internal/controller/testrun/runenv"
	"fleetbench.dev/fleetbench/pkg/judge"
	"fleetbench.dev/fleetbench/pkg/measure"
)

// storeResult keeps the full merged result, in k6's summary shape, and the run over time (the
// merged windows and the target's points) in the ConfigMap the TestRun owns, and points status
// at it; a result too large for a ConfigMap is a warning instead.
// It returns the timeline (the comparison's Record is built from it).
func (r *Stage) storeResult(ctx context.Context, run *v1alpha1.TestRun, merged *measure.Summary, outcome *judge.Outcome) (*judge.Timeline, error) {
	cm, err := r.ResultConfigMap(run)
	if err != nil {
		return nil, err
	}
	err = r.APIReader.Get(ctx, client.ObjectKeyFromObject(cm), cm)
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, err
	}
	exists := err == nil
	if exists && !decide.ControlledBy(cm, run.UID) {
		outcome.Results.Warnings = append(outcome.Results.Warnings, fmt.Sprintf("ConfigMap %s exists and was not made for this TestRun: "+
			"the full result and timeline, kept there, were not written (delete that ConfigMap or rename the TestRun)", cm.Name))
		tl := judge.BuildTimeline(merged, nil)
		tl.RunnerMemory = judge.RunnerMemoryPoints(merged, outcome.RunnerMemory)
		return &tl, nil
	}
	if exists {
		if err := r.Unseal(cm); err != nil {
			return nil, err // collect fails the run RecordTampered
		}
	}
	tl := judge.BuildTimeline(merged, drive.TargetPoints(cm))
	tl.RunnerMemory = judge.RunnerMemoryPoints(merged, outcome.RunnerMemory)
	if stored, ok := cm.BinaryData[judge.TimelineKey]; ok {
		_ = judge.DecodeGzipJSON(stored, &tl) // a repeat: the target points moved into the stored timeline
	}
	if _, stored := cm.BinaryData[judge.SummaryKey]; !stored {
		summary, err := judge.EncodeGzipJSON(outcome.K6Summary)
		if err != nil {
			return nil, fmt.Errorf("encoding the full result: %w", err)
		}
		timeline, err := judge.EncodeGzipJSON(tl)
		if err != nil {
			return nil, fmt.Errorf("encoding the timeline: %w", err)
		}
		if size := len(summary) + len(timeline); size > runenv.MaxResultBytes {
			outcome.Results.Warnings = append(outcome.Results.Warnings,
				fmt.Sprintf("the full result (%d KiB gzipped) is too large for a ConfigMap and was not kept", size>>10))
			return &tl, nil
		}
		cm.BinaryData = map[string][]byte{judge.SummaryKey: summary, judge.TimelineKey: timeline}
		delete(cm.Data, drive.TargetPointsKey)
		// Collection runs once per run; a repeat after a lost status write finds the result kept.
		if exists {
			r.Seal(cm)
			err = r.Update(ctx, cm)
		} else {
			var created bool
			if created, err = r.CreateConfigMap(ctx, run, cm); err == nil && !created {
				err = fmt.Errorf("ConfigMap %s was made meanwhile; storing the result again", cm.Name)
			}
		}
		if err != nil {
			return nil, err
		}
	}
	outcome.Results.FullResult = &v1alpha1.FullResultRef{ConfigMap: cm.Name, Key: judge.SummaryKey}
	return &tl, nil
}
