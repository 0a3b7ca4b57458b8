package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"fleetbench.dev/fleetbench/pkg/naming"
)

// createNamespace makes ns and waits for its default ServiceAccount: without it the
// ServiceAccount admission plugin refuses the Job controller's pods, which then backs off.
func (e *env) createNamespace(ctx context.Context, ns string) error {
	_, err := e.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	for {
		if _, err := e.kube.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{}); err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("no default ServiceAccount in %s: %w", ns, ctx.Err())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// cleanup deletes the TestRuns' namespaces and waits until they and their pods are gone.
func (e *env) cleanup(namespaces []string) error {
	ctx, cancel := context.WithTimeout(context.Background(), e.timeout)
	defer cancel()
	for _, ns := range namespaces {
		if err := e.kube.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	for _, ns := range namespaces {
		for {
			_, err := e.kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				break
			}
			if ctx.Err() != nil {
				return fmt.Errorf("namespace %s still there after %s", ns, e.timeout)
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	// Namespaces can go before the GC has deleted their pods from a kwok node: wait for none.
	for {
		pods, err := e.kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: naming.LabelRole})
		if err == nil && len(pods.Items) == 0 {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("runner pods still there after %s", e.timeout)
		}
		time.Sleep(time.Second)
	}
}

type singleResult struct {
	Scenario            string         `json:"scenario"`
	Runners             int            `json:"runners"`
	Phase               string         `json:"phase"`
	JobsFromCreate      float64        `json:"jobsFromCreateS"`
	ReadyFromCreate     float64        `json:"readyFromCreateS"`
	RunningFromCreate   float64        `json:"runningFromCreateS"`
	JobsFromTargetReady float64        `json:"jobsFromTargetReadyS"`
	ReadyFromTarget     float64        `json:"readyFromTargetReadyS"`
	JobsFromFirstJob    float64        `json:"jobsFromFirstJobS"`
	ReadyFromFirstJob   float64        `json:"readyFromFirstJobS"`
	RunningFromReady    float64        `json:"runningFromAllReadyS"`
	EndToDone           float64        `json:"endToDoneS"`
	EndPhase            string         `json:"endPhase"`
	FinalsAnswered      int            `json:"standinFinals"`
	SkewMs              float64        `json:"standinSkewMs"`
	Resumed             int            `json:"standinResumed"`
	StatusSkew          string         `json:"statusStartSkew"`
	Writes              int            `json:"apiWrites"`
	EventWrites         int            `json:"eventWrites"`
	WritesByResource    map[string]int `json:"writesByResource"`
	Reconciles          float64        `json:"reconciles"`
	CPU                 float64        `json:"managerCPUSeconds"`
	PeakRSSMiB          float64        `json:"managerPeakRSSMiB"`
	RateLimiterWait     string         `json:"rateLimiterWait"`
	StandinCalls        map[string]int `json:"standinCalls"`
	Message             string         `json:"message,omitempty"`
}

func (e *env) rateLimiterWait(before, after metrics) string {
	const name = "rest_client_rate_limiter_duration_seconds"
	if !after.has(name) {
		return "not exposed"
	}
	sum := after.sum(name+"_sum") - before.sum(name+"_sum")
	count := after.sum(name+"_count") - before.sum(name+"_count")
	return fmt.Sprintf("%.3fs total over %.0f requests", sum, count)
}

func (e *env) single() (*singleResult, error) {
	ns := fmt.Sprintf("fbscale-n%d", e.runners)
	name := "scale"
	ctx, cancel := context.WithTimeout(context.Background(), e.timeout+time.Minute)
	defer cancel()
	if err := e.cleanup([]string{ns}); err != nil {
		return nil, err
	}
	if err := e.createNamespace(ctx, ns); err != nil {
		return nil, err
	}
	if err := e.standinReset(); err != nil {
		return nil, fmt.Errorf("stand-in: %w", err)
	}
	before, err := e.scrape()
	if err != nil {
		return nil, fmt.Errorf("manager metrics: %w", err)
	}
	e.resetPeak()
	p0, err := e.readProc()
	if err != nil {
		return nil, err
	}
	offset := e.auditSize()
	t, err := e.track(ctx, ns, name, e.runners)
	if err != nil {
		return nil, err
	}
	t.created = time.Now()
	if _, err := e.dyn.Resource(testRuns).Namespace(ns).Create(ctx, testRun(ns, name, e.runners), metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	logf("created TestRun %s/%s with %d runners", ns, name, e.runners)
	var waitErr error
	select {
	case <-t.done:
	case <-time.After(e.timeout):
		waitErr = fmt.Errorf("TestRun %s/%s did not reach Running within %s", ns, name, e.timeout)
	}
	t.mu.Lock()
	phase := t.phase
	t.mu.Unlock()
	logf("phase %s; holding %s", phase, e.hold)
	time.Sleep(e.hold)
	after, _ := e.scrape()
	p1, _ := e.readProc()
	ss, _ := e.standinStats()
	t.mu.Lock()
	st := t.status
	res := &singleResult{
		Scenario: "single", Runners: e.runners, Phase: t.phase,
		JobsFromCreate: secs(t.created, t.allJobs), ReadyFromCreate: secs(t.created, t.allReady),
		RunningFromCreate: secs(t.created, t.running),
		JobsFromFirstJob:  secs(t.firstJob, t.allJobs), ReadyFromFirstJob: secs(t.firstJob, t.allReady),
		RunningFromReady: secs(t.allReady, t.running),
		SkewMs:           math.Round(ss.SkewMs*1000) / 1000, Resumed: ss.Resumed, StandinCalls: ss.Calls,
		Reconciles:      after.sum("controller_runtime_reconcile_total", `controller="testrun"`) - before.sum("controller_runtime_reconcile_total", `controller="testrun"`),
		CPU:             math.Round((p1.cpu-p0.cpu)*100) / 100,
		PeakRSSMiB:      p1.peakMiB,
		RateLimiterWait: e.rateLimiterWait(before, after),
	}
	if tr := targetReady(st); !tr.IsZero() {
		res.JobsFromTargetReady, res.ReadyFromTarget = secs(tr, t.allJobs), secs(tr, t.allReady)
	} else {
		res.JobsFromTargetReady, res.ReadyFromTarget = -1, -1
	}
	res.StatusSkew, _, _ = unstructured.NestedString(st, "runners", "startSkew")
	res.Message, _, _ = unstructured.NestedString(st, "message")
	t.mu.Unlock()

	// End: every runner ends at once (the stand-in answers the held final envelopes); timed to
	// the TestRun's terminal phase as this process's watch sees it.
	res.EndToDone = -1
	if waitErr == nil {
		ended := time.Now()
		if err := e.standinEnd(); err != nil {
			waitErr = fmt.Errorf("stand-in end: %w", err)
		} else {
			select {
			case <-t.finished:
			case <-time.After(e.timeout):
				waitErr = fmt.Errorf("TestRun %s/%s did not end within %s of its runners' end", ns, name, e.timeout)
			}
			t.mu.Lock()
			res.EndToDone, res.EndPhase = secs(ended, t.terminal), t.phase
			if msg, _, _ := unstructured.NestedString(t.status, "message"); t.phase != "Succeeded" {
				res.Message = msg
			}
			t.mu.Unlock()
			ss, _ := e.standinStats()
			res.FinalsAnswered = ss.Finals
			logf("runners ended; phase %s after %.2fs", res.EndPhase, res.EndToDone)
		}
	}

	// Stop: delete the TestRun, then its namespace; the writes are counted once all is gone.
	_ = e.dyn.Resource(testRuns).Namespace(ns).Delete(context.Background(), name, metav1.DeleteOptions{})
	cleanErr := e.cleanup([]string{ns})
	w, err := e.writes(offset, map[string]bool{ns: true})
	if err == nil {
		res.Writes, res.EventWrites, res.WritesByResource = w[ns].Total, w[ns].Events, w[ns].ByResource
	}
	return res, errors.Join(waitErr, cleanErr, err)
}

type multiResult struct {
	Scenario        string             `json:"scenario"`
	Runs            int                `json:"runs"`
	Runners         int                `json:"runners"`
	Reached         int                `json:"reachedRunning"`
	ToRunning       map[string]float64 `json:"toRunningS"`
	MaxToRunning    float64            `json:"maxToRunningS"`
	ReconcileP99    float64            `json:"reconcileTimeP99S"`
	Reconciles      float64            `json:"reconciles"`
	Writes          int                `json:"apiWrites"`
	CPU             float64            `json:"managerCPUSeconds"`
	PeakRSSMiB      float64            `json:"managerPeakRSSMiB"`
	RateLimiterWait string             `json:"rateLimiterWait"`
	Failed          map[string]string  `json:"failed,omitempty"`
}

func (e *env) multi() (*multiResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), e.timeout+2*time.Minute)
	defer cancel()
	var namespaces []string
	nsSet := map[string]bool{}
	for i := range e.runs {
		ns := fmt.Sprintf("fbscale-m%02d", i)
		namespaces = append(namespaces, ns)
		nsSet[ns] = true
	}
	if err := e.cleanup(namespaces); err != nil {
		return nil, err
	}
	for _, ns := range namespaces {
		if err := e.createNamespace(ctx, ns); err != nil {
			return nil, err
		}
	}
	_ = e.standinReset()
	before, err := e.scrape()
	if err != nil {
		return nil, err
	}
	e.resetPeak()
	p0, _ := e.readProc()
	offset := e.auditSize()
	trackers := make([]*tracker, len(namespaces))
	for i, ns := range namespaces {
		if trackers[i], err = e.track(ctx, ns, "scale", e.runners); err != nil {
			return nil, err
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, len(namespaces))
	for i, ns := range namespaces {
		wg.Go(func() {
			trackers[i].created = time.Now()
			_, errs[i] = e.dyn.Resource(testRuns).Namespace(ns).Create(ctx, testRun(ns, "scale", e.runners), metav1.CreateOptions{})
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	logf("created %d TestRuns of %d runners at once", e.runs, e.runners)
	deadline := time.After(e.timeout)
	res := &multiResult{Scenario: "multi", Runs: e.runs, Runners: e.runners, ToRunning: map[string]float64{}, Failed: map[string]string{}}
	for _, t := range trackers {
		select {
		case <-t.done:
		case <-deadline:
		}
	}
	time.Sleep(e.hold)
	after, _ := e.scrape()
	p1, _ := e.readProc()
	for _, t := range trackers {
		t.mu.Lock()
		if t.phase == "Running" {
			res.Reached++
			s := secs(t.created, t.running)
			res.ToRunning[t.ns] = s
			res.MaxToRunning = math.Max(res.MaxToRunning, s)
		} else {
			msg, _, _ := unstructured.NestedString(t.status, "message")
			res.Failed[t.ns] = t.phase + ": " + msg
		}
		t.mu.Unlock()
	}
	res.ReconcileP99 = math.Round(quantile(before, after, "controller_runtime_reconcile_time_seconds", `controller="testrun"`, 0.99)*1000) / 1000
	res.Reconciles = after.sum("controller_runtime_reconcile_total", `controller="testrun"`) - before.sum("controller_runtime_reconcile_total", `controller="testrun"`)
	res.CPU = math.Round((p1.cpu-p0.cpu)*100) / 100
	res.PeakRSSMiB = p1.peakMiB
	res.RateLimiterWait = e.rateLimiterWait(before, after)
	for _, ns := range namespaces {
		_ = e.dyn.Resource(testRuns).Namespace(ns).Delete(context.Background(), "scale", metav1.DeleteOptions{})
	}
	cleanErr := e.cleanup(namespaces)
	if w, err := e.writes(offset, nsSet); err == nil {
		for _, c := range w {
			res.Writes += c.Total
		}
	}
	var waitErr error
	if res.Reached < e.runs {
		waitErr = fmt.Errorf("%d of %d TestRuns reached Running within %s", res.Reached, e.runs, e.timeout)
	}
	return res, errors.Join(waitErr, cleanErr)
}
