//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/plugin"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/judge"
	"fleetbench.dev/fleetbench/pkg/present/htmlreport/browsertest"
)

// TestPluginFollowsARunAndReportsIt is what a user of `kubectl fleetbench` sees: `run -f` on a
// 60 s TestRun prints live progress and exits 0 on PASSED; status.progress changed at least 3
// times meanwhile; the manager's exported p95 (read from its /metrics) is the status's p95;
// and the HTML report, opened offline in headless Chromium, draws every chart from the run.
func TestPluginFollowsARunAndReportsIt(t *testing.T) {
	e := newEnv(t)
	ns := e.namespace(t, "e2e-plugin")
	run := tw.MakeTestRun("observed", ns).Parallelism(2).Devices(100, "1s").Duration("60s").
		Threshold("http_req_failed", "rate<0.01").Obj()
	manifest, err := yaml.Marshal(run)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "testrun.yaml")
	if err := os.WriteFile(file, manifest, 0o644); err != nil {
		t.Fatal(err)
	}
	e.dumpOnFailure(t, client.ObjectKeyFromObject(run), "")

	progress := e.recordProgress(t, run)
	out, code := e.plugin(t, "run", "-f", file, "-n", ns, "--timeout", "6m")
	changes := progress()
	t.Logf("kubectl fleetbench run exited %d; status.progress took %d values: %v", code, len(changes), changes)
	if code != 0 {
		t.Fatalf("kubectl fleetbench run exited %d, want 0 (PASSED):\n%s", code, out)
	}
	if len(changes) < 3 {
		t.Errorf("status.progress changed %d times during a 60 s run, want at least 3", len(changes))
	}
	if !strings.Contains(out, "req/s") || !strings.Contains(out, "Running") || !strings.Contains(out, "PASSED") {
		t.Errorf("the plugin printed no progress line or verdict:\n%s", out)
	}

	got := &v1alpha1.TestRun{}
	if err := e.c.Get(e.ctx, client.ObjectKeyFromObject(run), got); err != nil {
		t.Fatal(err)
	}
	p95, err := time.ParseDuration(got.Status.Results.Latency.P95)
	if err != nil {
		t.Fatalf("status p95 %q: %v", got.Status.Results.Latency.P95, err)
	}
	e.eventually(t, "the manager to export this run's p95", time.Minute, func() (bool, string) {
		v, err := e.exportedGauge(ns, run.Name, "fleetbench_testrun_latency_seconds", `quantile="0.95"`)
		return err == nil && v == p95.Seconds(), fmt.Sprintf("exported %v (%v), status %s", v, err, got.Status.Results.Latency.P95)
	})

	jsonOut, code := e.plugin(t, "report", "observed", "-n", ns, "--format", "json")
	var doc struct {
		Timeline *judge.Timeline `json:"timeline"`
	}
	if code != 0 || json.Unmarshal([]byte(jsonOut), &doc) != nil || doc.Timeline == nil {
		t.Fatalf("report --format json exited %d without a timeline:\n%.2000s", code, jsonOut)
	}
	windows := len(doc.Timeline.Windows)
	// A 60 s run is measured in 2 s windows and its target sampled every 2 s (runners.WindowFor,
	// runners.SampleIntervalFor): a curve, not 6 windows and 2 target points.
	if windows < 20 || len(doc.Timeline.Target) < 10 {
		t.Errorf("timeline of %d windows and %d target points, want the 60 s in 2 s windows and target samples every 2 s", windows, len(doc.Timeline.Target))
	}
	html := filepath.Join(dir, "observed.html")
	if out, code := e.plugin(t, "report", "observed", "-n", ns, "-o", html); code != 0 {
		t.Fatalf("report exited %d:\n%s", code, out)
	}
	e.checkInBrowser(t, html, "testrun-report.png", map[string]int{
		"throughput": windows, "latency": windows, "errors": windows,
		"target": -1, "latency-histogram": -1,
	})
}

// recordProgress watches status.progress until the returned function is called, which returns
// the distinct progress updates seen.
func (e *env) recordProgress(t *testing.T, run *v1alpha1.TestRun) func() []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(e.ctx, 10*time.Minute)
	var mu sync.Mutex
	var seen []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			var cur v1alpha1.TestRun
			if err := e.c.Get(ctx, client.ObjectKeyFromObject(run), &cur); err == nil && cur.Status.Progress != nil &&
				cur.Status.Phase == v1alpha1.PhaseRunning {
				p := cur.Status.Progress
				v := fmt.Sprintf("%s %d req %s/s", p.Summary, p.Requests, p.RequestsPerSecond)
				mu.Lock()
				if len(seen) == 0 || seen[len(seen)-1] != v {
					seen = append(seen, v)
				}
				mu.Unlock()
			}
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}()
	return func() []string {
		cancel()
		<-done
		mu.Lock()
		defer mu.Unlock()
		return seen
	}
}

