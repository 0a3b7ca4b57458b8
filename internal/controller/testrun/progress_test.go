package testrun

import (
	"fmt"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/controller/testrun/drive"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/judge"
	"fleetbench.dev/fleetbench/pkg/measure"
)

// While the load runs, status.progress follows the runners' live windows (the suite refreshes
// it every second); the manager exports it; at the end the results ConfigMap holds the run over
// time (merged windows and the target's points) and the exported p95 is the status's p95.
func TestProgressTimelineAndExportedResults(t *testing.T) {
	ns := setup(t)
	run := tw.MakeTestRun("progress", ns).Parallelism(2).Devices(20, "1s").Duration("1m").Obj()
	create(t, run)
	k := newKubelet(t, run)
	stats.set(k.targetNS(), 40, 1)
	k.targetReady()
	pods := k.runnersReady(2)
	got := waitPhase(t, run, v1alpha1.PhaseRunning, "")
	start := got.Status.StartTime.Time
	if got.Status.TestID != "progress-"+string(got.UID)[:8] {
		t.Errorf("testID %q", got.Status.TestID)
	}
	live := []tw.StepLoad{{From: 0, To: time.Minute, Requests: 6000, Failed: 60, LatencyMs: 20}}
	for _, pod := range pods {
		name := pod.Name
		runner.serveLive(pod, func() measure.Envelope { return tw.LiveEnvelope(name, start, time.Second, live, time.Now()) })
	}

	seen := map[int64]bool{}
	eventually(t, "status.progress refreshed 3 times with growing counts", func() error {
		var cur v1alpha1.TestRun
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(run), &cur); err != nil {
			return err
		}
		p := cur.Status.Progress
		if p == nil {
			return fmt.Errorf("no progress yet")
		}
		if p.Expected != "1m0s" || p.RequestsPerSecond != "200.00" || p.P95 != "20.0ms" || p.Requests == 0 {
			return fmt.Errorf("progress %+v: want 1m0s expected, 200 req/s (2 runners × 100), p95 20ms", p)
		}
		seen[p.Requests] = true
		if len(seen) < 3 {
			return fmt.Errorf("progress seen with %d distinct request counts", len(seen))
		}
		if v, ok := exported("fleetbench_testrun_requests", cur.Name, nil); !ok || v == 0 {
			return fmt.Errorf("fleetbench_testrun_requests not exported while running (%v)", v)
		}
		return nil
	})

	stats.set(k.targetNS(), 52, 30)
	for _, pod := range pods {
		logs.set(pod, load(pod, start), nil)
		k.Finish(pod, 0, "Completed")
	}
	got = waitPhase(t, run, v1alpha1.PhaseSucceeded, "")
	if p := got.Status.Progress; p == nil || p.Requests != got.Status.Results.Requests.Total {
		t.Errorf("the last progress %+v should cover the whole load (%d requests)", p, got.Status.Results.Requests.Total)
	}

	var cm corev1.ConfigMap
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: got.Status.Results.FullResult.ConfigMap}, &cm); err != nil {
		t.Fatal(err)
	}
	var tl judge.Timeline
	if err := judge.DecodeGzipJSON(cm.BinaryData[judge.TimelineKey], &tl); err != nil {
		t.Fatal(err)
	}
	var requests uint64
	for _, w := range tl.Windows {
		requests += w.Requests
	}
	if requests != 200 || len(tl.Runners) != 2 || len(tl.Latency) == 0 {
		t.Errorf("timeline: %d requests in %d windows, %d runners, %d histogram buckets; want 200 requests, 2 runners",
			requests, len(tl.Windows), len(tl.Runners), len(tl.Latency))
	}
	if n := len(tl.Target); n < 2 || tl.Target[0].MemoryMiB != 40 || tl.Target[n-1].MemoryMiB != 52 {
		t.Errorf("target points %+v: want the before (40 MiB) and after (52 MiB) samples", tl.Target)
	}
	if _, left := cm.Data[drive.TargetPointsKey]; left {
		t.Error("the raw target points were left next to the timeline")
	}

	p95, err := time.ParseDuration(got.Status.Results.Latency.P95)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the exported p95 equals the status p95", func() error {
		v, ok := exported("fleetbench_testrun_latency_seconds", run.Name, map[string]string{"quantile": "0.95"})
		if !ok || v != p95.Seconds() {
			return fmt.Errorf("exported p95 %v (found %v), status %s", v, ok, got.Status.Results.Latency.P95)
		}
		if v, ok := exported("fleetbench_testrun_verdict", run.Name, map[string]string{"verdict": "PASSED"}); !ok || v != 1 {
			return fmt.Errorf("verdict gauge %v", v)
		}
		return nil
	})
}

// exported reads a gauge of the TestRun named name from the manager's registry.
func exported(metric, name string, labels map[string]string) (float64, bool) {
	families, err := metrics.Registry.Gather()
	if err != nil {
		return 0, false
	}
	for _, f := range families {
		if f.GetName() != metric {
			continue
		}
		for _, m := range f.GetMetric() {
			if labelsMatch(m, name, labels) {
				return m.GetGauge().GetValue(), true
			}
		}
	}
	return 0, false
}

func labelsMatch(m *dto.Metric, name string, want map[string]string) bool {
	have := map[string]string{}
	for _, l := range m.GetLabel() {
		have[l.GetName()] = l.GetValue()
	}
	if have["name"] != name {
		return false
	}
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}
