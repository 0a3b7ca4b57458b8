//go:build e2e

package e2e

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/intstr"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
)

// devicePush is seed 000's emulator: each device pushes its data through the web server to
// the device backend, which stores it in the database.
const devicePush = `import http from 'k6/http';
import { check } from 'k6';
const first = parseInt(__ENV.DEVICE_ID_FIRST, 10);
const count = parseInt(__ENV.DEVICE_COUNT, 10);
export default function () {
  const id = first + (__ITER % count);
  const res = http.post(` + "`${__ENV.TARGET_WEB_URL}/api/push`" + `, JSON.stringify({ device: 'dev-' + id, rssi: -67 }),
    { headers: { 'Content-Type': 'application/json' } });
  check(res, { 'push accepted': (r) => r.status === 202 });
}
`

// stabilityRun is seed 000's Stab-2-2 on C1 scaled down in time: 1000 devices pushing every
// 200 s (5 pushes/s), through nginx to the sample device backend and PostgreSQL, all three in
// one C1 "machine" (1 CPU, 512 MiB).
func stabilityRun(ns, name string, duration v1alpha1.Duration, appEnv ...corev1.EnvVar) *v1alpha1.TestRun {
	return tw.MakeTestRun(name, ns).
		Type(v1alpha1.TestTypeStability).
		Sizing(v1alpha1.SizingOneMachine).
		Components(
			v1alpha1.Component{Name: "web", Kind: v1alpha1.ComponentWebServer, Env: []corev1.EnvVar{{Name: "PROXY_PASS", Value: "$(TARGET_APP_URL)"}}},
			v1alpha1.Component{Name: "app", Kind: v1alpha1.ComponentCustom, Image: "fleetbench/sut:dev",
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
				Env: append([]corev1.EnvVar{
					{Name: "DATABASE_URL", Value: "postgres://fleetbench:fleetbench@$(TARGET_DB_HOST):$(TARGET_DB_PORT)/fleetbench"},
					{Name: "WORKERS", Value: "2"},
				}, appEnv...),
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}}, PeriodSeconds: 2},
			},
			v1alpha1.Component{Name: "db", Kind: v1alpha1.ComponentDatabase, Engine: "postgresql"},
		).
		Devices(1000, "200s").Duration(duration).
		Inline(devicePush).
		Parallelism(2).
		Stability(&v1alpha1.StabilitySpec{
			SampleInterval: "10s",
			LogPatterns: []v1alpha1.LogPattern{
				{Name: "warning", Regex: "level=warn"},
				{Name: "error", Regex: "level=error"},
			},
		}).
		Timeouts(&v1alpha1.TimeoutsSpec{Provisioning: "3m"}).
		Cleanup(v1alpha1.TargetKeepUntilDeleted).
		Obj()
}

var storedMetric = regexp.MustCompile(`(?m)^sut_pushes_stored_total (\d+)$`)

// TestStabilityOnC1 runs the scaled-down Stab-2-2 and checks what the target did: memory and
// CPU were sampled, seed 000's derived columns are filled, log findings counted, no restarts,
// and every accepted push is in the database as the backend itself counts it.
func TestStabilityOnC1(t *testing.T) {
	e := newEnv(t)
	ns := e.namespace(t, "e2e-stab")
	run := stabilityRun(ns, "stab-2-2-c1", "60s")
	got := e.run(t, run, 5*time.Minute)
	requirePassed(t, got)
	r, target := got.Status.Results, got.Status.Target
	// 5 pushes/s for 60 s.
	if r.Requests.Total < 270 || r.Requests.Total > 330 || r.Requests.Dropped != 0 {
		t.Errorf("requests = %+v, want about 300 and none dropped", r.Requests)
	}
	if target == nil || target.Memory == nil || target.CPU == nil {
		t.Fatalf("no target measurements: %+v", target)
	}
	m := target.Memory
	t.Logf("target: memory %+v cpu %+v samples %d restarts %d findings %+v capacity %+v",
		*m, *target.CPU, target.Samples, target.Restarts, target.LogFindings, got.Status.Capacity)
	if m.BeforeMiB <= 0 || m.AfterMiB <= 0 || m.PeakMiB < m.AfterMiB || m.IncreasePercent == "" || m.PerDeviceMiB == "" || m.UtilizationPercent == "" {
		t.Errorf("memory columns missing: %+v", m)
	}
	if util, _ := strconv.ParseFloat(m.UtilizationPercent, 64); util <= 0 || util > 100 {
		t.Errorf("RAM utilization %s%% of C1's 512 MiB is not plausible", m.UtilizationPercent)
	}
	if cpu, _ := strconv.ParseFloat(target.CPU.AverageCoresPerCore, 64); cpu <= 0 {
		t.Errorf("average CPU per core %q, want > 0 under load", target.CPU.AverageCoresPerCore)
	}
	if target.Samples < 4 || target.Restarts != 0 || len(target.LogFindings) != 2 {
		t.Errorf("samples %d (want before, ≥2 during 60 s at 10 s, after) restarts %d findings %+v", target.Samples, target.Restarts, target.LogFindings)
	}
	if got.Status.Capacity == nil || got.Status.Capacity.MaxSafeDevicesByMemory <= 1000 {
		t.Errorf("max safe devices by memory = %+v, want above the 1000 it held", got.Status.Capacity)
	}

	// The backend's own count of stored pushes is what k6 saw accepted.
	stored := e.storedPushes(t, got.Status.TargetNamespace)
	t.Logf("accepted %d pushes, the backend stored %d", r.Requests.Accepted, stored)
	if stored != r.Requests.Accepted {
		t.Errorf("the backend stored %d pushes, status says %d accepted", stored, r.Requests.Accepted)
	}
}

// TestCrashingComponentFailsTheVerdict: the device backend crashes after 100 pushes; the
// kubelet restarts it, the status shows the restart and the verdict is FAILED.
func TestCrashingComponentFailsTheVerdict(t *testing.T) {
	e := newEnv(t)
	ns := e.namespace(t, "e2e-crash")
	run := stabilityRun(ns, "stab-crash", "45s", corev1.EnvVar{Name: "CRASH_AFTER_PUSHES", Value: "100"})
	got := e.run(t, run, 5*time.Minute)
	if got.Status.Verdict != v1alpha1.VerdictFailed {
		t.Fatalf("verdict %s, want FAILED", got.Status.Verdict)
	}
	// A completed run with a FAILED verdict: GitOps must see it ended and not Ready.
	wantConditions(t, got, v1alpha1.ConditionComplete, v1alpha1.ConditionStalled)
	if meta.IsStatusConditionTrue(got.Status.Conditions, v1alpha1.ConditionReady) {
		t.Errorf("a FAILED run is Ready: kubectl wait --for=condition=Ready would pass it")
	}
	if got.Status.Target == nil || got.Status.Target.Restarts < 1 {
		t.Fatalf("restarts not reported: %+v", got.Status.Target)
	}
	if !strings.Contains(got.Status.Message, "restarted") {
		t.Errorf("message does not say the target restarted: %s", got.Status.Message)
	}
	errors := int64(-1)
	for _, f := range got.Status.Target.LogFindings {
		if f.Pattern == "error" {
			errors = f.Count
		}
	}
	t.Logf("restarts %d, error log lines %d, requests %+v", got.Status.Target.Restarts, errors, got.Status.Results.Requests)
	// The crashed instance's "level=error msg=\"simulated crash\"" is read from its previous log.
	if errors < 1 {
		t.Errorf("the crash was not found in the target's logs: %+v", got.Status.Target.LogFindings)
	}
}
