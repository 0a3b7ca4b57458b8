//go:build e2e

package e2e

import (
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
)

// registerThenPush: each device's first iteration registers it with a 32 KiB config, which the
// memory store keeps (the warm-up: 600 devices grow the backend by about 19 MiB over the first
// period), and every iteration pushes.
const registerThenPush = `import http from 'k6/http';
import exec from 'k6/execution';
import { check } from 'k6';
const first = parseInt(__ENV.DEVICE_ID_FIRST, 10);
const count = parseInt(__ENV.DEVICE_COUNT, 10);
const url = __ENV.TARGET_APP_URL;
const params = { headers: { 'Content-Type': 'application/json' } };
const blob = 'c'.repeat(32768);
export default function () {
  const i = exec.scenario.iterationInInstance;
  const device = 'dev-' + (first + (i % count));
  if (i < count) {
    const reg = http.post(url + '/api/register', JSON.stringify({ device: device, config: { blob: blob } }), params);
    check(reg, { 'registered': (r) => r.status === 201 || r.status === 200 });
  }
  const res = http.post(url + '/api/push', JSON.stringify({ device: device, rssi: -67 }), params);
  check(res, { 'push accepted': (r) => r.status === 202 });
}
`

// leakRun is a 90-second stability run against the sample backend alone (memory store, so
// what it keeps is its own memory): 600 devices every 20 s (30 pushes/s) register during the
// first period, then only push. The backend keeps its last 500 pushes (PUSH_HISTORY), so its
// memory holds once they are in, about 17 s into the load, within the registration ramp, and it
// collects garbage at 20 % growth (GOGC=20): at the default 100 % its heap climbs for about 70 s
// at this allocation rate before each collection, a rise longer than this run that no fit can
// tell from a leak (a real soak spans many collections). The trend is sampled every 2 s; the
// first half of the load is held out as the warm-up and the second half fitted, judged against
// a horizon of 2 h: a 90-second run can only tell a leak that fills the profile's memory
// within hours, and can never call memory stable (that takes 20 minutes fitted).
func leakRun(ns, name string, appEnv ...corev1.EnvVar) *v1alpha1.TestRun {
	return tw.MakeTestRun(name, ns).
		Type(v1alpha1.TestTypeStability).
		Sizing(v1alpha1.SizingOneMachine).
		Components(v1alpha1.Component{Name: "app", Kind: v1alpha1.ComponentCustom, Image: "fleetbench/sut:dev",
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
			Env: append([]corev1.EnvVar{{Name: "WORKERS", Value: "4"}, {Name: "REQUIRE_REGISTER", Value: "true"},
				{Name: "PUSH_HISTORY", Value: "500"}, {Name: "GOGC", Value: "20"}}, appEnv...),
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}}, PeriodSeconds: 2},
		}).
		Devices(600, "20s").Duration("90s").
		Inline(registerThenPush).
		Parallelism(1).
		Stability(&v1alpha1.StabilitySpec{
			SampleInterval: "2s",
			Leak:           &v1alpha1.LeakSpec{Horizon: "2h", FailOn: "leak"},
		}).
		Timeouts(&v1alpha1.TimeoutsSpec{Provisioning: "3m"}).
		Obj()
}

// TestLeakVerdictLeaking: the backend keeps 48 KiB per push (LEAK_BYTES_PER_PUSH), about
// 1.4 MiB/s at 30 pushes/s, on top of the registration warm-up: the trend is a leak, the slope
// well above zero, and failOn: leak fails the verdict with a message naming the slope.
func TestLeakVerdictLeaking(t *testing.T) {
	e := newEnv(t)
	ns := e.namespace(t, "e2e-leak")
	got := e.run(t, leakRun(ns, "leaking", corev1.EnvVar{Name: "LEAK_BYTES_PER_PUSH", Value: "49152"}), 6*time.Minute)
	tr := trendOf(t, got)
	if tr.Verdict != "leak" {
		t.Fatalf("trend %s, want leak: %s", tr.Verdict, tr.Message)
	}
	// 48 KiB × 30/s is about 5000 MiB/h; the interval's lower end must be far from zero.
	if low, _ := strconv.ParseFloat(tr.SlopeLow, 64); low < 1000 {
		t.Errorf("slope %s MiB/h, interval from %s: want above 1000 MiB/h", tr.SlopeMiBPerHour, tr.SlopeLow)
	}
	if got.Status.Verdict != v1alpha1.VerdictFailed || !strings.Contains(got.Status.Message, "target memory leaks "+tr.SlopeMiBPerHour) {
		t.Errorf("verdict %s, want FAILED naming the slope %s: %s", got.Status.Verdict, tr.SlopeMiBPerHour, got.Status.Message)
	}
}

// TestLeakVerdictStable: the same run without the leak grows only while devices register;
// after the held-out first half nothing grows significantly, but 45 seconds fitted are far
// less than the 20 minutes that could tell a moderate leak from none (and its samples may
// move together): the trend is insufficient, says so, and fails nothing, so the run PASSES.
func TestLeakVerdictStable(t *testing.T) {
	e := newEnv(t)
	ns := e.namespace(t, "e2e-noleak")
	got := e.run(t, leakRun(ns, "stable"), 6*time.Minute)
	tr := trendOf(t, got)
	if tr.Verdict != "insufficient" || !strings.Contains(tr.Message, "a longer run decides") {
		t.Errorf("trend %s, want insufficient, saying a longer run decides: %s", tr.Verdict, tr.Message)
	}
	requirePassed(t, got)
}

func trendOf(t *testing.T, got *v1alpha1.TestRun) *v1alpha1.MemoryTrend {
	t.Helper()
	tu := got.Status.Target
	if tu == nil || tu.Memory == nil || tu.Memory.Trend == nil {
		t.Fatalf("no memory trend: %+v (%s: %s)", tu, got.Status.Phase, got.Status.Message)
	}
	m := tu.Memory
	t.Logf("memory before %d after %d peak %d MiB, %d samples; trend %+v", m.BeforeMiB, m.AfterMiB, m.PeakMiB, tu.Samples, *m.Trend)
	if m.Trend.Samples < 10 {
		t.Errorf("the trend fitted %d samples, want at least 10 after the warm-up", m.Trend.Samples)
	}
	return m.Trend
}
