//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
)

// getRoot is one device's request; the TestRun's device model sets the rate.
const getRoot = "import http from 'k6/http';\nexport default function () { http.get(`${__ENV.TARGET_WEB_URL}/`); }\n"

// TestStabilityMeasuredThroughMetricsAPI: the manager is told to read target usage from
// metrics.k8s.io (as where kubelets cannot be read), served here by a real metrics-server
// (hack/e2e/run.sh boots the cluster with FLEETBENCH_METRICS_SERVER=1). The run waits for
// metrics-server's first scrape of the new target, then reports working-set memory and CPU
// integrated from the sampled rates, and says where they came from.
func TestStabilityMeasuredThroughMetricsAPI(t *testing.T) {
	e := newEnv(t)
	if _, err := e.cs.RESTClient().Get().AbsPath("/apis/metrics.k8s.io/v1beta1/pods").DoRaw(e.ctx); err != nil {
		t.Fatalf("metrics.k8s.io is not served (%v): boot the cluster with FLEETBENCH_METRICS_SERVER=1 hack/cluster/up.sh", err)
	}
	e.managerTargetMetrics(t, "metrics-api")
	t.Cleanup(func() {
		// The test's context is done by now; the manager must be put back for the tests after.
		restore := *e
		restore.ctx = context.WithoutCancel(e.ctx)
		restore.managerTargetMetrics(t, "auto")
	})

	ns := e.namespace(t, "e2e-metrics-api")
	run := tw.MakeTestRun("stab-metrics-api", ns).
		Type(v1alpha1.TestTypeStability).
		// 50 requests/s for 40 s, sampled every 10 s (metrics-server's resolution here).
		Devices(1000, "20s").Duration("40s").
		Inline(getRoot).
		Parallelism(1).
		Stability(&v1alpha1.StabilitySpec{SampleInterval: "10s"}).
		Timeouts(&v1alpha1.TimeoutsSpec{Provisioning: "3m"}).
		Obj()
	got := e.run(t, run, 5*time.Minute)
	requirePassed(t, got)
	target := got.Status.Target
	if target == nil || target.Memory == nil || target.CPU == nil {
		t.Fatalf("no target measurements: %+v", target)
	}
	t.Logf("source %s samples %d memory %+v cpu %+v", target.Source, target.Samples, *target.Memory, *target.CPU)
	if target.Source != "metricsAPI" || target.Samples < 4 {
		t.Errorf("source %q samples %d, want metricsAPI with before, ≥2 during and after", target.Source, target.Samples)
	}
	if target.Memory.BeforeMiB <= 0 || target.Memory.AfterMiB <= 0 || target.Memory.UtilizationPercent == "" {
		t.Errorf("working-set memory columns missing: %+v", *target.Memory)
	}
	if est, _ := strconv.ParseFloat(target.CPU.EstimatedCoreSeconds, 64); est <= 0 {
		t.Errorf("CPU time integrated from the rates = %q, want > 0 under 50 req/s", target.CPU.EstimatedCoreSeconds)
	}
}

// managerTargetMetrics sets the manager's --target-metrics and waits until the new manager
// alone runs.
func (e *env) managerTargetMetrics(t *testing.T, source string) {
	t.Helper()
	var list appsv1.DeploymentList
	if err := e.c.List(e.ctx, &list, client.InNamespace(managerNamespace)); err != nil || len(list.Items) != 1 {
		t.Fatalf("manager Deployment: %d found, %v", len(list.Items), err)
	}
	d := &list.Items[0]
	patch := client.MergeFrom(d.DeepCopy())
	c := &d.Spec.Template.Spec.Containers[0]
	var args []string
	for _, a := range c.Args {
		if !strings.HasPrefix(a, "--target-metrics=") {
			args = append(args, a)
		}
	}
	c.Args = append(args, "--target-metrics="+source)
	if err := e.c.Patch(e.ctx, d, patch); err != nil {
		t.Fatal(err)
	}
	e.eventually(t, "manager rolled out with --target-metrics="+source, 2*time.Minute, func() (bool, string) {
		if err := e.c.Get(e.ctx, client.ObjectKeyFromObject(d), d); err != nil {
			return false, err.Error()
		}
		st := d.Status
		var pods corev1.PodList
		if err := e.c.List(e.ctx, &pods, client.InNamespace(managerNamespace)); err != nil {
			return false, err.Error()
		}
		return st.ObservedGeneration == d.Generation && st.UpdatedReplicas == 1 && st.AvailableReplicas == 1 && len(pods.Items) == 1,
			fmt.Sprintf("%+v, %d pods", st, len(pods.Items))
	})
}
