package drive

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	rc "fleetbench.dev/fleetbench/internal/controller/ctrlkit"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	"fleetbench.dev/fleetbench/pkg/target"
)

// ReconcileTargetPresent watches, from the start until the results are collected, that the
// target is still there: its own namespace neither gone nor going, its workloads neither. A
// target lost mid-run is its own ending (TargetLost), not a verdict on what remained of the load:
// the TargetReady condition turns False with that reason, the runners are stopped, and collection
// ends the run Failed with what they measured, marked partial (outcome).
func (r *Stage) ReconcileTargetPresent(ctx context.Context, s *decide.Scope) (ctrl.Result, error) {
	run := s.Run
	if run.Spec.Target.External != nil || !s.Started() || s.TargetNS == "" {
		return ctrl.Result{}, nil
	}
	lost := decide.TargetLostCondition(s)
	if lost == nil {
		why, err := r.targetMissing(ctx, r.Client, s)
		if err != nil || why == "" {
			return ctrl.Result{}, err
		}
		// The cache may lag behind the API server: only what it confirms counts.
		if why, err = r.targetMissing(ctx, r.APIReader, s); err != nil || why == "" {
			return ctrl.Result{}, err
		}
		s.RecordCondition(v1alpha1.ConditionTargetReady, metav1.ConditionFalse, v1alpha1.ReasonTargetLost, why)
		r.Recorder.Eventf(run, nil, corev1.EventTypeWarning, v1alpha1.ReasonTargetLost, "Measure", "%s", why)
		lost = decide.TargetLostCondition(s)
	}
	if s.Summary.Active() == 0 {
		return ctrl.Result{}, nil // collection ends the run TargetLost
	}
	// Stopped runners flush their results and exit; a minute later those still running are deleted.
	s.Stop = &decide.StopDecision{Why: lost.Message, DeleteJobs: rc.Expired(s.Now, lost.LastTransitionTime.Add(time.Minute))}
	s.Enter(v1alpha1.PhaseRunning, v1alpha1.ReasonStoppingRunners, lost.Message+"; stopping the runners")
	return rc.After(10 * time.Second), nil
}

// targetMissing says, as read from reader, what of the run's target is gone: its own namespace
// (gone, going, or by now another's) or one of its workloads; "" while all is there.
func (r *Stage) targetMissing(ctx context.Context, reader client.Reader, s *decide.Scope) (string, error) {
	if !s.SharedTarget {
		ns := &corev1.Namespace{}
		err := reader.Get(ctx, client.ObjectKey{Name: s.TargetNS}, ns)
		switch {
		case apierrors.IsNotFound(err) || (err == nil && !target.OwnedBy(ns, s.Run)):
			return lostMessage(fmt.Sprintf("target namespace %s was deleted", s.TargetNS)), nil
		case err != nil:
			return "", err
		case !ns.DeletionTimestamp.IsZero():
			return lostMessage(fmt.Sprintf("target namespace %s is being deleted", s.TargetNS)), nil
		}
	}
	var list appsv1.DeploymentList
	if err := reader.List(ctx, &list, client.InNamespace(s.TargetNS), client.MatchingLabels(target.RunLabels(s.Run))); err != nil {
		return "", err
	}
	present := map[string]bool{}
	for i := range list.Items {
		if d := &list.Items[i]; d.DeletionTimestamp.IsZero() && target.OwnedBy(d, s.Run) {
			present[d.Name] = true
		}
	}
	var want []string
	if s.Desired != nil {
		for _, d := range s.Desired.Deployments {
			want = append(want, d.Name)
		}
	}
	for _, name := range want {
		if !present[name] {
			return lostMessage(fmt.Sprintf("target workload %s/%s was deleted", s.TargetNS, name)), nil
		}
	}
	if len(want) == 0 && len(present) == 0 { // the Profile went: no names to look for
		return lostMessage(fmt.Sprintf("every target workload in namespace %s was deleted", s.TargetNS)), nil
	}
	return "", nil
}

func lostMessage(what string) string {
	return what + " while the load ran, not by this operator; the load measured a target going away. " +
		"Find out who deleted it (kubectl get events -A), keep the target's namespace and workloads alone while a TestRun runs, and run the test again"
}
