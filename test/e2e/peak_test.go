//go:build e2e

package e2e

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/runners"
)

// pushDirect is seed 000's device emulator pushing straight to the backend.
const pushDirect = `import http from 'k6/http';
export default function () {
  http.post(` + "`${__ENV.TARGET_APP_URL}/api/push`" + `, JSON.stringify({ device: 'dev-' + __VU, rssi: -67 }),
    { headers: { 'Content-Type': 'application/json' }, timeout: '2s' });
}
`

// TestPeakFindsTheBreakingPoint is seed 000's peak test scaled down: the device backend on
// C1 with one push worker that holds each push 20 ms (at most 50 pushes a second) and a short
// queue. Two runners climb from 20 devices pushing every second by 20 each 8 s step, up to
// 140; a step with more than 5 % failed pushes stops the climb. The operator judges each step
// on the runners' merged live windows and stops both runners at the breaking point, well
// before 140 devices.
func TestPeakFindsTheBreakingPoint(t *testing.T) {
	e := newEnv(t)
	ns := e.namespace(t, "e2e-peak")
	run := tw.MakeTestRun("peak-c1", ns).Type(v1alpha1.TestTypePeak).
		Components(v1alpha1.Component{Name: "app", Kind: v1alpha1.ComponentCustom, Image: "fleetbench/sut:dev",
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
			Env: []corev1.EnvVar{{Name: "WORKERS", Value: "1"}, {Name: "PUSH_DELAY", Value: "20ms"},
				{Name: "QUEUE_SIZE", Value: "4"}, {Name: "QUEUE_TIMEOUT", Value: "100ms"}},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}}, PeriodSeconds: 2},
		}).
		Devices(20, "1s").
		Peak(&v1alpha1.PeakSpec{StepDevices: 20, StepDuration: "8s", MaxDevices: ptr.To[int32](140),
			StopWhen: v1alpha1.PeakStopRules{ErrorPercentAbove: ptr.To[v1alpha1.Percent](5)}}).
		Inline(pushDirect).Parallelism(2).Obj()
	steps, err := runners.PeakSteps(&run.Spec)
	if err != nil {
		t.Fatal(err)
	}
	got := e.run(t, run, 4*time.Minute)
	if got.Status.Phase != v1alpha1.PhaseSucceeded {
		t.Fatalf("phase %s/%s: %s", got.Status.Phase, got.Status.Reason, got.Status.Message)
	}
	p := got.Status.Peak
	if p == nil || p.BreakingPoint != v1alpha1.PeakReached {
		t.Fatalf("peak %+v: the climb must break before 140 devices", p)
	}
	for _, st := range p.Steps {
		t.Logf("step %3d devices: %4d requests, %6s req/s, %6s%% errors, %6s%% dropped, p95 %s, held %v",
			st.Devices, st.Requests, st.RequestsPerSecond, st.ErrorPercent, st.DroppedPercent, st.P95, st.Held)
	}
	last := len(p.Steps) - 1
	if p.FirstFailedDevices >= 140 || p.FirstFailedDevices != p.Steps[last].Devices || p.Steps[last].Held || p.LastHeldDevices != p.FirstFailedDevices-20 {
		t.Errorf("breaking point: last held %d, first failed %d, steps %d", p.LastHeldDevices, p.FirstFailedDevices, len(p.Steps))
	}
	if got.Status.Capacity == nil || got.Status.Capacity.BreakingPointDevices != p.LastHeldDevices {
		t.Errorf("capacity %+v, want breakingPointDevices %d", got.Status.Capacity, p.LastHeldDevices)
	}
	// The failing step's hold ended at start + To; every runner ended after the stop request.
	failingEnd := got.Status.StartTime.Add(steps[last].To)
	var ended time.Time
	pods, err := e.cs.CoreV1().Pods(ns).List(e.ctx, metav1.ListOptions{LabelSelector: "fleetbench.dev/testrun=peak-c1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, pod := range pods.Items {
		for _, cs := range pod.Status.ContainerStatuses {
			if term := cs.State.Terminated; term != nil && cs.Name == runners.ContainerName {
				if term.ExitCode != 103 {
					t.Errorf("runner %s exited %d, want 103 (stopped by the operator)", pod.Name, term.ExitCode)
				}
				if term.FinishedAt.After(ended) {
					ended = term.FinishedAt.Time
				}
			}
		}
	}
	// Container end times have one-second resolution.
	t.Logf("BENCH peak stop: failing step's hold ended → stop requested %s → last runner ended %s (evaluation interval %s)",
		p.StopRequestTime.Sub(failingEnd).Round(time.Millisecond), ended.Sub(failingEnd).Round(time.Second), 1*time.Second)
	if ended.IsZero() || ended.Sub(failingEnd) > 30*time.Second {
		t.Errorf("the runners ended %s after the failing step: the stop did not work", ended.Sub(failingEnd))
	}
	if got.Status.Results == nil || got.Status.Results.Partial {
		t.Errorf("stopped runners still leave whole results: %+v", got.Status.Results)
	}
}
