//go:build e2e

package e2e

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/naming"
)

// iotSuite is seed 002's suite in miniature: one subscriber, devices ingesting messages with
// a named request and the custom Trend time_lapse, and one consumer at the end; thresholds on
// a tagged sub-metric and on the custom Trend, as the k6 documentation writes them.
const iotSuite = `import http from 'k6/http';
import { check } from 'k6';
import { Trend } from 'k6/metrics';
const timeLapse = new Trend('time_lapse', true);
export const options = {
  scenarios: {
    subscribe: { executor: 'shared-iterations', vus: 1, iterations: 1, exec: 'subscribe' },
    ingestion: { executor: 'per-vu-iterations', vus: 9, iterations: 20, startTime: '1s', exec: 'ingestion' },
    consumption: { executor: 'shared-iterations', vus: 1, iterations: 1, startTime: '4s', exec: 'consumption' },
  },
  thresholds: {
    'http_req_duration{name:push}': ['p(95)<2000'],
    'http_reqs{scenario:ingestion}': ['count==180'],
    time_lapse: ['p(95)<2000'],
  },
};
const base = __ENV.TARGET_APP_URL;
const json = { headers: { 'Content-Type': 'application/json' } };
export function setup() {
  http.post(base + '/api/register', JSON.stringify({ device: 'suite-setup' }), json);
  return { session: 's-42' };
}
export function subscribe() { http.get(base + '/api/config?device=subscriber'); }
export function ingestion(data) {
  const res = http.post(base + '/api/push', JSON.stringify({ device: 'dev-' + __VU, seq: __ITER, session: data.session }),
    Object.assign({ tags: { name: 'push' } }, json));
  check(res, { 'message accepted': (r) => r.status === 202 });
  check(data, { 'setup data reached this runner': (d) => d.session === 's-42' });
  timeLapse.add(res.timings.waiting);
}
export function consumption() { http.get(base + '/api/config?device=consumer'); }
export function teardown(data) {
  http.post(base + '/api/register', JSON.stringify({ device: 'suite-teardown-' + data.session }), json);
}
`

