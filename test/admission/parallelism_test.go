package admission

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
)

func auto(w *tw.TestRunWrapper) *tw.TestRunWrapper {
	v := intstr.FromString(v1alpha1.ParallelismAuto)
	w.Spec.Parallelism = &v
	return w
}

func capacity(w *tw.TestRunWrapper, c v1alpha1.RunnerCapacitySpec) *tw.TestRunWrapper {
	w.Spec.RunnerCapacity = &c
	return w
}

// TestParallelismAutoAdmission: spec.parallelism takes a number or auto, auto only with the
// device model it sizes from, and spec.runnerCapacity only where it is used.
func TestParallelismAutoAdmission(t *testing.T) {
	ctx := context.Background()
	run := func(name string) *tw.TestRunWrapper { return tw.MakeTestRun(name, ns) }
	peak := &v1alpha1.PeakSpec{StepDevices: 10, StepDuration: "1m", MaxDevices: ptr.To[int32](200),
		StopWhen: v1alpha1.PeakStopRules{DroppedPercentAbove: ptr.To(v1alpha1.Percent(1))}}
	refused := []invalidCase{
		{name: "parallelism a word other than auto", obj: run("p-word").Devices(100, "1s").Duration("1m").Obj(), edit: set([]string{"spec", "parallelism"}, "many"),
			want: []string{"spec.parallelism", "a number from 1 to 5000, or auto"}},
		{name: "parallelism auto without a device model", obj: auto(run("p-nodev")).Obj(),
			want: []string{"spec.parallelism: auto sizes the fleet from spec.load.devices", "give a number"}},
		{name: "runnerCapacity with a numeric parallelism", obj: capacity(run("p-cap").Parallelism(3).Devices(100, "1s").Duration("1m"), v1alpha1.RunnerCapacitySpec{IterationsPerSecond: ptr.To[int32](100)}).Obj(),
			want: []string{"spec.runnerCapacity is used only when parallelism is auto"}},
		{name: "runnerCapacity empty", obj: capacity(auto(run("p-empty")).Devices(100, "1s").Duration("1m"), v1alpha1.RunnerCapacitySpec{}).Obj(),
			want: []string{"spec.runnerCapacity", "needs iterationsPerSecond"}},
		{name: "runnerCapacity zero", obj: auto(run("p-zero")).Devices(100, "1s").Duration("1m").Obj(), edit: set([]string{"spec", "runnerCapacity", "iterationsPerSecond"}, int64(0)),
			want: []string{"spec.runnerCapacity.iterationsPerSecond", "greater than or equal to 1"}},
		// Each load model reads one figure (pkg/runners ChooseParallelism): the other is refused.
		{name: "runnerCapacity vus on an arrival-rate load", obj: capacity(auto(run("p-vus-rate")).Devices(100, "1s").Duration("1m"), v1alpha1.RunnerCapacitySpec{VUs: ptr.To[int32](20)}).Obj(),
			want: []string{"spec.runnerCapacity.vus is read only by a load of spec.load.iterations", "reads spec.runnerCapacity.iterationsPerSecond"}},
		{name: "runnerCapacity vus on a peak test", obj: capacity(auto(run("p-vus-peak")).Type(v1alpha1.TestTypePeak).Peak(peak).Devices(100, "1s"), v1alpha1.RunnerCapacitySpec{VUs: ptr.To[int32](20)}).Obj(),
			want: []string{"spec.runnerCapacity.vus is read only"}},
		{name: "runnerCapacity iterationsPerSecond on a benchmark", obj: capacity(auto(run("p-ips-bench")).Type(v1alpha1.TestTypeBenchmark).Devices(100, "1s").Iterations(3), v1alpha1.RunnerCapacitySpec{IterationsPerSecond: ptr.To[int32](50)}).Obj(),
			want: []string{"spec.runnerCapacity.iterationsPerSecond is read only by an arrival-rate load", "reads spec.runnerCapacity.vus"}},
		{name: "runnerCapacity both figures on a benchmark", obj: capacity(auto(run("p-both")).Type(v1alpha1.TestTypeBenchmark).Devices(100, "1s").Iterations(3), v1alpha1.RunnerCapacitySpec{VUs: ptr.To[int32](20), IterationsPerSecond: ptr.To[int32](50)}).Obj(),
			want: []string{"spec.runnerCapacity.iterationsPerSecond is read only"}},
		{name: "rps with parallelism auto", obj: auto(run("p-rps")).Devices(100, "1s").Duration("1m").Args("--rps", "10").Obj(),
			want: []string{"--rps limits each k6 process"}},
		{name: "rps with devices and parallelism unset (auto)", obj: run("p-rps2").Devices(100, "1s").Duration("1m").Args("--rps", "10").Obj(),
			want: []string{"--rps limits each k6 process", "unset with spec.load.devices is auto"}},
	}
	for _, tc := range refused {
		t.Run(tc.name, tc.refused)
	}

	admitted := map[string]*v1alpha1.TestRun{
		"a number, as before":              run("a-int").Parallelism(7).Obj(),
		"auto with devices":                auto(run("a-auto")).Devices(100, "1s").Duration("1m").Obj(),
		"auto with a given capacity":       capacity(auto(run("a-given")).Devices(100, "1s").Duration("1m"), v1alpha1.RunnerCapacitySpec{IterationsPerSecond: ptr.To[int32](50)}).Obj(),
		"unset with devices and capacity":  capacity(run("a-unset").Devices(100, "1s").Duration("1m"), v1alpha1.RunnerCapacitySpec{IterationsPerSecond: ptr.To[int32](50)}).Obj(),
		"auto benchmark with vus":          capacity(auto(run("a-vus")).Type(v1alpha1.TestTypeBenchmark).Devices(100, "1s").Iterations(3), v1alpha1.RunnerCapacitySpec{VUs: ptr.To[int32](20)}).Obj(),
		"auto load of iterations with vus": capacity(auto(run("a-vus-load")).Devices(100, "1s").Iterations(3), v1alpha1.RunnerCapacitySpec{VUs: ptr.To[int32](20)}).Obj(),
		"auto peak with iterationsPerSecond": capacity(auto(run("a-ips-peak")).Type(v1alpha1.TestTypePeak).Peak(peak).Devices(100, "1s"),
			v1alpha1.RunnerCapacitySpec{IterationsPerSecond: ptr.To[int32](50)}).Obj(),
		"auto with separate": auto(run("a-sep")).Devices(100, "1s").Duration("1m").Separate().Obj(),
		"rps on one runner":  run("a-rps").Parallelism(1).Devices(100, "1s").Duration("1m").Args("--rps", "10").Obj(),
	}
	for name, obj := range admitted {
		if err := env.Client.Create(ctx, obj); err != nil {
			t.Errorf("%s: refused: %v", name, err)
			continue
		}
		_ = env.Client.Delete(ctx, obj)
	}
	// An integer written as such is read back as one: existing manifests keep their meaning.
	var u unstructured.Unstructured
	obj := run("a-readback").Parallelism(4).Obj()
	if err := env.Client.Create(ctx, obj); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = env.Client.Delete(ctx, obj) }()
	u.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind("TestRun"))
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), &u); err != nil {
		t.Fatal(err)
	}
	if p, _, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "parallelism"); p != int64(4) {
		t.Errorf("spec.parallelism read back as %#v, want the integer 4", p)
	}
}
