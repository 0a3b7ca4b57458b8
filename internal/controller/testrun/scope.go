package testrun

import (
	"context"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	rc "fleetbench.dev/fleetbench/internal/controller/ctrlkit"
	"fleetbench.dev/fleetbench/pkg/measure"
	"fleetbench.dev/fleetbench/pkg/naming"
	"fleetbench.dev/fleetbench/pkg/runners"
	"fleetbench.dev/fleetbench/pkg/target"
)

// scope is everything one reconcile knows. load() fills the world's part once; phases read it,
// create what is missing, write run.Status and record decisions; finish() acts on them.
type scope struct {
	// run is the TestRun, read live; phases write only its status.
	run *v1alpha1.TestRun
	now time.Time
	// timeouts are spec.timeouts with the operator's defaults applied.
	timeouts Timeouts

	// profile sizes the target: status.profile's snapshot (target.FromSnapshot), or, until
	// reconcileProfile records it, the snapshot of liveProfile; nil while there is neither.
	profile *v1alpha1.Profile
	// liveProfile is the Profile as the cache has it, read only while status.profile is unset;
	// snapshot is its copy for status.profile, snapshotErr why it cannot be copied.
	liveProfile *v1alpha1.Profile
	snapshot    *v1alpha1.ProfileSnapshot
	snapshotErr error
	// targetNS is the provisioned target's namespace; empty for an external target.
	targetNS string
	// sharedTarget: targetNS holds other runs' targets too (Options.TargetNamespace).
	sharedTarget bool
	// desired are the target's objects, built once; nil without a profile or for an external
	// target. desiredErr says why they cannot be built.
	desired    *target.Objects
	desiredErr error
	// script is the script's text once reconcileScript found it; empty after the start.
	script string
	// targetPods are the target's pods as the cache has them, this run's only.
	targetPods []corev1.Pod
	// runners are indexed by runner number; summary classifies them once.
	runners []runnerState
	summary runnerSummary
	// pullRecheck is when a runner's failing image pull is judged again (pullFailures).
	pullRecheck time.Duration
	// lostPods are the lost runners' pods status.gaps names, while they exist (replace.go);
	// replaceRecheck is when a replacement waiting on one is looked at again.
	lostPods       map[string]*corev1.Pod
	replaceRecheck time.Duration

	// live is the runners' results so far, read at most once per reconcile (liveEnvelopes).
	live struct {
		read bool
		envs []measure.Envelope
		err  error
		at   time.Time // when the read began; zero: none this reconcile
	}

	// baseline is what load found of spec.baseline while it is not pinned; nil otherwise.
	baseline *baselineLookup

	// failure, once recorded by a phase, ends the run Failed in finish().
	failure *failure
	// stop, once recorded, has finish() stop every runner still running.
	stop *stopDecision
	// d is what this reconcile decided about the run's status; composeStatus applies it.
	d decision
}

// stopDecision is why the runners still running must stop, and whether the Jobs of those that
// did not stop in time are deleted.
type stopDecision struct {
	why        string
	deleteJobs bool
}

// fail records that the run ends Failed; finish() acts on it.
func (s *scope) fail(reason, message string) { s.failure = &failure{reason, message} }

func (s *scope) started() bool {
	return s.conditionTrue(v1alpha1.ConditionStarted)
}

// provisioningDeadline bounds the waits for the profile, the target and the script; from
// Kueue's admission for a queued run (admittedAt).
func (s *scope) provisioningDeadline() time.Time {
	return s.admittedAt().Add(s.timeouts.Provisioning)
}

// runnersReadyDeadline counts from when the target became Ready (creation for an external one).
func (s *scope) runnersReadyDeadline() time.Time {
	from := s.admittedAt()
	if c := s.condition(v1alpha1.ConditionTargetReady); c != nil && c.Status == metav1.ConditionTrue {
		from = c.LastTransitionTime.Time
	}
	return from.Add(s.timeouts.RunnersReady)
}

// runDeadline is when the load must have ended; zero before the start.
func (s *scope) runDeadline() time.Time {
	if s.startTime() == nil {
		return time.Time{}
	}
	return s.startTime().Add(runLength(s.run, s.timeouts))
}

// runLength is how long the load may run: spec.timeouts.run, else its expected length and a
// grace, else the bound for a load only the script knows.
func runLength(run *v1alpha1.TestRun, t Timeouts) time.Duration {
	if run.Spec.Timeouts != nil && run.Spec.Timeouts.Run != "" {
		return rc.Timeout(run.Spec.Timeouts.Run, t.RunUnknown)
	}
	if expected := runners.ExpectedDuration(&run.Spec); expected > 0 {
		return expected + t.RunGrace
	}
	return t.RunUnknown
}

// resolveTimeouts applies the operator's defaults to spec.timeouts, once per reconcile.
func resolveTimeouts(run *v1alpha1.TestRun, defaults Timeouts) Timeouts {
	spec := v1alpha1.TimeoutsSpec{}
	if run.Spec.Timeouts != nil {
		spec = *run.Spec.Timeouts
	}
	t := defaults
	t.Provisioning = rc.Timeout(spec.Provisioning, defaults.Provisioning)
	t.RunnersReady = rc.Timeout(spec.RunnersReady, defaults.RunnersReady)
	t.Collection = rc.Timeout(spec.Collection, defaults.Collection)
	return t
}

