package runenv

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// Every TestRun's status, as Prometheus gauges labelled by namespace, name and testid: what a
// Grafana dashboard or an alert reads. While the load runs the counts and rates come from
// status.progress; once collected, from status.results. Values are the status's own, so a
// scraped p95 is the status's p95.
var runLabels = []string{"namespace", "name", "testid"}

func runDesc(name, help string, extra ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, append(append([]string(nil), runLabels...), extra...), nil)
}

var (
	runInfo          = runDesc("fleetbench_testrun_info", "A TestRun, with its type and profile.", "type", "profile")
	runPhase         = runDesc("fleetbench_testrun_status_phase", "1 for the TestRun's current phase.", "phase")
	runVerdict       = runDesc("fleetbench_testrun_verdict", "1 for the TestRun's verdict, once it has one.", "verdict")
	runRequests      = runDesc("fleetbench_testrun_requests", "Requests made so far (final once collected).")
	runFailed        = runDesc("fleetbench_testrun_failed_requests", "Failed requests (final once collected).")
	runDroppedIters  = runDesc("fleetbench_testrun_dropped_iterations", "Iterations k6 could not start in time.")
	runRPS           = runDesc("fleetbench_testrun_requests_per_second", "Requests per second: the last window's while running, the whole run's once collected.")
	runLatency       = runDesc("fleetbench_testrun_latency_seconds", "Request duration quantiles merged over all runners (p95 of the last window while running).", "quantile")
	runTargetMemory  = runDesc("fleetbench_testrun_target_memory_bytes", "The target's memory before the load, after it, and its peak.", "stat")
	runTargetCPU     = runDesc("fleetbench_testrun_target_cpu_cores_per_core", "The target's CPU load per core: average over the run and peak.", "stat")
	runRestarts      = runDesc("fleetbench_testrun_target_restarts", "Restarts of target containers during the run.")
	runRunners       = runDesc("fleetbench_testrun_runners", "Runner pods by state.", "state")
	runStart         = runDesc("fleetbench_testrun_start_time_seconds", "When the runners were started (unix seconds).")
	runProgressWrite = runDesc("fleetbench_testrun_progress_update_time_seconds", "When status.progress was last refreshed from the runners (unix seconds).")
)

var runDescs = []*prometheus.Desc{runInfo, runPhase, runVerdict, runRequests, runFailed, runDroppedIters, runRPS,
	runLatency, runTargetMemory, runTargetCPU, runRestarts, runRunners, runStart, runProgressWrite}

func describeRuns(ch chan<- *prometheus.Desc) {
	for _, d := range runDescs {
		ch <- d
	}
}

// collectRun sends one TestRun's gauges; a number status does not have yet is left out.
func collectRun(ch chan<- prometheus.Metric, run *v1alpha1.TestRun) {
	st := &run.Status
	labels := []string{run.Namespace, run.Name, st.TestID}
	gauge := func(d *prometheus.Desc, v float64, extra ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, append(append([]string(nil), labels...), extra...)...)
	}
	number := func(d *prometheus.Desc, text string, extra ...string) {
		if v, err := strconv.ParseFloat(text, 64); err == nil {
			gauge(d, v, extra...)
		}
	}
	seconds := func(d *prometheus.Desc, text string, extra ...string) {
		if v, err := time.ParseDuration(text); err == nil {
			gauge(d, v.Seconds(), extra...)
		}
	}
	gauge(runInfo, 1, string(run.Spec.Type), run.Spec.Profile)
	phase := st.Phase
	if phase == "" {
		phase = v1alpha1.PhasePending
	}
	gauge(runPhase, 1, string(phase))
	if st.Verdict != "" {
		gauge(runVerdict, 1, string(st.Verdict))
	}
	if st.StartTime != nil {
		gauge(runStart, float64(st.StartTime.Unix()))
	}
	switch res := st.Results; {
	case res != nil && res.Requests != nil:
		gauge(runRequests, float64(res.Requests.Total))
		gauge(runFailed, float64(res.Requests.Dropped))
		if res.Iterations != nil {
			gauge(runDroppedIters, float64(res.Iterations.Dropped))
		}
		if res.Throughput != nil {
			number(runRPS, res.Throughput.RequestsPerSecond)
		}
		if l := res.Latency; l != nil {
			for q, v := range map[string]string{"0.5": l.P50, "0.9": l.P90, "0.95": l.P95, "0.99": l.P99} {
				seconds(runLatency, v, q)
			}
		}
	case st.Progress != nil:
		p := st.Progress
		gauge(runRequests, float64(p.Requests))
		gauge(runFailed, float64(p.Failed))
		number(runRPS, p.RequestsPerSecond)
		seconds(runLatency, p.P95, "0.95")
	}
	if p := st.Progress; p != nil {
		gauge(runProgressWrite, float64(p.UpdateTime.Unix()))
	}
	if t := st.Target; t != nil {
		if m := t.Memory; m != nil {
			for stat, v := range map[string]int64{"before": m.BeforeMiB, "after": m.AfterMiB, "peak": m.PeakMiB} {
				if v != 0 {
					gauge(runTargetMemory, float64(v)*(1<<20), stat)
				}
			}
		}
		if c := t.CPU; c != nil {
			number(runTargetCPU, c.AverageCoresPerCore, "average")
			number(runTargetCPU, c.PeakCoresPerCore, "peak")
		}
		gauge(runRestarts, float64(t.Restarts))
	}
	if r := st.Runners; r != nil {
		for state, n := range map[string]int32{"desired": r.Desired, "ready": r.Ready, "running": r.Running, "succeeded": r.Succeeded, "failed": r.Failed} {
			gauge(runRunners, float64(n), state)
		}
	}
}
