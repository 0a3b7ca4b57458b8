package admit

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	rc "fleetbench.dev/fleetbench/internal/controller/ctrlkit"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	"fleetbench.dev/fleetbench/pkg/judge"
	"fleetbench.dev/fleetbench/pkg/measure"
	"fleetbench.dev/fleetbench/pkg/naming"
	"fleetbench.dev/fleetbench/pkg/runners"
)

// The runner count: status.parallelism is chosen once, after the script is known and before
// the pre-flight and the runners, which are all made from it (TestRun.RunnerCount). A finished
// run keeps the runner capacity it measured (pkg/runners' CapacityRecord) for the next auto
// run of the same script in its namespace.

// labelRunnerCapacity marks a kept runner capacity record.
const labelRunnerCapacity = naming.LabelPrefix + "runner-capacity"

// ReconcileParallelism records the runner count once. A numeric spec.parallelism is recorded
// as it is; auto is chosen from the load, the runner's CPU and the capacity given or kept, and
// the reconcile comes back at once so the scope loads that many runners.
func (r *Stage) ReconcileParallelism(ctx context.Context, s *decide.Scope) (ctrl.Result, error) {
	run := s.Run
	if run.Status.Parallelism != nil {
		return ctrl.Result{}, nil
	}
	p := &v1alpha1.ParallelismStatus{Source: v1alpha1.ParallelismFromSpec}
	if !run.Spec.AutoParallelism() {
		p.Chosen = int32(run.Spec.FixedParallelism())
		p.Reason = fmt.Sprintf("spec.parallelism: %d", p.Chosen)
		s.Decided.Parallelism = p
		return ctrl.Result{}, nil
	}
	load, ok, err := runners.LoadOf(&run.Spec)
	if err != nil || !ok {
		// Admission requires spec.load.devices with auto; a period it cannot parse is its words.
		s.Fail(v1alpha1.ReasonInvalidLoad, fmt.Sprintf("parallelism auto needs spec.load.devices and period: %v", err))
		return ctrl.Result{}, nil
	}
	var measured *runners.CapacityRecord
	if g := run.Spec.RunnerCapacity; g == nil || (load.VUs > 0 && g.VUs == nil) || (load.VUs == 0 && g.IterationsPerSecond == nil) {
		if measured, err = r.readCapacityRecord(ctx, s); err != nil {
			return ctrl.Result{}, err
		}
	}
	n, source, reason := runners.ChooseParallelism(load, runners.RunnerCores(&run.Spec), runners.CapacityOf(&run.Spec, measured), r.maxRunners(run))
	p.Chosen, p.Source, p.Reason = int32(n), source, rc.Truncate(reason, 1024)
	s.Decided.Parallelism = p
	return rc.After(0), nil // the runners are loaded by count: load them again with it
}

// maxRunners is the most runners run may have: the API's bound, and the operator's cap on a
// namespace's runners in flight (--max-runners-per-namespace), which one run alone may fill.
func (r *Stage) maxRunners(run *v1alpha1.TestRun) int {
	n := runners.MaxParallelismOf(&run.Spec)
	if r.MaxRunnersPerNamespace > 0 {
		n = min(n, r.MaxRunnersPerNamespace)
	}
	return n
}

// capacityRecordName is the name of the run's script's kept capacity record.
func (r *Stage) capacityRecordName(s *decide.Scope) string {
	ref := ""
	if f := s.Run.Spec.Script.LocalFile; f != "" {
		ref = f + "@" + r.runnerImage(s.Run)
	} else if vc := s.Run.Spec.Script.VolumeClaim; vc != nil {
		// Its content is not read by the operator: the claim and file name it, so two
		// scripts on volumes never share one record.
		ref = "pvc:" + vc.Name + "/" + vc.File
	}
	return runners.CapacityRecordName(s.Script, ref)
}

