package drive

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	rc "fleetbench.dev/fleetbench/internal/controller/ctrlkit"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	"fleetbench.dev/fleetbench/internal/controller/testrun/runenv"
	"fleetbench.dev/fleetbench/internal/controller/testrun/runio"
)

// ReconcileStart samples the idle target, then un-pauses every runner at once and records the
// spread of their acknowledgements.
func (r *Stage) ReconcileStart(ctx context.Context, s *decide.Scope) (ctrl.Result, error) {
	if s.Started() {
		return ctrl.Result{}, nil
	}
	if s.Target() == nil {
		err := r.measureBefore(ctx, s)
		if errors.Is(err, runio.ErrPending) {
			return rc.After(runio.SampleLimit), nil // sampled off the worker; its end wakes the run
		}
		ready := s.Condition(v1alpha1.ConditionTargetReady)
		if errors.Is(err, errNotScrapedYet) && ready != nil && s.Now.Before(ready.LastTransitionTime.Add(beforeSampleGrace)) {
			s.Enter(v1alpha1.PhaseStarting, v1alpha1.ReasonWaitingForTargetSample, err.Error()+"; the load starts once the idle target is sampled")
			return rc.After(2 * time.Second), nil
		}
	}

	if result, proceed := r.setupOnce(s); !proceed {
		return result, nil
	}
	acks := r.resumeAll(ctx, s)
	var first, last time.Time
	for i, a := range acks {
		if a.err != nil {
			// Runners that did start are not paused again; the rest are retried shortly.
			msg := fmt.Sprintf("runner %d: %v", i, a.err)
			s.RecordCondition(v1alpha1.ConditionStarted, metav1.ConditionFalse, v1alpha1.ReasonResumeFailed, msg)
			return s.WaitOrFail(s.RunnersReadyDeadline(), time.Second, v1alpha1.PhaseStarting, v1alpha1.ReasonResumeFailed,
				v1alpha1.ReasonStartFailed, "could not start "+msg, "; the runner's k6 REST API did not answer"), nil
		}
		if a.at.IsZero() {
			continue
		}
		if first.IsZero() || a.at.Before(first) {
			first = a.at
		}
		if a.at.After(last) {
			last = a.at
		}
	}
	if first.IsZero() {
		first, last = s.Now, s.Now
	}
	skew := last.Sub(first)
	runenv.StartSkew.Observe(skew.Seconds())
	offsets := make([]string, len(acks))
	for i, a := range acks {
		if !a.at.IsZero() {
			offsets[i] = a.at.Sub(first).String()
		}
	}
	logf.FromContext(ctx).Info("runners started", "first", first, "skew", skew, "acknowledgedAfterFirst", offsets)
	started := metav1.NewTime(first)
	s.Decided.StartTime = &started
	s.Decided.StartSkew = skew.Round(time.Microsecond).String()
	msg := fmt.Sprintf(v1alpha1.MessageStarted, len(s.Runners), skew.Round(time.Microsecond))
	s.RecordCondition(v1alpha1.ConditionStarted, metav1.ConditionTrue, v1alpha1.ReasonStarted, msg)
	s.Enter(v1alpha1.PhaseRunning, v1alpha1.ReasonRunning, msg)
	return ctrl.Result{}, nil
}

type ack struct {
	at  time.Time
	err error
}

// resumeAll un-pauses every runner in parallel; a runner that already ended (started by an
// earlier reconcile whose status write was lost) is left alone.
func (r *Stage) resumeAll(ctx context.Context, s *decide.Scope) []ack {
	acks := make([]ack, len(s.Runners))
	pods := make([]*corev1.Pod, len(s.Runners))
	for i, rs := range s.Runners {
		if !decide.Terminated(rs.Pod) {
			pods[i] = rs.Pod
		}
	}
	// Every runner's connection is opened first; then all Resume calls leave together. The
	// connections are kept for this only: closed once every runner answered.
	ctx, release := r.RunnerAPI.KeepConnections(ctx)
	defer release()
	var warmed sync.WaitGroup
	start := make(chan struct{})
	for _, pod := range pods {
		if pod != nil {
			warmed.Add(1)
		}
	}
	go func() { warmed.Wait(); close(start) }()
	runio.OnRunners(pods, func(i int, pod *corev1.Pod) {
		_ = r.RunnerAPI.Warm(ctx, pod) // a runner that does not answer fails its Resume below
		warmed.Done()
		<-start
		err := r.RunnerAPI.Resume(ctx, pod)
		acks[i] = ack{at: time.Now(), err: err}
	})
	return acks
}
