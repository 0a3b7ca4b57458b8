package testrun

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
	"fleetbench.dev/fleetbench/pkg/target"
)

// reconcileTargetPresent watches, from the start until the results are collected, that the
// target is still there: its own namespace neither gone nor going, its workloads neither. A
// target lost mid-run is its own ending (TargetLost), not a verdict on what remained of the load:
// the TargetReady condition turns False with that reason, the runners are stopped, and collection
// ends the run Failed with what they measured, marked partial (outcome).
func (r *Reconciler) reconcileTargetPresent(ctx context.Context, s *scope) (ctrl.Result, error) {
	run := s.run
	if run.Spec.Target.External != nil || !s.started() || s.targetNS == "" {
		return ctrl.Result{}, nil
	}
	lost := targetLostCondition(s)
	if lost == nil {
		why, err := r.targetMissing(ctx, r.Client, s)
		if err != nil || why == "" {
			return ctrl.Result{}, err
		}
		// The cache may lag behind the API server: only what it confirms counts.
		if why, err = r.targetMissing(ctx, r.apiReader, s); err != nil || why == "" {
			return ctrl.Result{}, err
		}
		s.recordCondition(v1alpha1.ConditionTargetReady, metav1.ConditionFalse, v1alpha1.ReasonTargetLost, why)
		r.recorder.Eventf(run, nil, corev1.EventTypeWarning, v1alpha1.ReasonTargetLost, "Measure", "%s", why)
		lost = targetLostCondition(s)
	}
	if s.summary.active() == 0 {
		return ctrl.Result{}, nil // collection ends the run TargetLost
	}
	// Stopped runners flush their results and exit; a minute later those still running are deleted.
	s.stop = &stopDecision{why: lost.Message, deleteJobs: rc.Expired(s.now, lost.LastTransitionTime.Add(time.Minute))}
	s.enter(v1alpha1.PhaseRunning, v1alpha1.ReasonStoppingRunners, lost.Message+"; stopping the runners")
	return rc.After(10 * time.Second), nil
}

// targetLostCondition is TargetReady once it recorded the target lost, else nil.
func targetLostCondition(s *scope) *metav1.Condition {
	c := s.condition(v1alpha1.ConditionTargetReady)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != v1alpha1.ReasonTargetLost {
		return nil
	}
	return c
}

// targetMissing says, as read from reader, what of the run's target is gone: its own namespace
// (gone, going, or by now another's) or one of its workloads; "" while all is there.
func (r *Reconciler) targetMissing(ctx context.Context, reader client.Reader, s *scope) (string, error) {
	if !s.sharedTarget {
		ns := &corev1.Namespace{}
		err := reader.Get(ctx, client.ObjectKey{Name: s.targetNS}, ns)
		switch {
		case apierrors.IsNotFound(err) || (err == nil && !target.OwnedBy(ns, s.run)):
			return lostMessage(fmt.Sprintf("target namespace %s was deleted", s.targetNS)), nil
		case err != nil:
			return "", err
		case !ns.DeletionTimestamp.IsZero():
			return lostMessage(fmt.Sprintf("target namespace %s is being deleted", s.targetNS)), nil
		}
	}
	var list appsv1.DeploymentList
	if err := reader.List(ctx, &list, client.InNamespace(s.targetNS), client.MatchingLabels(target.RunLabels(s.run))); err != nil {
		return "", err
	}
	present := map[string]bool{}
	for i := range list.Items {
		if d := &list.Items[i]; d.DeletionTimestamp.IsZero() && target.OwnedBy(d, s.run) {
			present[d.Name] = true
		}
	}
	var want []string
	if s.desired != nil {
		for _, d := range s.desired.Deployments {
			want = append(want, d.Name)
		}
	}
	for _, name := range want {
		if !present[name] {
			return lostMessage(fmt.Sprintf("target workload %s/%s was deleted", s.targetNS, name)), nil
		}
	}
	if len(want) == 0 && len(present) == 0 { // the Profile went: no names to look for
		return lostMessage(fmt.Sprintf("every target workload in namespace %s was deleted", s.targetNS)), nil
	}
	return "", nil
}

func lostMessage(what string) string {
	return what + " while the load ran, not by this operator; the load measured a target going away. " +
		"Find out who deleted it (kubectl get events -A), keep the target's namespace and workloads alone while a TestRun runs, and run the test again"
}

// withTargetLost adds to c what TargetReady recorded of a target lost mid-run.
func (c collected) withTargetLost(s *scope) collected {
	if lost := targetLostCondition(s); lost != nil {
		c.targetLost = lost.Message
	}
	return c
}