// load reads what the reconcile decides on: the profile, the target's desired objects and
// pods, the runner Jobs and pods. Everything but the TestRun comes from the cache.
func (r *Reconciler) load(ctx context.Context, s *scope) error {
	run := s.run
	switch {
	case run.Status.Profile != nil:
		// Fixed at the first provisioning step: the Profile is not read again.
		s.profile = target.FromSnapshot(run.Status.Profile)
	case run.Spec.Profile != "":
		profile := &v1alpha1.Profile{}
		err := r.Get(ctx, client.ObjectKey{Name: strings.ToLower(run.Spec.Profile)}, profile)
		switch {
		case err == nil:
			s.liveProfile = profile
			snap, err := target.Snapshot(profile)
			if err != nil {
				s.snapshotErr = err
				break
			}
			// Built from the copy status.profile will hold, so this reconcile and every later
			// one size the target alike.
			s.snapshot, s.profile = &snap, target.FromSnapshot(&snap)
		case !apierrors.IsNotFound(err):
			return err
		}
	}
	if run.Spec.Target.External == nil {
		s.targetNS, s.sharedTarget = r.targetHome(run)
		if s.profile != nil {
			s.desired, s.desiredErr = target.Build(run, &s.profile.Spec, s.targetNS, r.targetOptions(s.sharedTarget))
		}
		var pods corev1.PodList
		if err := r.List(ctx, &pods, client.InNamespace(s.targetNS), client.MatchingLabels(target.RunLabels(run))); err != nil {
			return err
		}
		s.targetPods = pods.Items
	}
	if err := r.loadRunners(ctx, s); err != nil {
		return err
	}
	if err := r.loadBaseline(ctx, s); err != nil {
		return err
	}
	s.summary = classify(s.runners)
	return nil
}

// loadRunners reads the runner Jobs and pods of the TestRun.
func (r *Reconciler) loadRunners(ctx context.Context, s *scope) error {
	run := s.run
	n := run.RunnerCount()
	s.runners = make([]runnerState, n)
	for i := range s.runners {
		s.runners[i].index = i
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
		if idx, ok := runnerIndex(job, n); ok && controlledBy(job, run.UID) {
			if k := replacementOf(job); s.runners[idx].job == nil || k > s.runners[idx].replacement {
				s.runners[idx].job, s.runners[idx].replacement = job, k
			}
		}
	}
	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.InNamespace(run.Namespace), selector, client.UnsafeDisableDeepCopy); err != nil {
		return err
	}
	for i := range pods.Items {
		pod := &pods.Items[i]
		s.noteLostPod(pod)
		idx, ok := runnerIndex(pod, n)
		if !ok || s.runners[idx].job == nil || !controlledBy(pod, s.runners[idx].job.UID) {
			continue // a look-alike: never called, never read
		}
		// A Job never retries, so there is one pod per runner; keep the newest if not.
		if cur := s.runners[idx].pod; cur == nil || cur.CreationTimestamp.Before(&pod.CreationTimestamp) {
			s.runners[idx].pod = pod
		}
	}
	replaces := s.replaces() && run.Status.StartTime != nil
	for i := range s.runners {
		if pod := s.runners[i].pod; pod != nil {
			s.runners[i].deleting = replaces && pod.DeletionTimestamp != nil
			s.runners[i].final = r.finals.final(pod.UID)
			msg, recheck := r.pulls.gaveUp(pod, s.now)
			s.runners[i].pullGaveUp = msg
			if recheck > 0 && (s.pullRecheck == 0 || recheck < s.pullRecheck) {
				s.pullRecheck = recheck
			}
		}
	}
	return nil
}

// readUnseen reads obj from the API server when CreateOrGet left it as built (the name exists,
// the cache does not show it): a Job without fleetbench's labels is not cached, and may be a
// tenant's under the name of a run's child.
func (r *Reconciler) readUnseen(ctx context.Context, obj client.Object) error {
	if obj.GetUID() != "" {
		return nil
	}
	return client.IgnoreNotFound(r.apiReader.Get(ctx, client.ObjectKeyFromObject(obj), obj))
}

// controlledBy says whether o's controller owner reference names the object with uid: how a
// runner's Job is told from a look-alike carrying the same labels (a tenant may create any pod
// or Job with fleetbench's labels in its namespace, and make it the newest).
func controlledBy(o metav1.Object, uid types.UID) bool {
	ref := metav1.GetControllerOfNoCopy(o)
	return ref != nil && uid != "" && ref.UID == uid
}

// controls says whether obj, as CreateOrGet left it, is controlled by run: as the cache has it,
// or, when the cache does not hold it (no fleetbench label, or a create a moment ago), as the
// API server has it. Gone counts as controlled: the next reconcile makes it.
func (r *Reconciler) controls(ctx context.Context, run *v1alpha1.TestRun, obj client.Object) (bool, error) {
	if obj.GetUID() == "" {
		err := r.apiReader.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
	}
	return controlledBy(obj, run.UID), nil
}

func runnerIndex(o metav1.Object, n int) (int, bool) {
	idx, err := strconv.Atoi(o.GetLabels()[naming.LabelRunnerIndex])
	return idx, err == nil && idx >= 0 && idx < n
}

func (r *Reconciler) targetOptions(shared bool) target.Options {
	return target.Options{PodLevelResources: r.PodLevelResources && !r.podLevelDropped.Load(), SharedNamespace: shared}
}
