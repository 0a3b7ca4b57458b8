//go:build e2e

// Package e2e runs TestRuns to completion on a real cluster with fleetbench installed
// (hack/e2e/run.sh: local cluster, images, helm install) and checks their status against
// what the target really served. Behind the e2e build tag: `go test ./...` never runs it.
//
//	KUBECONFIG=bin/cluster/kubeconfig go test -tags e2e ./test/e2e/ -count=1 -v
package e2e

import (
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/config"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/yaml"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/naming"
)

// managerNamespace is where hack/e2e/install.sh installs the chart.
const managerNamespace = "fleetbench-system"

// env is the cluster the tests run against.
type env struct {
	c   client.Client
	cs  *kubernetes.Clientset
	ctx context.Context
}

func newEnv(t *testing.T) *env {
	t.Helper()
	cfg, err := config.GetConfig()
	if err != nil {
		t.Fatalf("no cluster: %v (set KUBECONFIG; hack/e2e/run.sh does all of it)", err)
	}
	return newEnvFor(t, cfg)
}

// newEnvFor is the env of the cluster cfg reaches.
func newEnvFor(t *testing.T, cfg *rest.Config) *env {
	t.Helper()
	logf.SetLogger(logr.Discard())
	cfg.Timeout = 30 * time.Second
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Not t.Context(): that is cancelled just before the test's Cleanup functions run, so every
	// cleanup call made with it failed and left cluster-scoped Profiles and node labels behind
	// (hidden while make e2e removed the CRDs afterwards; a kept release showed them). Each
	// request has cfg.Timeout and each wait its own deadline.
	return &env{c: c, cs: cs, ctx: context.WithoutCancel(t.Context())}
}

// namespace makes a fresh namespace for one test and deletes it (and so its TestRuns, whose
// finalizer removes their target namespaces) when the test ends.
func (e *env) namespace(t *testing.T, name string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"fleetbench.dev/e2e": "true"}}}
	// A namespace left by a crashed run is deleted first.
	if err := e.c.Delete(e.ctx, ns); err == nil || !apierrors.IsNotFound(err) {
		e.waitGone(t, ns, 2*time.Minute)
	}
	ns = &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"fleetbench.dev/e2e": "true"}}}
	if err := e.c.Create(e.ctx, ns); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	// Default ServiceAccount: pods created before it exists are refused.
	e.eventually(t, "default ServiceAccount in "+name, 30*time.Second, func() (bool, string) {
		err := e.c.Get(e.ctx, client.ObjectKey{Namespace: name, Name: "default"}, &corev1.ServiceAccount{})
		return err == nil, fmt.Sprint(err)
	})
	t.Cleanup(func() {
		if os.Getenv("E2E_KEEP") != "" {
			t.Logf("E2E_KEEP set: keeping namespace %s", name)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		// TestRuns first, so their finalizer deletes the target namespaces, then the namespace.
		_ = e.c.DeleteAllOf(ctx, &v1alpha1.TestRun{}, client.InNamespace(name))
		_ = e.c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	})
	return name
}

func (e *env) waitGone(t *testing.T, obj client.Object, timeout time.Duration) {
	t.Helper()
	e.eventually(t, fmt.Sprintf("%T %s gone", obj, obj.GetName()), timeout, func() (bool, string) {
		err := e.c.Get(e.ctx, client.ObjectKeyFromObject(obj), obj)
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
}

// eventually polls cond once a second until it holds or timeout passes.
func (e *env) eventually(t *testing.T, what string, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	last := ""
	for {
		ok, state := cond()
		if ok {
			return
		}
		last = state
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s; last state: %s", timeout, what, last)
		}
		select {
		case <-e.ctx.Done():
			t.Fatalf("waiting for %s: %v", what, e.ctx.Err())
		case <-time.After(time.Second):
		}
	}
}

// waitFinished waits until the TestRun is Succeeded or Failed, logging each phase change,
// and returns it with how long it took from creation.
func (e *env) waitFinished(t *testing.T, run *v1alpha1.TestRun, timeout time.Duration) (*v1alpha1.TestRun, time.Duration) {
	t.Helper()
	start := time.Now()
	got := &v1alpha1.TestRun{}
	lastPhase := ""
	e.eventually(t, "TestRun "+run.Name+" to finish", timeout, func() (bool, string) {
		if err := e.c.Get(e.ctx, client.ObjectKeyFromObject(run), got); err != nil {
			return false, err.Error()
		}
		p := fmt.Sprintf("%s/%s", got.Status.Phase, got.Status.Reason)
		if p != lastPhase {
			t.Logf("%6.1fs  %s: %s", time.Since(start).Seconds(), p, got.Status.Message)
			lastPhase = p
		}
		return got.Status.Phase == v1alpha1.PhaseSucceeded || got.Status.Phase == v1alpha1.PhaseFailed, p + ": " + got.Status.Message
	})
	return got, time.Since(start)
}

// run creates the TestRun, dumps what a failure needs to be understood, and waits for it to
// finish.
func (e *env) run(t *testing.T, run *v1alpha1.TestRun, timeout time.Duration) *v1alpha1.TestRun {
	t.Helper()
	if err := e.c.Create(e.ctx, run); err != nil {
		t.Fatal(err)
	}
	e.dumpOnFailure(t, client.ObjectKeyFromObject(run), naming.TargetNamespace(run.Namespace, run.Name))
	got, took := e.waitFinished(t, run, timeout)
	t.Logf("finished %s/%s verdict %s in %s: %s", got.Status.Phase, got.Status.Reason, got.Status.Verdict, took.Round(time.Second), got.Status.Message)
	return got
}

// requirePassed stops the test unless the run Succeeded with verdict PASSED.
func requirePassed(t *testing.T, got *v1alpha1.TestRun) {
	t.Helper()
	if got.Status.Phase == v1alpha1.PhaseSucceeded && got.Status.Verdict == v1alpha1.VerdictPassed {
		return
	}
	if r := got.Status.Results; r != nil && r.Iterations != nil && r.Checks != nil {
		t.Logf("iterations %+v checks %+v thresholds %+v", *r.Iterations, *r.Checks, r.Thresholds)
	}
	t.Fatalf("want Succeeded/PASSED")
}

// dumpOnFailure prints, if the test failed, the TestRun as YAML, the events of its
// namespace and of its target namespace, and the tail of the manager's log.
func (e *env) dumpOnFailure(t *testing.T, key client.ObjectKey, targetNS string) {
	t.Helper()
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		// CI shows a failure's tail: the manager's log and the events first, the run's own
		// status last, so the tail says where the run stood.
		var b strings.Builder
		b.WriteString("---- manager log tail ----\n")
		b.WriteString(e.managerLogTail(ctx, 80))
		for _, ns := range []string{key.Namespace, targetNS} {
			evs, err := e.cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				fmt.Fprintf(&b, "events in %s: %v\n", ns, err)
				continue
			}
			fmt.Fprintf(&b, "---- events in %s ----\n", ns)
			for _, ev := range evs.Items {
				at := ev.LastTimestamp.Time
				if at.IsZero() {
					at = ev.EventTime.Time
				}
				fmt.Fprintf(&b, "%s %-7s %-24s %s/%s: %s\n", at.Format("15:04:05"), ev.Type, ev.Reason,
					strings.ToLower(ev.InvolvedObject.Kind), ev.InvolvedObject.Name, ev.Message)
			}
		}
		b.WriteString(e.runnerLogTails(ctx, key))
		run := &v1alpha1.TestRun{}
		if err := e.c.Get(ctx, key, run); err != nil {
			fmt.Fprintf(&b, "TestRun %s: %v\n", key, err)
		} else {
			run.ManagedFields = nil
			y, _ := yaml.Marshal(run.Status)
			fmt.Fprintf(&b, "---- TestRun %s status ----\n%s", key, y)
		}
		t.Log("\n" + b.String())
	})
}