// readCapacityRecord reads the script's kept capacity, around the cache (it carries no
// TestRun's label). One that cannot be read is left unused, with an event saying why: its
// bytes are whatever the namespace's tenants wrote.
func (r *Stage) readCapacityRecord(ctx context.Context, s *decide.Scope) (*runners.CapacityRecord, error) {
	var cm corev1.ConfigMap
	key := client.ObjectKey{Namespace: s.Run.Namespace, Name: r.capacityRecordName(s)}
	if err := r.APIReader.Get(ctx, key, &cm); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	if cm.Labels[labelRunnerCapacity] != "true" {
		return nil, nil
	}
	err := r.Unseal(&cm)
	var rec *runners.CapacityRecord
	if err == nil {
		rec, err = runners.DecodeCapacityRecord([]byte(cm.Data[runners.CapacityRecordKey]))
	}
	if err != nil {
		r.Recorder.Eventf(s.Run, nil, corev1.EventTypeWarning, "CapacityRecordUnused", "Parallelism", "ConfigMap %s: %s", key.Name, err.Error())
		return nil, nil
	}
	return rec, nil
}

// AdviseParallelism, once the results are merged and before the run's ending is judged: a
// run generator-bound on CPU says about how many runners it needs (status.parallelism.suggested,
// and its generatorBound reason, which the ending's message repeats).
func (r *Stage) AdviseParallelism(s *decide.Scope, summary *measure.Summary, merged *judge.Outcome) {
	if !merged.GeneratorBound {
		return
	}
	n, maxN := len(s.Runners), r.maxRunners(s.Run)
	var maxUtil float64
	for _, rn := range summary.Runners {
		maxUtil = max(maxUtil, rn.CPUUtilization)
	}
	suggested := judge.SuggestedParallelism(n, maxUtil, counterOf(summary, "iterations"), counterOf(summary, "dropped_iterations"), maxN)
	if advice := judge.GrowAdvice(n, suggested, maxN); advice != "" {
		s.Decided.SuggestedParallelism = int32(suggested)
		merged.GeneratorBoundReason = rc.Truncate(merged.GeneratorBoundReason+"; "+advice, 1024)
	}
}

// counterOf is a merged counter's total, 0 when absent.
func counterOf(summary *measure.Summary, name string) uint64 {
	if m := summary.Metrics[name]; m != nil && m.Stats.Sum > 0 {
		return uint64(m.Stats.Sum)
	}
	return 0
}

// KeepCapacity keeps the runner capacity a run whose results are whole measured, for the next
// auto run of its script in the namespace.
func (r *Stage) KeepCapacity(ctx context.Context, s *decide.Scope, summary *measure.Summary, merged *judge.Outcome) {
	run := s.Run
	var vus int64
	if load, ok, err := runners.LoadOf(&run.Spec); ok && err == nil {
		vus = load.VUs
	}
	rec, ok := runners.MeasureCapacity(run.Name, summary, vus, merged.GeneratorBound, merged.Results.Partial)
	if !ok {
		return
	}
	if err := r.createCapacityRecord(ctx, run, r.capacityRecordName(s), rec); err != nil {
		// Not the run's result: the next auto run measures again.
		logf.FromContext(ctx).Info("keeping the runner capacity failed", "error", err.Error())
		r.Recorder.Eventf(run, nil, corev1.EventTypeWarning, "CapacityNotKept", "Parallelism", "%s", err.Error())
	}
}

// createCapacityRecord keeps rec under name, unowned, replacing the script's earlier record.
// A ConfigMap of that name that is not a capacity record is someone else's: left alone.
func (r *Stage) createCapacityRecord(ctx context.Context, run *v1alpha1.TestRun, name string, rec runners.CapacityRecord) error {
	data, err := runners.EncodeCapacityRecord(rec)
	if err != nil {
		return err
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: run.Namespace,
		Labels: map[string]string{labelRunnerCapacity: "true"}}, Data: map[string]string{runners.CapacityRecordKey: string(data)}}
	r.Seal(cm)
	err = r.Create(ctx, cm)
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	var have corev1.ConfigMap
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(cm), &have); err != nil {
		return err
	}
	if have.Labels[labelRunnerCapacity] != "true" || len(have.OwnerReferences) > 0 {
		return errCapacityForeign
	}
	have.Data = cm.Data
	r.Seal(&have)
	return r.Update(ctx, &have)
}

var errCapacityForeign = errors.New("a ConfigMap of the runner capacity record's name exists and is not one: the capacity this run measured is not kept")
