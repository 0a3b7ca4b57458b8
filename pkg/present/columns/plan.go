package columns

import (
	"fmt"
	"strings"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// FromRow reads a CapacityPlan's table row back as the TestRun it was taken from (pkg/plan
// fills the row from the child's status), so a plan's rows render through the same columns as
// a TestRun. Only the columns marked Row have their value; the others are blank.
func FromRow(row *v1alpha1.CapacityRow) *v1alpha1.TestRun {
	run := &v1alpha1.TestRun{}
	run.Name, run.Spec.Profile = row.TestRun, row.Profile
	s := &run.Status
	s.Phase, s.Verdict, s.Reason, s.GeneratorBound = row.Phase, row.Verdict, row.Reason, row.GeneratorBound
	res := &v1alpha1.Results{}
	// A row keeps counts, not whether they were measured: a finished row's zeros are counts,
	// an unfinished row's are none.
	if row.Phase == v1alpha1.PhaseSucceeded || row.RequestsAccepted != 0 || row.RequestsDropped != 0 || row.DroppedPercent != "" {
		res.Requests = &v1alpha1.RequestCounts{Accepted: row.RequestsAccepted,
			Dropped: row.RequestsDropped, DroppedPercent: row.DroppedPercent}
	}
	if row.RequestsPerSecond != "" || row.ReceivedMbps != "" || row.SentMbps != "" {
		res.Throughput = &v1alpha1.Throughput{RequestsPerSecond: row.RequestsPerSecond, ReceivedMbps: row.ReceivedMbps, SentMbps: row.SentMbps}
	}
	res.Latency = row.Latency.DeepCopy()
	if res.Requests != nil || res.Throughput != nil || res.Latency != nil {
		s.Results = res
	}
	if row.MemoryPeakMiB != 0 || row.MemoryPerDeviceMiB != "" || row.CPUPerCore != "" {
		s.Target = &v1alpha1.TargetUsage{}
		if row.MemoryPeakMiB != 0 || row.MemoryPerDeviceMiB != "" {
			s.Target.Memory = &v1alpha1.MemoryUsage{PeakMiB: row.MemoryPeakMiB, PerDeviceMiB: row.MemoryPerDeviceMiB}
		}
		if row.CPUPerCore != "" {
			s.Target.CPU = &v1alpha1.CPUUsage{AverageCoresPerCore: row.CPUPerCore}
		}
	}
	c := v1alpha1.CapacityResult{PushesPerSecond: row.PushesPerSecond, IdealMaxDevices: row.IdealMaxDevices, TypicalMaxDevices: row.TypicalMaxDevices,
		SafeMaxDevices: row.SafeMaxDevices, MaxSafeDevicesByMemory: row.MaxSafeDevicesByMemory, BreakingPointDevices: row.BreakingPointDevices}
	if c != (v1alpha1.CapacityResult{}) {
		s.Capacity = &c
	}
	return run
}

// PlanRows are a CapacityPlan's table rows with their key cells: the repetition, and seed 000's
// test name and handler count. Seed 000 pivots its sizing table (a column per machine, a row
// per test and handler count); the test is the plan's name, then each sweep value but the
// handlers', a tls sweep as SSL / noSSL (bench-6-SSL).
func PlanRows(p *v1alpha1.CapacityPlan) []Row {
	out := make([]Row, 0, len(p.Status.Table))
	for i := range p.Status.Table {
		r := &p.Status.Table[i]
		test, handlers := []string{p.Name}, ""
		for _, d := range p.Spec.Sweep {
			v, ok := r.Values[d.Name()]
			switch {
			case !ok:
			case d.Field == v1alpha1.SweepFieldTLS:
				if v == "true" {
					test = append(test, "SSL")
				} else {
					test = append(test, "noSSL")
				}
			case IsHandlers(d.Env) || IsHandlers(d.ScriptEnv):
				handlers = v
			default:
				test = append(test, d.Name()+"="+v)
			}
		}
		out = append(out, Row{Run: FromRow(r), Values: r.Values, Plan: true, Keys: map[string]string{
			Test: strings.Join(test, "-"), Handlers: handlers, Repetition: fmt.Sprint(max(r.Repetition, 1)),
		}})
	}
	return out
}
