package columns

import (
	"fmt"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// The cells' readers: each nil-safe, "" where the status has no such part (yet).

func handlers(r *v1alpha1.TestRun) string {
	for _, c := range r.Spec.Target.Components {
		for _, e := range c.Env {
			if IsHandlers(e.Name) {
				return e.Value
			}
		}
	}
	return ""
}

// outcome is the verdict once the run Succeeded, "Failed (reason)" when it failed, the phase
// while it has not finished.
func outcome(r *v1alpha1.TestRun) string {
	s := r.Status
	switch {
	case s.Phase == v1alpha1.PhaseFailed:
		if s.Reason != "" {
			return "Failed (" + s.Reason + ")"
		}
		return "Failed"
	case s.Phase == "":
		return string(v1alpha1.PhasePending)
	case s.Phase != v1alpha1.PhaseSucceeded:
		return string(s.Phase)
	}
	return string(s.Verdict)
}

func requests(f func(*v1alpha1.RequestCounts) string) func(*v1alpha1.TestRun) string {
	return func(r *v1alpha1.TestRun) string {
		if res := r.Status.Results; res != nil && res.Requests != nil {
			return f(res.Requests)
		}
		return ""
	}
}

func throughput(f func(*v1alpha1.Throughput) string) func(*v1alpha1.TestRun) string {
	return func(r *v1alpha1.TestRun) string {
		if res := r.Status.Results; res != nil && res.Throughput != nil {
			return f(res.Throughput)
		}
		return ""
	}
}

func latency(f func(*v1alpha1.Latency) string) func(*v1alpha1.TestRun) string {
	return func(r *v1alpha1.TestRun) string {
		if res := r.Status.Results; res != nil && res.Latency != nil {
			return f(res.Latency)
		}
		return ""
	}
}

func checks(r *v1alpha1.TestRun) string {
	if res := r.Status.Results; res != nil && res.Checks != nil {
		return fmt.Sprintf("%d / %d", res.Checks.Passed, res.Checks.Passed+res.Checks.Failed)
	}
	return ""
}

func memory(f func(*v1alpha1.MemoryUsage) string) func(*v1alpha1.TestRun) string {
	return func(r *v1alpha1.TestRun) string {
		if t := r.Status.Target; t != nil && t.Memory != nil {
			return f(t.Memory)
		}
		return ""
	}
}

func cpuPerCore(r *v1alpha1.TestRun) string {
	if t := r.Status.Target; t != nil && t.CPU != nil {
		return t.CPU.AverageCoresPerCore
	}
	return ""
}

func restarts(r *v1alpha1.TestRun) string {
	if t := r.Status.Target; t != nil {
		return fmt.Sprint(t.Restarts)
	}
	return ""
}

func capacity(f func(*v1alpha1.CapacityResult) int64) func(*v1alpha1.TestRun) string {
	return func(r *v1alpha1.TestRun) string {
		if c := r.Status.Capacity; c != nil {
			return count(f(c))
		}
		return ""
	}
}

func pushesPerSecond(r *v1alpha1.TestRun) string {
	if c := r.Status.Capacity; c != nil && c.PushesPerSecond != "" {
		return c.PushesPerSecond
	}
	return throughput(func(t *v1alpha1.Throughput) string { return t.RequestsPerSecond })(r)
}
