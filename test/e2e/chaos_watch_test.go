//go:build e2e && chaos

package e2e

import (
	"slices"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/naming"
	"fleetbench.dev/fleetbench/pkg/runners"
)

// runWatch records, every 50 ms, what a fault could make the operator do twice: each runner
// Job and pod ever seen (by UID: a Job deleted and made again has a new one) and each start
// time. It polls rather than watches: a watch ends with the API server it is cut from, and
// reads failing while the API server restarts are simply skipped.
type runWatch struct {
	e   *env
	run *v1alpha1.TestRun

	mu     sync.Mutex
	phase  v1alpha1.TestRunPhase
	phases []v1alpha1.TestRunPhase // in the order first seen
	// targetReady: every target Deployment has a Ready pod; started: status.startTime is set.
	targetReady, started bool
	startTimes           map[time.Time]bool
	jobs, pods           map[types.UID]bool
	stop                 chan struct{}
	done                 chan struct{}
	// afterEnd undoes a fault once the run has ended (a stopped kubelet started again).
	afterEnd func()
	// final is the run as first seen Succeeded or Failed: its TTL may delete it before a
	// fault's injector (which waits for a new manager) hands over.
	final *v1alpha1.TestRun
}

func (e *env) watchRun(run *v1alpha1.TestRun) *runWatch {
	w := &runWatch{e: e, run: run, startTimes: map[time.Time]bool{}, jobs: map[types.UID]bool{}, pods: map[types.UID]bool{},
		stop: make(chan struct{}), done: make(chan struct{})}
	go w.loop()
	return w
}

func (w *runWatch) loop() {
	defer close(w.done)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		w.poll()
		select {
		case <-w.stop:
			return
		case <-w.e.ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (w *runWatch) poll() {
	ctx, labels := w.e.ctx, client.MatchingLabels(runners.RunnerLabels(w.run))
	got := &v1alpha1.TestRun{}
	errRun := w.e.c.Get(ctx, client.ObjectKeyFromObject(w.run), got)
	var jobs batchv1.JobList
	errJobs := w.e.c.List(ctx, &jobs, client.InNamespace(w.run.Namespace), labels)
	var pods corev1.PodList
	errPods := w.e.c.List(ctx, &pods, client.InNamespace(w.run.Namespace), labels)
	var deployments appsv1.DeploymentList
	errTarget := w.e.c.List(ctx, &deployments, client.InNamespace(naming.TargetNamespace(w.run.Namespace, w.run.Name)))
	w.mu.Lock()
	defer w.mu.Unlock()
	if errTarget == nil && len(deployments.Items) > 0 {
		w.targetReady = !slices.ContainsFunc(deployments.Items, func(d appsv1.Deployment) bool { return d.Status.ReadyReplicas < 1 })
	}
	if errRun == nil {
		w.started = got.Status.StartTime != nil
		if got.Status.Phase != w.phase {
			w.phase = got.Status.Phase
			w.phases = append(w.phases, got.Status.Phase)
		}
		if st := got.Status.StartTime; st != nil {
			w.startTimes[st.Time] = true
		}
		if w.final == nil && (got.Status.Phase == v1alpha1.PhaseSucceeded || got.Status.Phase == v1alpha1.PhaseFailed) {
			w.final = got.DeepCopy()
		}
	}
	if errJobs == nil {
		for _, j := range jobs.Items {
			if j.Labels[naming.LabelReplacement] != "" {
				continue // a lost runner's replacement: the segment watch (chaos_replace_test.go) counts those
			}
			w.jobs[j.UID] = true
		}
	}
	if errPods == nil {
		for _, p := range pods.Items {
			if p.Labels[naming.LabelReplacement] != "" {
				continue
			}
			w.pods[p.UID] = true
		}
	}
}

// waitFinal waits up to timeout for the run's end and returns it as first seen ended.
func (w *runWatch) waitFinal(t *testing.T, timeout time.Duration) *v1alpha1.TestRun {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		w.mu.Lock()
		final := w.final
		w.mu.Unlock()
		if final != nil {
			return final
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("TestRun %s did not end within %s; last seen %s", w.run.Name, timeout, w.current())
	return nil
}

// end stops the polling after one last look.
func (w *runWatch) end() {
	close(w.stop)
	<-w.done
	w.poll()
}

// current is the phase last seen.
func (w *runWatch) current() v1alpha1.TestRunPhase {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.phase
}

// waitFor waits up to 3 minutes until the run is in phase; a run that ends first, or passes
// the phase unseen, fails the test: the fault would miss its moment.
func (w *runWatch) waitFor(t *testing.T, phase v1alpha1.TestRunPhase) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		switch now := w.current(); {
		case now == phase:
			return
		case now == v1alpha1.PhaseSucceeded || now == v1alpha1.PhaseFailed || (now != "" && phaseOrder[now] > phaseOrder[phase]):
			t.Fatalf("the run went past %s unseen (phases seen: %v)", phase, w.seenPhases())
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the run did not reach %s in 3 minutes (phases seen: %v)", phase, w.seenPhases())
}

// waitForTheStart waits up to 3 minutes for the moment between the target's readiness and the
// load's start: phase Starting, or the target Ready with no start time yet. Runners are made
// while the target starts, so the run often passes from Provisioning to Running in one status
// write; then this moment is the manager's start, in flight.
func (w *runWatch) waitForTheStart(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		w.mu.Lock()
		phase, ready, started := w.phase, w.targetReady, w.started
		w.mu.Unlock()
		switch {
		case phase == v1alpha1.PhaseStarting || (ready && !started):
			return
		case started || phaseOrder[phase] > phaseOrder[v1alpha1.PhaseStarting]:
			t.Fatalf("the load started before the moment was seen (phases seen: %v)", w.seenPhases())
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("the target did not get Ready in 3 minutes (phases seen: %v)", w.seenPhases())
}

var phaseOrder = map[v1alpha1.TestRunPhase]int{
	v1alpha1.PhasePending: 1, v1alpha1.PhaseProvisioning: 2, v1alpha1.PhaseStarting: 3, v1alpha1.PhaseRunning: 4,
	v1alpha1.PhaseCollecting: 5, v1alpha1.PhaseSucceeded: 6, v1alpha1.PhaseFailed: 6,
}

func (w *runWatch) seenPhases() []v1alpha1.TestRunPhase {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]v1alpha1.TestRunPhase(nil), w.phases...)
}

// duplicates counts runner Jobs made beyond one per runner, and second starts: start times
// beyond the first and runner pods beyond one per runner (a pod made again starts k6 again).
func (w *runWatch) duplicates(parallelism int) (jobs, starts int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	jobs = max(0, len(w.jobs)-parallelism)
	starts = max(0, len(w.startTimes)-1) + max(0, len(w.pods)-parallelism)
	return jobs, starts
}
