package runners

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/measure"
)

func TestChooseParallelism(t *testing.T) {
	measured := &CapacityRecord{Run: "calib", IterationsPerCoreSecond: 500, VUsPerCore: 200}
	cases := []struct {
		name       string
		load       Load
		cores      float64
		capacity   Capacity
		maxN       int
		want       int
		source     string
		reasonHave []string
	}{
		{"no capacity known: one runner, measured by this run", Load{IterationsPerSecond: 5000, Devices: 1e6}, 2, Capacity{}, 1000,
			1, v1alpha1.ParallelismUncalibrated, []string{"1 runner:", "no runner capacity known", "this run measures it"}},
		{"given per runner", Load{IterationsPerSecond: 5000, Devices: 1e6}, 2, Capacity{GivenIterationsPerSecond: 1200}, 1000,
			5, v1alpha1.ParallelismFromGiven, []string{"5 runners", "5000 iterations/s at 1200 per runner (spec.runnerCapacity.iterationsPerSecond)"}},
		{"given wins over measured", Load{IterationsPerSecond: 5000, Devices: 1e6}, 2, Capacity{GivenIterationsPerSecond: 2500, Measured: measured}, 1000,
			2, v1alpha1.ParallelismFromGiven, nil},
		{"measured per core, planned at 70% of 2 cores", Load{IterationsPerSecond: 5000, Devices: 1e6}, 2, Capacity{Measured: measured}, 1000,
			8, v1alpha1.ParallelismFromCalibration, []string{"8 runners", "at 700 per runner", "500 per core measured by calib", "2 cores", "70% CPU"}}, // 5000/700 = 7.1
		{"no CPU set: one core assumed", Load{IterationsPerSecond: 5000, Devices: 1e6}, 0, Capacity{Measured: measured}, 1000,
			15, v1alpha1.ParallelismFromCalibration, []string{"1 core assumed"}}, // 5000/350 = 14.3
		{"VU load uses VUs", Load{VUs: 1000, Devices: 1000}, 1, Capacity{Measured: measured, GivenIterationsPerSecond: 1}, 1000,
			8, v1alpha1.ParallelismFromCalibration, []string{"1000 VUs at 140 per runner"}}, // 1000/140 = 7.1
		{"VU load with a measured rate only: uncalibrated", Load{VUs: 1000, Devices: 1000}, 1, Capacity{Measured: &CapacityRecord{Run: "r", IterationsPerCoreSecond: 10}}, 1000,
			1, v1alpha1.ParallelismUncalibrated, nil},
		{"bounded by the maximum", Load{IterationsPerSecond: 1e7, Devices: 1e8}, 1, Capacity{GivenIterationsPerSecond: 100}, 1000,
			1000, v1alpha1.ParallelismFromGiven, []string{"100000 runners wanted, 1000 is the most"}},
		{"bounded by separate's 100", Load{IterationsPerSecond: 1e5, Devices: 1e8}, 1, Capacity{GivenIterationsPerSecond: 100}, 100,
			100, v1alpha1.ParallelismFromGiven, nil},
		{"bounded by the devices", Load{IterationsPerSecond: 100, Devices: 3}, 1, Capacity{GivenIterationsPerSecond: 1}, 1000,
			3, v1alpha1.ParallelismFromGiven, []string{"3 devices, one runner each at most"}},
		{"a tiny load is one runner", Load{IterationsPerSecond: 0.5, Devices: 100}, 1, Capacity{GivenIterationsPerSecond: 100}, 1000,
			1, v1alpha1.ParallelismFromGiven, nil},
	}
	for _, c := range cases {
		n, source, reason := ChooseParallelism(c.load, c.cores, c.capacity, c.maxN)
		if n != c.want || source != c.source {
			t.Errorf("%s: got %d (%s), want %d (%s); reason %q", c.name, n, source, c.want, c.source, reason)
		}
		for _, h := range c.reasonHave {
			if !strings.Contains(reason, h) {
				t.Errorf("%s: reason %q lacks %q", c.name, reason, h)
			}
		}
	}
}

func TestLoadOf(t *testing.T) {
	spec := func(typ v1alpha1.TestType, devices int32, period string, iterations *int32) *v1alpha1.TestRunSpec {
		return &v1alpha1.TestRunSpec{Type: typ, Load: &v1alpha1.LoadSpec{Devices: ptr.To(devices), Period: v1alpha1.Duration(period), Iterations: iterations}}
	}
	peak := spec(v1alpha1.TestTypePeak, 1000, "10s", nil)
	peak.Peak = &v1alpha1.PeakSpec{StepDevices: 1000, MaxDevices: ptr.To[int32](5000), StepDuration: "1m"}
	cases := []struct {
		name string
		spec *v1alpha1.TestRunSpec
		want Load
		ok   bool
	}{
		{"arrival rate: devices over period", spec(v1alpha1.TestTypeLoad, 100000, "200s", nil), Load{IterationsPerSecond: 500, Devices: 100000}, true},
		{"benchmark: devices as VUs", spec(v1alpha1.TestTypeBenchmark, 300, "", ptr.To[int32](5)), Load{VUs: 300, Devices: 300}, true},
		{"peak: its highest step", peak, Load{IterationsPerSecond: 500, Devices: 5000}, true},
		{"no device model", &v1alpha1.TestRunSpec{}, Load{}, false},
	}
	for _, c := range cases {
		got, ok, err := LoadOf(c.spec)
		if err != nil || ok != c.ok || got != c.want {
			t.Errorf("%s: got %+v %v %v, want %+v %v", c.name, got, ok, err, c.want, c.ok)
		}
	}
}

