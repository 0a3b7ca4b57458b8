package testrun

import (
	"context"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	"fleetbench.dev/fleetbench/pkg/runners"
	"fleetbench.dev/fleetbench/pkg/target"
)

// load reads what the reconcile decides on: the profile, the target's desired objects and
// pods, the runner Jobs and pods. Everything but the TestRun comes from the cache.
func (r *Reconciler) load(ctx context.Context, s *decide.Scope) error {
	run := s.Run
	switch {
	case run.Status.Profile != nil:
		// Fixed at the first provisioning step: the Profile is not read again.
		s.Profile = target.FromSnapshot(run.Status.Profile)
	case run.Spec.Profile != "":
		profile := &v1alpha1.Profile{}
		err := r.Get(ctx, client.ObjectKey{Name: strings.ToLower(run.Spec.Profile)}, profile)
		switch {
		case err == nil:
			s.LiveProfile = profile
			snap, err := target.Snapshot(profile)
			if err != nil {
				s.SnapshotErr = err
				break
			}
			// Built from the copy status.profile will hold, so this reconcile and every later
			// one size the target alike.
			s.Snapshot, s.Profile = &snap, target.FromSnapshot(&snap)
		case !apierrors.IsNotFound(err):
			return err
		}
	}
	if run.Spec.Target.External == nil {
		s.TargetNS, s.SharedTarget = r.TargetHome(run)
		if s.Profile != nil {
			r.BuildTarget(s)
		}
		var pods corev1.PodList
		if err := r.List(ctx, &pods, client.InNamespace(s.TargetNS), client.MatchingLabels(target.RunLabels(run))); err != nil {
			return err
		}
		s.TargetPods = pods.Items
	}
	if err := r.loadRunners(ctx, s); err != nil {
		return err
	}
	if err := r.LoadBaseline(ctx, s); err != nil {
		return err
	}
	s.Summary = decide.Classify(s.Runners)
	return nil
}

// loadRunners reads the runner Jobs and pods of the TestRun.
func (r *Reconciler) loadRunners(ctx context.Context, s *decide.Scope) error {
	run := s.Run
	n := run.RunnerCount()
	s.Runners = make([]decide.RunnerState, n)
	for i := range s.Runners {
		s.Runners[i].Index = i
	}
	selector := client.MatchingLabels(runners.RunnerLabels(run))
	// A reconcile reads every runner's Job and pod and writes none of them: no deep copies of
	// what a 1,000-runner fleet holds in the cache (the scope must not modify them).
	var jobs batchv1.JobList
	if err := r.List(ctx, &jobs, client.InNamespace(run.Namespace), selector, client.UnsafeDisableDeepCopy); err != nil {
		return err
	}
	for i := range jobs.Items {
		// Labels anyone may write; only the Job this TestRun controls is its runner. A runner
		// replaced (replace.go) has several: the latest replacement is the runner.
		job := &jobs.Items[i]
		if idx, ok := decide.RunnerIndex(job, n); ok && decide.ControlledBy(job, run.UID) {
			if k := decide.ReplacementOf(job); s.Runners[idx].Job == nil || k > s.Runners[idx].Replacement {
				s.Runners[idx].Job, s.Runners[idx].Replacement = job, k
			}
		}
	}
	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.InNamespace(run.Namespace), selector, client.UnsafeDisableDeepCopy); err != nil {
		return err
	}
	for i := range pods.Items {
		pod := &pods.Items[i]
		s.NoteLostPod(pod)
		idx, ok := decide.RunnerIndex(pod, n)
		if !ok || s.Runners[idx].Job == nil || !decide.ControlledBy(pod, s.Runners[idx].Job.UID) {
			continue // a look-alike: never called, never read
		}
		// A Job never retries, so there is one pod per runner; keep the newest if not.
		if cur := s.Runners[idx].Pod; cur == nil || cur.CreationTimestamp.Before(&pod.CreationTimestamp) {
			s.Runners[idx].Pod = pod
		}
	}
	replaces := s.Replaces() && run.Status.StartTime != nil
	for i := range s.Runners {
		if pod := s.Runners[i].Pod; pod != nil {
			s.Runners[i].Deleting = replaces && pod.DeletionTimestamp != nil
			s.Runners[i].Final = r.Finals.Final(pod.UID)
			msg, recheck := r.Pulls.GaveUp(pod, s.Now)
			s.Runners[i].PullGaveUp = msg
			if recheck > 0 && (s.PullRecheck == 0 || recheck < s.PullRecheck) {
				s.PullRecheck = recheck
			}
		}
	}
	return nil
}
