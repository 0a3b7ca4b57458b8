package main

import (
	"context"
	"math"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"fleetbench.dev/fleetbench/pkg/naming"
)

// testRun is the benchmark's TestRun: an external target (nothing provisioned) and a script
// whose load only the script knows, so the run stays Running until it is deleted.
func testRun(ns, name string, runners int) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "fleetbench.dev/v1alpha1",
		"kind":       "TestRun",
		"metadata":   map[string]any{"name": name, "namespace": ns},
		"spec": map[string]any{
			"target":      map[string]any{"external": map[string]any{"url": "http://127.0.0.1:1/"}},
			"parallelism": int64(runners),
			"script": map[string]any{"inline": "export const options = { vus: 1, duration: '30m' };\n" +
				"export default function () {}\n"},
		},
	}}
}

// tracker follows one TestRun's runner Jobs, pods and phase through watches, timing each
// milestone on this process's clock.
type tracker struct {
	ns, name string
	n        int
	created  time.Time

	mu                          sync.Mutex
	jobs, ready                 map[string]bool
	firstJob, allJobs, allReady time.Time
	running                     time.Time
	phase                       string
	status                      map[string]any
	done                        chan struct{}
	// terminal is when the phase was first Succeeded or Failed; finished closes then.
	terminal time.Time
	finished chan struct{}
}

func (e *env) track(ctx context.Context, ns, name string, n int) (*tracker, error) {
	t := &tracker{ns: ns, name: name, n: n, jobs: map[string]bool{}, ready: map[string]bool{}, done: make(chan struct{}), finished: make(chan struct{})}
	sel := naming.LabelRole + "=" + naming.RoleRunner
	jobs := func(rv string) (watch.Interface, error) {
		return e.kube.BatchV1().Jobs(ns).Watch(ctx, metav1.ListOptions{LabelSelector: sel, ResourceVersion: rv})
	}
	pods := func(rv string) (watch.Interface, error) {
		return e.kube.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{LabelSelector: sel, ResourceVersion: rv})
	}
	runs := func(rv string) (watch.Interface, error) {
		return e.dyn.Resource(testRuns).Namespace(ns).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name, ResourceVersion: rv})
	}
	jw, err := resumable(ctx, jobs)
	if err != nil {
		return nil, err
	}
	pw, err := resumable(ctx, pods)
	if err != nil {
		return nil, err
	}
	tw, err := resumable(ctx, runs)
	if err != nil {
		return nil, err
	}
	go func() {
		for ev := range jw {
			if ev.Type != watch.Added {
				continue
			}
			now := time.Now()
			o, ok := ev.Object.(metav1.Object)
			if !ok {
				continue
			}
			t.mu.Lock()
			if t.firstJob.IsZero() {
				t.firstJob = now
			}
			t.jobs[o.GetName()] = true
			if len(t.jobs) == t.n && t.allJobs.IsZero() {
				t.allJobs = now
			}
			t.mu.Unlock()
		}
	}()
	go func() {
		for ev := range pw {
			now := time.Now()
			pod, ok := ev.Object.(*corev1.Pod)
			if !ok || ev.Type == watch.Deleted {
				continue
			}
			ready := false
			for _, c := range pod.Status.Conditions {
				if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
					ready = true
				}
			}
			t.mu.Lock()
			if ready {
				t.ready[pod.Name] = true
			}
			if len(t.ready) == t.n && t.allReady.IsZero() {
				t.allReady = now
			}
			t.mu.Unlock()
		}
	}()
	go func() {
		for ev := range tw {
			now := time.Now()
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				continue
			}
			phase, _, _ := unstructured.NestedString(u.Object, "status", "phase")
			st, _, _ := unstructured.NestedMap(u.Object, "status")
			t.mu.Lock()
			t.phase, t.status = phase, st
			if phase == "Running" && t.running.IsZero() {
				t.running = now
				close(t.done)
			}
			if (phase == "Failed" || phase == "Succeeded") && t.running.IsZero() {
				t.running = now
				close(t.done)
			}
			if (phase == "Failed" || phase == "Succeeded") && t.terminal.IsZero() {
				t.terminal = now
				close(t.finished)
			}
			t.mu.Unlock()
		}
	}()
	return t, nil
}

// resumable watches from now on and, when the API server ends the watch (a slow consumer's
// watch is closed), watches again from the last resource version seen, so no event is lost.
func resumable(ctx context.Context, start func(rv string) (watch.Interface, error)) (<-chan watch.Event, error) {
	w, err := start("")
	if err != nil {
		return nil, err
	}
	out := make(chan watch.Event, 1024)
	go func() {
		defer close(out)
		rv := ""
		for {
			for ev := range w.ResultChan() {
				if ev.Type == watch.Error {
					// e.g. 410 Gone: resume from now; events in between are lost (and logged).
					if ctx.Err() == nil {
						logf("watch error: %v", ev.Object)
					}
					rv = ""
					continue
				}
				if o, ok := ev.Object.(metav1.Object); ok {
					rv = o.GetResourceVersion()
				}
				out <- ev
			}
			if ctx.Err() != nil {
				return
			}
			for {
				if w, err = start(rv); err == nil {
					break
				}
				if ctx.Err() != nil {
					return
				}
				logf("watch again: %v", err)
				time.Sleep(200 * time.Millisecond)
			}
		}
	}()
	return out, nil
}

func secs(from, to time.Time) float64 {
	if from.IsZero() || to.IsZero() {
		return -1
	}
	return math.Round(to.Sub(from).Seconds()*1000) / 1000
}

// targetReady is the TestRun's TargetReady condition's lastTransitionTime (1 s resolution).
func targetReady(st map[string]any) time.Time {
	conds, _, _ := unstructured.NestedSlice(st, "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "TargetReady" && m["status"] == "True" {
			ts, _ := m["lastTransitionTime"].(string)
			t, _ := time.Parse(time.RFC3339, ts)
			return t
		}
	}
	return time.Time{}
}