// TestSeed002SuiteKeepsCustomMetricsAndScenarios: a script's own Trend, per-scenario numbers
// and thresholds on a tag (name) reach the merged results of three runners exactly; setup()
// and teardown() ran once for the fleet, as the target counts them, and setup()'s data reached
// every runner.
func TestSeed002SuiteKeepsCustomMetricsAndScenarios(t *testing.T) {
	e := newEnv(t)
	ns := e.namespace(t, "e2e-iot")
	run := tw.MakeTestRun("iot-suite", ns).
		Components(sutComponent([]corev1.ContainerPort{{Name: "http", ContainerPort: 8080}})).
		Inline(iotSuite).Parallelism(3).Cleanup(v1alpha1.TargetKeepUntilDeleted).Obj()
	got := e.run(t, run, 4*time.Minute)
	requirePassed(t, got)
	r := got.Status.Results
	registers := registerRequests.FindAllStringSubmatch(e.appMetrics(t, got.Status.TargetNamespace), -1)
	total := 0
	for _, m := range registers {
		n, _ := strconv.Atoi(m[1])
		total += n
	}
	t.Logf("the target saw %d register requests: %v", total, registers)
	if total != 2 {
		t.Errorf("setup() and teardown() each register once: the target saw %d register requests, want 2", total)
	}
	if r.Requests.Total != 184 || r.Checks == nil || r.Checks.Failed != 0 || r.Checks.Passed != 360 {
		t.Errorf("requests %d checks %+v: want 180 pushes, 2 config reads, setup's and teardown's requests; every check passed", r.Requests.Total, r.Checks)
	}
	for _, c := range []string{v1alpha1.ConditionSetupDone, v1alpha1.ConditionTeardownDone} {
		if cond := meta.FindStatusCondition(got.Status.Conditions, c); cond == nil || cond.Status != metav1.ConditionTrue {
			t.Errorf("condition %s = %+v", c, cond)
		}
	}
	var lapse *v1alpha1.MetricResult
	for i := range r.Metrics {
		if r.Metrics[i].Name == "time_lapse" {
			lapse = &r.Metrics[i]
		}
	}
	if lapse == nil || lapse.Samples != 180 || lapse.Unit != "ms" || lapse.Avg == "" || lapse.P90 == "" || lapse.P95 == "" {
		t.Errorf("time_lapse = %+v, want 180 samples in ms with avg, p90 and p95", lapse)
	} else {
		t.Logf("time_lapse: avg=%s min=%s med=%s max=%s p(90)=%s p(95)=%s", lapse.Avg, lapse.Min, lapse.Med, lapse.Max, lapse.P90, lapse.P95)
	}
	want := map[string][2]int64{"subscribe": {1, 1}, "ingestion": {180, 180}, "consumption": {1, 1}}
	for _, sc := range r.Scenarios {
		t.Logf("scenario %-12s requests %4d iterations %4d  %s req/s  p95 %s", sc.Name, sc.Requests, sc.Iterations, sc.RequestsPerSecond, sc.P95)
		if w, ok := want[sc.Name]; !ok || sc.Requests != w[0] || sc.Iterations != w[1] {
			t.Errorf("scenario %+v, want requests/iterations %v", sc, w)
		}
		delete(want, sc.Name)
	}
	if len(want) != 0 {
		t.Errorf("scenarios missing: %v", want)
	}
	judged := 0
	for _, th := range r.Thresholds {
		t.Logf("threshold %s %s: passed=%v value %s", th.Metric, th.Expression, th.Passed, th.Value)
		if th.Metric == "http_req_duration{name:push}" || th.Metric == "http_reqs{scenario:ingestion}" {
			judged++
			if !th.Passed || th.Value == "0" {
				t.Errorf("threshold %+v must be judged on the tagged requests", th)
			}
		}
	}
	if judged != 2 {
		t.Errorf("thresholds %+v: want the two tagged ones", r.Thresholds)
	}
}

var registerRequests = regexp.MustCompile(`(?m)^sut_http_requests_total\{route="register",status="\d+"\} (\d+)$`)

// TestBrokenScriptFailsBeforeAnythingStarts: a syntax error is found by the pre-flight in
// seconds, with k6's line in the message. The pre-flight runs alongside provisioning, so the
// target may have been begun: it is released at once, and no runner ever started.
func TestBrokenScriptFailsBeforeAnythingStarts(t *testing.T) {
	e := newEnv(t)
	ns := e.namespace(t, "e2e-broken")
	run := tw.MakeTestRun("broken", ns).
		Components(sutComponent([]corev1.ContainerPort{{Name: "http", ContainerPort: 8080}})).
		Inline("import http from 'k6/http';\nexport default function () {\n  http.get(__ENV.TARGET_APP_URL +;\n}\n").Obj()
	got := e.run(t, run, time.Minute)
	took := got.Status.CompletionTime.Sub(got.CreationTimestamp.Time)
	if got.Status.Phase != v1alpha1.PhaseFailed || got.Status.Reason != v1alpha1.ReasonScriptInvalid || !strings.Contains(got.Status.Message, "Line 3") || took > 30*time.Second {
		t.Errorf("%s/%s after %s: %s; want ScriptInvalid naming line 3 within 30 s", got.Status.Phase, got.Status.Reason, took, got.Status.Message)
	}
	if got.Status.StartTime != nil || meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionSetupDone) != nil {
		t.Errorf("a broken script started the load: startTime %v, conditions %+v", got.Status.StartTime, got.Status.Conditions)
	}
	e.eventually(t, "the broken script's target namespace gone", time.Minute, func() (bool, string) {
		err := e.c.Get(e.ctx, client.ObjectKey{Name: naming.TargetNamespace(ns, run.Name)}, &corev1.Namespace{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
}
