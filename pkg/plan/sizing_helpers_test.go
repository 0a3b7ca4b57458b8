package plan

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
)

// sizingSpec is bench()'s plan (100 devices every 6 s, safe 80 % by default) over profiles,
// with WORKERS swept over workers and reps repetitions of every cell.
func sizingSpec(reps int32, workers []string, profiles ...string) *v1alpha1.CapacityPlanSpec {
	p := bench()
	p.Spec.Profiles = profiles
	p.Spec.Sweep[0].Values = workers
	p.Spec.Repetitions = reps
	return &p.Spec
}

// sizes are the Profiles the tests run on, by lower-case name as the controller keys them.
var sizes = map[string]v1alpha1.ProfileSpec{
	"c1": {CPU: resource.MustParse("1"), Memory: resource.MustParse("512Mi")},
	"c2": {CPU: resource.MustParse("2"), Memory: resource.MustParse("1Gi")},
	"c3": {CPU: resource.MustParse("3"), Memory: resource.MustParse("1Gi")},
	"c4": {CPU: resource.MustParse("4"), Memory: resource.MustParse("2Gi")},
	"c8": {CPU: resource.MustParse("8"), Memory: resource.MustParse("4Gi")},
}

// benchRun is a benchmark on profile that Succeeded and PASSED holding ideal devices: pushes/s
// is ideal/6 (the 6 s push period), its status carries the Profile it measured.
func benchRun(profile string, ideal int64) *tw.TestRunWrapper {
	w := tw.MakeTestRun("child-"+profile, "ns").Type(v1alpha1.TestTypeBenchmark).Devices(100, "6s").Profile(profile).
		Phase(v1alpha1.PhaseSucceeded, v1alpha1.ReasonCompleted, "").Verdict(v1alpha1.VerdictPassed).
		CapacityResult(&v1alpha1.CapacityResult{PushesPerSecond: fmt.Sprintf("%.2f", float64(ideal)/6), IdealMaxDevices: ideal})
	snapshot(w, profile)
	return w
}

// snapshot copies the profile's size into the run's status, as provisioning does.
func snapshot(w *tw.TestRunWrapper, profile string) {
	sp, ok := sizes[strings.ToLower(profile)]
	if !ok {
		return
	}
	w.Status.Profile = &v1alpha1.ProfileSnapshot{Name: profile, Spec: v1alpha1.ProfileSnapshotSpec{CPU: sp.CPU, Memory: sp.Memory}}
}

// withCPU sets the target's average and peak load per core.
func withCPU(w *tw.TestRunWrapper, avg, peak string) *tw.TestRunWrapper {
	return w.TargetUsage(&v1alpha1.TargetUsage{CPU: &v1alpha1.CPUUsage{AverageCoresPerCore: avg, PeakCoresPerCore: peak}})
}

// withMemory sets the target's memory before the load and its growth per device.
func withMemory(w *tw.TestRunWrapper, beforeMiB int64, perDevice string) *tw.TestRunWrapper {
	if w.Status.Target == nil {
		w.Status.Target = &v1alpha1.TargetUsage{}
	}
	w.Status.Target.Memory = &v1alpha1.MemoryUsage{BeforeMiB: beforeMiB, PerDeviceMiB: perDevice}
	return w
}

// inputOf builds every cell's child with child and the table from them, as the controller does.
func inputOf(spec *v1alpha1.CapacityPlanSpec, child func(c Cell) Child) SummaryInput {
	cells := Cells(spec)
	children := make([]Child, len(cells))
	for i, c := range cells {
		children[i] = child(c)
	}
	return SummaryInput{Spec: spec, Rows: Rows(spec, "plan", cells, children), Children: children}
}

// ideals gives each cell the ideal devices of its repetition, keyed "PROFILE/WORKERS"; a cell
// not listed has no child yet.
func ideals(m map[string][]int64, decorate func(c Cell, w *tw.TestRunWrapper)) func(c Cell) Child {
	return func(c Cell) Child {
		vs := m[c.Profile+"/"+c.Values[0]]
		if int(c.Repetition) > len(vs) {
			return Child{}
		}
		w := benchRun(c.Profile, vs[c.Repetition-1])
		if decorate != nil {
			decorate(c, w)
		}
		return Child{Run: w.Obj(), TargetGone: true}
	}
}

// summaryOf is the named profile's summary.
func summaryOf(t *testing.T, sums []v1alpha1.ProfileSummary, profile string) v1alpha1.ProfileSummary {
	t.Helper()
	for _, s := range sums {
		if s.Profile == profile {
			return s
		}
	}
	t.Fatalf("no summary for %s in %+v", profile, sums)
	return v1alpha1.ProfileSummary{}
}