var pluginBuild struct {
	once sync.Once
	path string
	err  error
}

// plugin runs `kubectl fleetbench` (built once from this repository) against the test cluster
// and returns its combined output and exit code.
func (e *env) plugin(t *testing.T, args ...string) (string, int) {
	t.Helper()
	pluginBuild.once.Do(func() {
		dir, err := os.MkdirTemp("", "kubectl-fleetbench-")
		if err != nil {
			pluginBuild.err = err
			return
		}
		pluginBuild.path = filepath.Join(dir, "kubectl-fleetbench")
		cmd := exec.Command("go", "build", "-o", pluginBuild.path, "./cmd/kubectl-fleetbench")
		cmd.Dir = repoRoot(t)
		if out, err := cmd.CombinedOutput(); err != nil {
			pluginBuild.err = fmt.Errorf("building the plugin: %v\n%s", err, out)
		}
	})
	if pluginBuild.err != nil {
		t.Fatal(pluginBuild.err)
	}
	ctx, cancel := context.WithTimeout(e.ctx, 10*time.Minute)
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, pluginBuild.path, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := cmd.ProcessState.ExitCode()
	if err != nil && code < 0 {
		t.Fatalf("kubectl fleetbench %v: %v", args, err)
	}
	return out.String(), code
}

// exportedGauge reads one of the manager's gauges for a TestRun from its /metrics endpoint, as
// an authorized scraper (managerMetrics).
func (e *env) exportedGauge(ns, name, metric, extraLabel string) (float64, error) {
	var svcs corev1.ServiceList
	if err := e.c.List(e.ctx, &svcs, client.InNamespace(managerNamespace)); err != nil {
		return 0, err
	}
	for _, svc := range svcs.Items {
		if !strings.HasSuffix(svc.Name, "-metrics") {
			continue
		}
		raw, err := e.managerMetrics(strings.TrimSuffix(svc.Name, "-metrics"))
		if err != nil {
			return 0, err
		}
		sc := bufio.NewScanner(bytes.NewReader(raw))
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if strings.HasPrefix(line, metric+"{") && strings.Contains(line, `namespace="`+ns+`"`) &&
				strings.Contains(line, `name="`+name+`"`) && strings.Contains(line, extraLabel) {
				return strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
			}
		}
		return 0, fmt.Errorf("no %s for %s/%s among %d bytes of metrics", metric, ns, name, len(raw))
	}
	return 0, fmt.Errorf("no metrics Service in %s", managerNamespace)
}

// checkInBrowser opens a report offline in headless Chromium and requires every chart drawn:
// want maps a chart to its exact number of points, or -1 for any number above zero. The
// screenshot is kept under $FLEETBENCH_ARTIFACTS (bin/artifacts with make e2e; the test's temp
// dir when unset) for people.
func (e *env) checkInBrowser(t *testing.T, html, screenshot string, want map[string]int) {
	t.Helper()
	dir := os.Getenv("FLEETBENCH_ARTIFACTS")
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, screenshot)
	ctx, cancel := context.WithTimeout(e.ctx, 2*time.Minute)
	defer cancel()
	res, err := browsertest.Check(ctx, html, shot)
	if err != nil {
		t.Fatalf("opening %s in Chromium: %v", html, err)
	}
	t.Logf("report %s: %d charts, screenshot %s", filepath.Base(html), len(res.Charts), shot)
	exact := map[string]int{}
	for _, c := range res.Charts {
		exact[c.Name] = c.Points
		if n, ok := want[c.Name]; ok && n < 0 && c.Points > 0 {
			want[c.Name] = c.Points
		}
	}
	if err := browsertest.Verify(res, want); err != nil {
		t.Errorf("the report in Chromium: %v (points drawn: %v)", err, exact)
	}
}

// timeline reads a finished TestRun's timeline from its results ConfigMap, as the plugin does.
func (e *env) timeline(t *testing.T, run *v1alpha1.TestRun) *judge.Timeline {
	t.Helper()
	_, tl, err := plugin.FullResult(e.ctx, e.c, run)
	if err != nil || tl == nil {
		t.Fatalf("%s's timeline: %v (kept: %v)", run.Name, err, tl != nil)
	}
	return tl
}
