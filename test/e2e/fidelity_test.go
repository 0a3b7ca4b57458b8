//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/plugin"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/judge"
	"fleetbench.dev/fleetbench/test/fidelity"
)

const (
	fidelityImage = "fleetbench/fidelity-target:dev"
	// fidelityCorpus is the runner harness's corpus, read from here (test/e2e).
	fidelityCorpus = "../../runner/cmd/fleetbench-runner/testdata/fidelity"
	// fidelityRunner is the runner binary hack/e2e/images.sh builds: plain k6 v2.2.0 for the
	// reference run, as the runner harness uses it.
	fidelityRunner = "../../bin/fleetbench-runner"
	// fidelityAtOnce bounds the scripts in flight: each holds a target pod and up to 3 runners.
	fidelityAtOnce = 2
)

// TestFidelityOnCluster runs the corpus's representative part (scripts marked
// `// fidelity: cluster`) as TestRuns at parallelism 1 and 3, and compares each with one plain
// k6 process on the same script, flags, environment and config, as the runner harness does
// with processes: every threshold verdict, counter, rate and check must be k6's, and the
// target's own count must equal the requests the run counted. It catches what only the cluster
// path does: the pre-flight pod, the ConfigMap at /test, the runner Jobs, the start, the
// collection and the stored full result.
func TestFidelityOnCluster(t *testing.T) {
	e := newEnv(t)
	corpusDir, err := filepath.Abs(fidelityCorpus)
	if err != nil {
		t.Fatal(err)
	}
	corpus, err := fidelity.Load(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	var subset []fidelity.Script
	for _, s := range corpus {
		if s.Cluster {
			subset = append(subset, s)
		}
	}
	if 3*len(subset) < len(corpus) {
		t.Fatalf("%d of the %d corpus scripts are marked `// fidelity: cluster`; make e2e runs at least a third", len(subset), len(corpus))
	}
	bin, err := filepath.Abs(fidelityRunner)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("the runner binary for the reference run: %v (hack/e2e/images.sh builds it)", err)
	}
	slots := make(chan struct{}, fidelityAtOnce)
	for _, s := range subset {
		t.Run(s.Name, func(t *testing.T) {
			t.Parallel()
			slots <- struct{}{}
			defer func() { <-slots }()
			e.checkFidelityOnCluster(t, bin, corpusDir, s)
		})
	}
}

