package testrun

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	rc "fleetbench.dev/fleetbench/internal/controller/ctrlkit"
	"fleetbench.dev/fleetbench/pkg/judge"
	"fleetbench.dev/fleetbench/pkg/measure"
	"fleetbench.dev/fleetbench/pkg/measure/targetstats"
	"fleetbench.dev/fleetbench/pkg/naming"
)

// targetPointsKey holds the target's samples in the results ConfigMap while the run runs; the
// timeline takes them over when the results are stored.
const targetPointsKey = "target-points.json"

// maxResultBytes keeps the ConfigMap under the API server's 1 MiB object limit.
const maxResultBytes = 900 << 10

// createConfigMap creates one of the ConfigMaps a TestRun owns (its script and k6 config, the
// copy of its script ConfigMap, its results), controlled by it, or loads the one of that name
// (rc.CreateOrGetCreated); created says whether it was made now. Every owned ConfigMap is made
// here; whether one found is the run's is the caller's check (controls).
func (r *Reconciler) createConfigMap(ctx context.Context, run *v1alpha1.TestRun, cm *corev1.ConfigMap) (bool, error) {
	if err := controllerutil.SetControllerReference(run, cm, r.scheme); err != nil {
		return false, err
	}
	return rc.CreateOrGetCreated(ctx, r.Client, cm)
}

// resultConfigMap is the TestRun's results ConfigMap as built; its data is filled by the caller.
func (r *Reconciler) resultConfigMap(run *v1alpha1.TestRun) (*corev1.ConfigMap, error) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: naming.ResultConfigMap(run.Name), Namespace: run.Namespace,
		Labels: map[string]string{naming.LabelTestRun: run.Name, naming.LabelRole: naming.RoleResults}}}
	return cm, controllerutil.SetControllerReference(run, cm, r.scheme)
}

// recordTargetPoint keeps one target sample for the timeline, in the results ConfigMap: the
// status holds only the before/after/peak columns and the trend. A point lost to a conflicting
// write is logged, not retried: the chart has a gap, the columns are unaffected. It returns the
// points kept with this one (at most judge.MaxTargetPoints), which the trend is fitted to.
func (r *Reconciler) recordTargetPoint(ctx context.Context, s *scope, sample targetstats.Sample) []judge.TargetPoint {
	point := judge.TargetPoint{At: sample.At, MemoryMiB: targetstats.MiB(sample.MemoryBytes()), Cores: sample.CoresNow}
	for i := range s.targetPods {
		for _, cs := range s.targetPods[i].Status.ContainerStatuses {
			point.Restarts += cs.RestartCount
		}
	}
	cm, err := r.resultConfigMap(s.run)
	if err != nil {
		return nil
	}
	var points []judge.TargetPoint
	err = r.apiReader.Get(ctx, client.ObjectKeyFromObject(cm), cm)
	switch {
	case apierrors.IsNotFound(err):
		points = []judge.TargetPoint{point}
		_, err = r.createConfigMap(ctx, s.run, withTargetPoints(cm, points))
	case err == nil && !controlledBy(cm, s.run.UID):
		return nil // someone else's ConfigMap of that name: storeResult warns
	case err == nil:
		points = targetPoints(cm)
		if n := len(points); n > 0 && !points[n-1].At.Before(point.At) {
			return points // this sample is already kept (a repeated reconcile)
		}
		points = judge.ThinTargetPoints(append(points, point))
		err = r.Update(ctx, withTargetPoints(cm, points))
	}
	if err != nil {
		logf.FromContext(ctx).Info("keeping a target sample for the timeline failed", "error", err.Error())
	}
	return points
}

func withTargetPoints(cm *corev1.ConfigMap, points []judge.TargetPoint) *corev1.ConfigMap {
	raw, _ := json.Marshal(points) // plain data: cannot fail
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	cm.Data[targetPointsKey] = string(raw)
	return cm
}

func targetPoints(cm *corev1.ConfigMap) []judge.TargetPoint {
	var points []judge.TargetPoint
	_ = json.Unmarshal([]byte(cm.Data[targetPointsKey]), &points) // unreadable points are no points
	return judge.ThinTargetPoints(points)                         // the tenant can edit the ConfigMap: never more than the timeline keeps
}

// storeResult keeps the full merged result, in k6's summary shape, and the run over time (the
// merged windows and the target's points) in the ConfigMap the TestRun owns, and points status
// at it; a result too large for a ConfigMap is a warning instead.
// It returns the timeline (the comparison's Record is built from it).
func (r *Reconciler) storeResult(ctx context.Context, run *v1alpha1.TestRun, merged *measure.Summary, outcome *judge.Outcome) (*judge.Timeline, error) {
	cm, err := r.resultConfigMap(run)
	if err != nil {
		return nil, err
	}
	err = r.apiReader.Get(ctx, client.ObjectKeyFromObject(cm), cm)
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, err
	}
	exists := err == nil
	if exists && !controlledBy(cm, run.UID) {
		outcome.Results.Warnings = append(outcome.Results.Warnings, fmt.Sprintf("ConfigMap %s exists and was not made for this TestRun: "+
			"the full result and timeline, kept there, were not written (delete that ConfigMap or rename the TestRun)", cm.Name))
		tl := judge.BuildTimeline(merged, nil)
		tl.RunnerMemory = judge.RunnerMemoryPoints(merged, outcome.RunnerMemory)
		return &tl, nil
	}
	tl := judge.BuildTimeline(merged, targetPoints(cm))
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
		if size := len(summary) + len(timeline); size > maxResultBytes {
			outcome.Results.Warnings = append(outcome.Results.Warnings,
				fmt.Sprintf("the full result (%d KiB gzipped) is too large for a ConfigMap and was not kept", size>>10))
			return &tl, nil
		}
		cm.BinaryData = map[string][]byte{judge.SummaryKey: summary, judge.TimelineKey: timeline}
		delete(cm.Data, targetPointsKey)
		// Collection runs once per run; a repeat after a lost status write finds the result kept.
		if exists {
			err = r.Update(ctx, cm)
		} else {
			var created bool
			if created, err = r.createConfigMap(ctx, run, cm); err == nil && !created {
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