func TestRunnerCores(t *testing.T) {
	with := func(limits, requests corev1.ResourceList) *v1alpha1.TestRunSpec {
		return &v1alpha1.TestRunSpec{Runner: &v1alpha1.RunnerSpec{Resources: &corev1.ResourceRequirements{Limits: limits, Requests: requests}}}
	}
	cpu := func(s string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(s)}
	}
	for _, c := range []struct {
		spec *v1alpha1.TestRunSpec
		want float64
	}{
		{&v1alpha1.TestRunSpec{}, 0},
		{with(cpu("2"), cpu("500m")), 2},
		{with(nil, cpu("500m")), 0.5},
		{with(corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}, nil), 0},
	} {
		if got := RunnerCores(c.spec); got != c.want {
			t.Errorf("RunnerCores = %v, want %v", got, c.want)
		}
	}
}

func TestMeasureCapacity(t *testing.T) {
	s := &measure.Summary{
		Duration: 100 * time.Second,
		Runners: []measure.RunnerInfo{
			{Name: "r0", CPU: measure.CPU{UserSeconds: 80, SystemSeconds: 20, Cores: 2}, CPUUtilization: 0.5},
			{Name: "r1", CPU: measure.CPU{UserSeconds: 60, SystemSeconds: 40, Cores: 2}, CPUUtilization: 0.5},
		},
		Metrics: map[string]*measure.MetricSummary{"iterations": {Stats: measure.Stats{Sum: 100000}}},
	}
	rec, ok := MeasureCapacity("calib", s, 0, false, false)
	if !ok || rec.IterationsPerCoreSecond != 500 || rec.VUsPerCore != 0 || rec.Runners != 2 || rec.CPUUtilization != 0.5 {
		t.Errorf("arrival rate: got %+v %v", rec, ok)
	}
	// 400 VUs kept 200 CPU-seconds / 100 s = 2 cores busy: 200 VUs per core.
	if rec, ok := MeasureCapacity("calib", s, 400, true, false); !ok || rec.VUsPerCore != 200 || !rec.GeneratorBound {
		t.Errorf("VU load: got %+v %v", rec, ok)
	}
	if _, ok := MeasureCapacity("calib", s, 0, false, true); ok {
		t.Error("partial results measured a capacity")
	}
	noCPU := *s
	noCPU.Runners = []measure.RunnerInfo{{Name: "r0"}}
	if _, ok := MeasureCapacity("calib", &noCPU, 0, false, false); ok {
		t.Error("runners without CPU time measured a capacity")
	}
}

func TestDecodeCapacityRecord(t *testing.T) {
	good, _ := EncodeCapacityRecord(CapacityRecord{Run: "calib", IterationsPerCoreSecond: 500, CPUUtilization: 0.4, Runners: 2})
	if c, err := DecodeCapacityRecord(good); err != nil || c.IterationsPerCoreSecond != 500 {
		t.Fatalf("round trip: %+v %v", c, err)
	}
	for name, data := range map[string]string{
		"too large":     `{"run":"` + strings.Repeat("x", 5000) + `","iterationsPerCoreSecond":1}`,
		"not JSON":      `{`,
		"unknown field": `{"run":"a","iterationsPerCoreSecond":1,"runnersToMake":1000}`,
		"negative":      `{"run":"a","iterationsPerCoreSecond":-5}`,
		"zero":          `{"run":"a","iterationsPerCoreSecond":0}`,
		"unbelievable":  `{"run":"a","iterationsPerCoreSecond":1e300}`,
	} {
		if c, err := DecodeCapacityRecord([]byte(data)); err == nil {
			t.Errorf("%s: decoded %+v", name, c)
		}
	}
}

func TestCapacityRecordName(t *testing.T) {
	a, b := CapacityRecordName("export default function () {}", ""), CapacityRecordName("export default function () { }", "")
	if a == b || !strings.HasPrefix(a, "fleetbench-capacity-") || len(a) > 63 {
		t.Errorf("names %q %q", a, b)
	}
	if CapacityRecordName("", "/scripts/a.js@img") == CapacityRecordName("", "/scripts/b.js@img") {
		t.Error("local files share a name")
	}
}