func (e *env) checkFidelityOnCluster(t *testing.T, bin, corpusDir string, s fidelity.Script) {
	ns := e.namespace(t, "e2e-fidelity-"+strings.ReplaceAll(s.Name, "_", "-"))
	e.serveFidelityTarget(t, ns)
	target := fmt.Sprintf("http://fidelity-target.%s.svc", ns)

	// The reference: one k6 process against the same routes on loopback.
	local := fidelity.NewServer()
	srv := httptest.NewServer(local)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(e.ctx, 2*time.Minute)
	defer cancel()
	k6, err := fidelity.Reference(ctx, bin, t.TempDir(), corpusDir, s, srv.URL)
	if err != nil {
		t.Fatalf("%v\n%s", err, k6.Output)
	}
	ref, refServed := k6.Summary, local.Reset().HTTP

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "script", Namespace: ns}, Data: map[string]string{"test.js": s.Text}}
	// The script's config and data files go beside it, as a user's ConfigMap holds them.
	for _, f := range append(s.Files, s.Config) {
		if f == "" {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(corpusDir, f))
		if err != nil {
			t.Fatal(err)
		}
		cm.Data[f] = string(raw)
	}
	if err := e.c.Create(e.ctx, cm); err != nil {
		t.Fatal(err)
	}
	env := []corev1.EnvVar{{Name: "TARGET", Value: target}}
	for _, kv := range s.Env {
		name, value, _ := strings.Cut(kv, "=")
		env = append(env, corev1.EnvVar{Name: name, Value: value})
	}
	for _, parallelism := range []int32{1, 3} {
		run := tw.MakeTestRun(fmt.Sprintf("p%d", parallelism), ns).External(target).Parallelism(parallelism).
			Script(v1alpha1.ScriptSpec{ConfigMap: &v1alpha1.ConfigMapScript{Name: cm.Name}}).
			Args(s.RunArgs("/test")...).RunnerEnv(env...).
			Timeouts(&v1alpha1.TimeoutsSpec{RunnersReady: "90s", Collection: "60s"}).Obj()
		got := e.run(t, run, 4*time.Minute)
		label := fmt.Sprintf("parallelism %d", parallelism)
		if got.Status.Phase != v1alpha1.PhaseSucceeded {
			t.Errorf("%s: %s/%s: %s; k6 ran it (failed: %v)", label, got.Status.Phase, got.Status.Reason, got.Status.Message, k6.Failed())
			continue
		}
		if (got.Status.Verdict == v1alpha1.VerdictFailed) != k6.Failed() {
			t.Errorf("%s: verdict %s, k6 failed the test: %v (aborted by the script: %v)", label, got.Status.Verdict, k6.Failed(), k6.Aborted)
		}
		if k6.Aborted && !strings.Contains(got.Status.Message, "test.abort()") {
			t.Errorf("%s: k6 says the script aborted the test; the status does not: %s", label, got.Status.Message)
		}
		summary, _, err := plugin.FullResult(e.ctx, e.c, got)
		if err != nil || summary == nil {
			t.Errorf("%s: the full result: %v (kept: %v)", label, err, summary != nil)
			continue
		}
		served := e.fidelityServed(t, ns)
		var diffs []string
		if s.VerdictsOnly {
			diffs = fidelity.CompareVerdicts(ref, *summary)
		} else {
			diffs = fidelity.Compare(ref, *summary)
			if served != refServed {
				diffs = append(diffs, fmt.Sprintf("the target served %d requests, k6's %d", served, refServed))
			}
		}
		// A script that stops early may leave a request in flight: it reaches the target and is
		// never measured, in one k6 process too.
		if counted := k6Requests(summary); counted != float64(served) && (!s.VerdictsOnly || counted > float64(served)) {
			diffs = append(diffs, fmt.Sprintf("the run counted %g requests, the target served %d", counted, served))
		}
		for _, d := range diffs {
			t.Errorf("%s: %s", label, d)
		}
		t.Logf("%s: %d thresholds, %d requests, verdict %s; k6 %d requests", label, len(got.Status.Results.Thresholds), served, got.Status.Verdict, refServed)
	}
}

// serveFidelityTarget runs the corpus's routes in ns as Service fidelity-target on port 80.
func (e *env) serveFidelityTarget(t *testing.T, ns string) {
	t.Helper()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "fidelity-target", Namespace: ns, Labels: map[string]string{"app": "fidelity-target"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "target", Image: fidelityImage, ImagePullPolicy: corev1.PullNever,
			SecurityContext: restrictedContainer(),
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(8080)}},
				PeriodSeconds: 1}}},
			SecurityContext: restrictedPod()}}
	e.createServedPod(t, e.c, pod, 8080)
	e.fidelityServed(t, ns) // a fresh count
}

// fidelityServed asks the target how many requests it served since the last ask, through the
// API server's service proxy.
func (e *env) fidelityServed(t *testing.T, ns string) int64 {
	t.Helper()
	raw, err := e.cs.CoreV1().Services(ns).ProxyGet("http", "fidelity-target", "80", fidelity.HitsPath, nil).DoRaw(e.ctx)
	if err != nil {
		t.Fatalf("the target's count: %v", err)
	}
	var hits fidelity.Hits
	if err := json.Unmarshal(raw, &hits); err != nil {
		t.Fatalf("the target's count %q: %v", raw, err)
	}
	return hits.HTTP
}

// k6Requests is http_reqs' count in k6's summary shape.
func k6Requests(s *judge.K6Summary) float64 { return s.Metrics["http_reqs"].Values["count"] }
