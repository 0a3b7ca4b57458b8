// Command trace prints, in milliseconds since T0 (a Unix time in ms, the client's clock just
// before `kubectl apply`), when each pod of one TestRun and the TestRun itself changed on the
// way to the first request: pods created, scheduled, given an IP, their containers running or
// ended, Ready; the TestRun's phase and conditions. It watches (no polling) until the TestRun
// has a StartTime or TIMEOUT passes. hack/bench/first-request runs it with TRACE=1.
//
// usage: trace -kubeconfig F -namespace NS -name RUN -t0 MS [-timeout 60s]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/naming"
)

func main() {
	kubeconfig := flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig")
	ns := flag.String("namespace", "", "the TestRun's namespace")
	name := flag.String("name", "", "the TestRun's name")
	t0 := flag.Int64("t0", 0, "Unix ms just before the apply")
	timeout := flag.Duration("timeout", time.Minute, "how long to watch at most")
	flag.Parse()
	if *ns == "" || *name == "" || *t0 == 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*kubeconfig, *ns, *name, *t0, *timeout); err != nil {
		fmt.Fprintln(os.Stderr, "trace:", err)
		os.Exit(1)
	}
}

func run(kubeconfig, ns, name string, t0 int64, timeout time.Duration) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	scheme := clientScheme()
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	pods, err := c.Watch(ctx, &corev1.PodList{}, client.MatchingLabels{naming.LabelTestRun: name})
	if err != nil {
		return err
	}
	defer pods.Stop()
	runs, err := c.Watch(ctx, &v1alpha1.TestRunList{}, client.InNamespace(ns))
	if err != nil {
		return err
	}
	defer runs.Stop()

	t := &tracer{t0: t0, seen: map[string]bool{}}
	for {
		select {
		case <-ctx.Done():
			t.print()
			return fmt.Errorf("TestRun %s/%s had no start within %s", ns, name, timeout)
		case ev, ok := <-pods.ResultChan():
			if !ok {
				return fmt.Errorf("the pod watch ended")
			}
			if pod, isPod := ev.Object.(*corev1.Pod); isPod && ev.Type != watch.Deleted {
				t.pod(pod)
			}
		case ev, ok := <-runs.ResultChan():
			if !ok {
				return fmt.Errorf("the TestRun watch ended")
			}
			if tr, isRun := ev.Object.(*v1alpha1.TestRun); isRun && tr.Name == name {
				if t.run(tr) {
					t.print()
					return nil
				}
			}
		}
	}
}

type mark struct {
	ms   int64
	what string
}

type tracer struct {
	t0    int64
	seen  map[string]bool
	marks []mark
}

// once records what the first time it is seen, at the moment the watch delivered it.
func (t *tracer) once(what string) {
	if t.seen[what] {
		return
	}
	t.seen[what] = true
	t.marks = append(t.marks, mark{time.Now().UnixMilli() - t.t0, what})
}

func (t *tracer) pod(pod *corev1.Pod) {
	who := pod.Labels[naming.LabelRole]
	if i := pod.Labels[naming.LabelRunnerIndex]; i != "" {
		who += "-" + i
	}
	t.once(who + " created")
	for _, c := range pod.Status.Conditions {
		if c.Status == corev1.ConditionTrue && (c.Type == corev1.PodScheduled || c.Type == corev1.PodReady) {
			t.once(fmt.Sprintf("%s %s", who, c.Type))
		}
	}
	if pod.Status.PodIP != "" {
		t.once(who + " has an IP")
	}
	for _, cs := range append(pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses...) {
		switch {
		case cs.State.Running != nil:
			t.once(fmt.Sprintf("%s container %s running", who, cs.Name))
		case cs.State.Terminated != nil:
			t.once(fmt.Sprintf("%s container %s ended (%d)", who, cs.Name, cs.State.Terminated.ExitCode))
		}
	}
}

// run records the TestRun's phase and conditions; true once it started.
func (t *tracer) run(tr *v1alpha1.TestRun) bool {
	t.once("run phase " + string(tr.Status.Phase))
	for _, c := range tr.Status.Conditions {
		t.once(fmt.Sprintf("run %s=%s (%s)", c.Type, c.Status, c.Reason))
	}
	if tr.Status.StartTime != nil {
		t.once("run started")
		return true
	}
	return false
}

func (t *tracer) print() {
	sort.SliceStable(t.marks, func(i, j int) bool { return t.marks[i].ms < t.marks[j].ms })
	for _, m := range t.marks {
		fmt.Printf("%6d ms  %s\n", m.ms, m.what)
	}
}

func clientScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = corev1.AddToScheme(s)
	_ = v1alpha1.AddToScheme(s)
	return s
}