func (e *env) managerLogTail(ctx context.Context, lines int64) string {
	pods, err := e.cs.CoreV1().Pods(managerNamespace).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/component=manager"})
	if err != nil || len(pods.Items) == 0 {
		return fmt.Sprintf("no manager pod: %v\n", err)
	}
	var b strings.Builder
	for _, p := range pods.Items {
		stream, err := e.cs.CoreV1().Pods(managerNamespace).GetLogs(p.Name, &corev1.PodLogOptions{TailLines: &lines}).Stream(ctx)
		if err != nil {
			fmt.Fprintf(&b, "%s: %v\n", p.Name, err)
			continue
		}
		body, _ := io.ReadAll(io.LimitReader(stream, 1<<20))
		_ = stream.Close()
		fmt.Fprintf(&b, "[%s]\n%s", p.Name, stackTraces.ReplaceAll(body, nil))
	}
	return b.String()
}

// runnerLogTails are the last lines k6 printed in each runner pod of the run, without the
// envelopes (JSON lines): what a run that never ends was doing.
func (e *env) runnerLogTails(ctx context.Context, key client.ObjectKey) string {
	pods, err := e.cs.CoreV1().Pods(key.Namespace).List(ctx, metav1.ListOptions{LabelSelector: naming.LabelTestRun + "=" + key.Name})
	if err != nil {
		return fmt.Sprintf("runner pods: %v\n", err)
	}
	var b strings.Builder
	lines := int64(400)
	for _, p := range pods.Items {
		stream, err := e.cs.CoreV1().Pods(key.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{TailLines: &lines}).Stream(ctx)
		if err != nil {
			fmt.Fprintf(&b, "---- %s: %v\n", p.Name, err)
			continue
		}
		body, _ := io.ReadAll(io.LimitReader(stream, 4<<20))
		_ = stream.Close()
		var kept []string
		for _, line := range strings.Split(string(body), "\n") {
			if line != "" && !strings.HasPrefix(line, "{") {
				kept = append(kept, line)
			}
		}
		fmt.Fprintf(&b, "---- %s (last k6 lines) ----\n%s\n", p.Name, strings.Join(kept[max(0, len(kept)-15):], "\n"))
	}
	return b.String()
}

// stackTraces are the JSON log's stacktrace fields: long, and of no use in a failure's tail.
var stackTraces = regexp.MustCompile(`,"stacktrace":"[^"]*"`)

var stubRequests = regexp.MustCompile(`(?m)^\s*(\d+)\s+(\d+)\s+(\d+)\s*$`)

// nginxRequests reads nginx's stub_status through the API server's service proxy and returns
// its request counter. The counter includes this very request.
func (e *env) nginxRequests(t *testing.T, ns, service string) int64 {
	t.Helper()
	path := fmt.Sprintf("/api/v1/namespaces/%s/services/%s:80/proxy/nginx_status", ns, service)
	body, err := e.cs.CoreV1().RESTClient().Get().AbsPath(path).DoRaw(e.ctx)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	m := stubRequests.FindStringSubmatch(string(body))
	if m == nil {
		t.Fatalf("GET %s: no counters in %q", path, body)
	}
	n, _ := strconv.ParseInt(m[3], 10, 64)
	return n
}

// positiveDuration says whether s is a latency like "0.71ms" or "1.2s" above zero.
func positiveDuration(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" {
		return false
	}
	if d, err := time.ParseDuration(s); err == nil {
		return d > 0
	}
	f, err := strconv.ParseFloat(strings.TrimRight(s, "mµuns"), 64)
	return err == nil && f > 0
}
