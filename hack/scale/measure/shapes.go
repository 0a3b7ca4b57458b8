package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"fleetbench.dev/fleetbench/pkg/naming"
)

// shapeResult times the control plane alone making N runner-like pods Ready, without the
// operator, in one of three shapes: the operator's (N Jobs of one pod), one Indexed Job of N
// completions, or N bare pods. It answers whether the Job controller is the bound and what
// another shape would gain.
type shapeResult struct {
	Scenario string `json:"scenario"`
	Shape    string `json:"shape"`
	Runners  int    `json:"runners"`
	// CreatedS is the client's creates (N, 1 or N requests) done; ReadyS all pods Ready; both
	// from the first create.
	CreatedS float64 `json:"createdS"`
	ReadyS   float64 `json:"readyS"`
	// Writes is the client's write requests: what the operator would send in this shape.
	Writes int    `json:"clientWrites"`
	Error  string `json:"error,omitempty"`
}

// shapeCreators is the operator's jobCreators: creates in flight.
const shapeCreators = 16

func (e *env) shapes() ([]shapeResult, error) {
	rest, err := clientcmd.BuildConfigFromFlags("", e.kubeconfig)
	if err != nil {
		return nil, err
	}
	// The manager's own client limits (cmd/manager: --kube-api-qps 200, --kube-api-burst 400).
	rest.QPS, rest.Burst = 200, 400
	client := kubernetes.NewForConfigOrDie(rest)
	var out []shapeResult
	for _, shape := range []string{"jobs", "indexed", "pods"} {
		r := e.shape(client, shape)
		logf("shape %s, %d pods: created %.2fs, Ready %.2fs, %d writes %s", shape, e.runners, r.CreatedS, r.ReadyS, r.Writes, r.Error)
		out = append(out, r)
		if r.Error != "" {
			return out, fmt.Errorf("shape %s: %s", shape, r.Error)
		}
	}
	return out, nil
}

func (e *env) shape(client kubernetes.Interface, shape string) shapeResult {
	res := shapeResult{Scenario: "shape", Shape: shape, Runners: e.runners, CreatedS: -1, ReadyS: -1}
	ns := "fbscale-shape-" + shape
	ctx, cancel := context.WithTimeout(context.Background(), e.timeout+time.Minute)
	defer cancel()
	fail := func(err error) shapeResult { res.Error = err.Error(); return res }
	if err := e.cleanup([]string{ns}); err != nil {
		return fail(err)
	}
	if err := e.createNamespace(ctx, ns); err != nil {
		return fail(err)
	}
	defer func() { _ = e.cleanup([]string{ns}) }()

	// Pods Ready, counted from a watch started before the first create.
	sel := naming.LabelRole + "=" + naming.RoleRunner
	pw, err := resumable(ctx, func(rv string) (watch.Interface, error) {
		return e.kube.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{LabelSelector: sel, ResourceVersion: rv})
	})
	if err != nil {
		return fail(err)
	}
	allReady := make(chan time.Time, 1)
	go func() {
		ready := map[string]bool{}
		for ev := range pw {
			pod, ok := ev.Object.(*corev1.Pod)
			if !ok || ev.Type == watch.Deleted {
				continue
			}
			for _, c := range pod.Status.Conditions {
				if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
					ready[pod.Name] = true
				}
			}
			if len(ready) == e.runners {
				allReady <- time.Now()
				return
			}
		}
	}()

	labels := map[string]string{naming.LabelRole: naming.RoleRunner}
	podSpec := corev1.PodSpec{
		RestartPolicy:                 corev1.RestartPolicyNever,
		TerminationGracePeriodSeconds: ptr.To[int64](0),
		Containers:                    []corev1.Container{{Name: "k6", Image: "fleetbench/runner:dev"}},
	}
	job := func(name string, n int32, indexed bool) *batchv1.Job {
		j := &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
			Spec: batchv1.JobSpec{
				Parallelism: ptr.To(n), Completions: ptr.To(n), BackoffLimit: ptr.To[int32](0),
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: podSpec},
			},
		}
		if indexed {
			j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
		}
		return j
	}
	start := time.Now()
	switch shape {
	case "indexed":
		_, err = client.BatchV1().Jobs(ns).Create(ctx, job("runners", int32(e.runners), true), metav1.CreateOptions{})
		res.Writes = 1
	default:
		slots := make(chan struct{}, shapeCreators)
		var wg sync.WaitGroup
		var mu sync.Mutex
		for i := range e.runners {
			slots <- struct{}{}
			wg.Go(func() {
				defer func() { <-slots }()
				name := fmt.Sprintf("runner-%d", i)
				var cerr error
				if shape == "jobs" {
					_, cerr = client.BatchV1().Jobs(ns).Create(ctx, job(name, 1, false), metav1.CreateOptions{})
				} else {
					_, cerr = client.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: podSpec}, metav1.CreateOptions{})
				}
				mu.Lock()
				res.Writes++
				if cerr != nil && err == nil {
					err = cerr
				}
				mu.Unlock()
			})
		}
		wg.Wait()
	}
	if err != nil {
		return fail(err)
	}
	res.CreatedS = secs(start, time.Now())
	select {
	case at := <-allReady:
		res.ReadyS = secs(start, at)
	case <-time.After(e.timeout):
		return fail(fmt.Errorf("%d pods not all Ready within %s", e.runners, e.timeout))
	}
	return res
}
