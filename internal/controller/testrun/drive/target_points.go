package drive

import (
	"context"
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	"fleetbench.dev/fleetbench/pkg/judge"
	"fleetbench.dev/fleetbench/pkg/measure/targetstats"
	"fleetbench.dev/fleetbench/pkg/naming"
)

// TargetPointsKey holds the target's samples in the results ConfigMap while the run runs; the
// timeline takes them over when the results are stored.
const TargetPointsKey = "target-points.json"

// ResultConfigMap is the TestRun's results ConfigMap as built; its data is filled by the caller.
func (r *Stage) ResultConfigMap(run *v1alpha1.TestRun) (*corev1.ConfigMap, error) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: naming.ResultConfigMap(run.Name), Namespace: run.Namespace,
		Labels: map[string]string{naming.LabelTestRun: run.Name, naming.LabelRole: naming.RoleResults}}}
	return cm, controllerutil.SetControllerReference(run, cm, r.Scheme)
}

// recordTargetPoint keeps one target sample for the timeline, in the results ConfigMap: the
// status holds only the before/after/peak columns and the trend. A point lost to a conflicting
// write is logged, not retried: the chart has a gap, the columns are unaffected. It returns the
// points kept with this one (at most judge.MaxTargetPoints), which the trend is fitted to.
func (r *Stage) recordTargetPoint(ctx context.Context, s *decide.Scope, sample targetstats.Sample) []judge.TargetPoint {
	point := judge.TargetPoint{At: sample.At, MemoryMiB: targetstats.MiB(sample.MemoryBytes()), Cores: sample.CoresNow}
	for i := range s.TargetPods {
		for _, cs := range s.TargetPods[i].Status.ContainerStatuses {
			point.Restarts += cs.RestartCount
		}
	}
	cm, err := r.ResultConfigMap(s.Run)
	if err != nil {
		return nil
	}
	var points []judge.TargetPoint
	err = r.APIReader.Get(ctx, client.ObjectKeyFromObject(cm), cm)
	switch {
	case apierrors.IsNotFound(err):
		points = []judge.TargetPoint{point}
		_, err = r.CreateConfigMap(ctx, s.Run, withTargetPoints(cm, points))
	case err == nil && !decide.ControlledBy(cm, s.Run.UID):
		return nil // someone else's ConfigMap of that name: storeResult warns
	case err == nil:
		if err := r.Unseal(cm); err != nil {
			s.Fail(v1alpha1.ReasonRecordTampered, "the run's results: "+err.Error())
			return nil
		}
		points = TargetPoints(cm)
		if n := len(points); n > 0 && !points[n-1].At.Before(point.At) {
			return points // this sample is already kept (a repeated reconcile)
		}
		points = judge.ThinTargetPoints(append(points, point))
		r.Seal(withTargetPoints(cm, points))
		err = r.Update(ctx, cm)
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
	cm.Data[TargetPointsKey] = string(raw)
	return cm
}

func TargetPoints(cm *corev1.ConfigMap) []judge.TargetPoint {
	var points []judge.TargetPoint
	_ = json.Unmarshal([]byte(cm.Data[TargetPointsKey]), &points) // unreadable points are no points
	return judge.ThinTargetPoints(points)                         // the tenant can edit the ConfigMap: never more than the timeline keeps
}
