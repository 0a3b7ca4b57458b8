package plan

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

func perHour(amount, currency, asOf string) *v1alpha1.ProfilePrice {
	return &v1alpha1.ProfilePrice{PerHour: ptr.To(v1alpha1.PriceAmount(amount)), Currency: currency, AsOf: asOf}
}

// fleetOptions: C1, C2 (priced per machine), C4 (priced per vCPU and GiB, its throughput
// allowing 130,000 at 260s but its memory 100,000), measured at 260s.
func fleetOptions() []SizeOption {
	return []SizeOption{
		{Profile: "C4", Cores: 4, MemoryGiB: 8, ThroughputSafe: 130000, ThroughputLimit: v1alpha1.LimitCPU, MemorySafe: 100000,
			Price: &v1alpha1.ProfilePrice{PerVCPUHour: ptr.To(v1alpha1.PriceAmount("0.02")), PerGiBHour: ptr.To(v1alpha1.PriceAmount("0.005")), Currency: "EUR", AsOf: "2026-10-01"}},
		{Profile: "C1", Cores: 1, MemoryGiB: 2, ThroughputSafe: 20000, ThroughputLimit: v1alpha1.LimitCPU},
		{Profile: "C2", Cores: 2, MemoryGiB: 4, ThroughputSafe: 52000, ThroughputLimit: v1alpha1.LimitCPU, Price: perHour("0.084", "EUR", "2026-11-01")},
	}
}

// TestAnswer: the smallest profile whose safe fleet, rescaled to the question's period, holds
// the devices; headroom, limit, cost in both price forms, and the sentence a planner signs.
func TestAnswer(t *testing.T) {
	const plan = 260 * time.Second
	cases := []struct {
		name    string
		q       v1alpha1.FleetQuestion
		period  time.Duration
		options []SizeOption
		want    v1alpha1.FleetAnswer
	}{{
		name: "C2 holds 40,000 at the plan's period, priced per hour",
		q:    v1alpha1.FleetQuestion{Devices: 40000, Period: "260s"}, period: plan, options: fleetOptions(),
		want: v1alpha1.FleetAnswer{Devices: 40000, Period: "260s", Rate: "153.8", Profile: "C2", SafeMaxDevices: 52000, HeadroomPercent: "23.1",
			Limit: "cpu", MonthlyCost: "61.32", CostPer1000Devices: "1.53", Currency: "EUR", PriceAsOf: "2026-11-01",
			Message: "C2 holds 40,000 devices pushing every 260s (153.8/s): safe 52,000 (23.1 % headroom), bound by cpu; 61.32 EUR a month, 1.53 EUR per 1,000 devices (price of 2026-11-01)"},
	}, {
		// Seed 000: "for a period of 100 s you need to divide the number by 2". Halving the
		// period halves every throughput bound: C2's 52,000 become 26,000, C4's 130,000 65,000,
		// now below its memory bound of 100,000, so cpu bounds C4 at 130s.
		name: "half the period: C4, priced per vCPU-hour and GiB-hour",
		q:    v1alpha1.FleetQuestion{Devices: 40000, Period: "130s"}, period: plan, options: fleetOptions(),
		want: v1alpha1.FleetAnswer{Devices: 40000, Period: "130s", Rate: "307.7", Profile: "C4", SafeMaxDevices: 65000, HeadroomPercent: "38.5",
			Limit: "cpu", MonthlyCost: "87.60", CostPer1000Devices: "2.19", Currency: "EUR", PriceAsOf: "2026-10-01",
			Message: "C4 holds 40,000 devices pushing every 130s (307.7/s): safe 65,000 (38.5 % headroom), rescaled from 130,000 at the plan's 260s, bound by cpu; 87.60 EUR a month, 2.19 EUR per 1,000 devices (price of 2026-10-01)"},
	}, {
		name: "twice the period: C1 holds it, no price",
		q:    v1alpha1.FleetQuestion{Devices: 40000, Period: "520s"}, period: plan, options: fleetOptions(),
		want: v1alpha1.FleetAnswer{Devices: 40000, Period: "520s", Rate: "76.92", Profile: "C1", SafeMaxDevices: 40000, HeadroomPercent: "0.0", Limit: "cpu",
			Message: "C1 holds 40,000 devices pushing every 520s (76.92/s): safe 40,000 (0.0 % headroom), rescaled from 20,000 at the plan's 260s, bound by cpu"},
	}, {
		name: "nothing holds: the largest is named",
		q:    v1alpha1.FleetQuestion{Devices: 500000, Period: "260s"}, period: plan, options: fleetOptions(),
		want: v1alpha1.FleetAnswer{Devices: 500000, Period: "260s", Rate: "1923",
			Message: "no measured or predicted profile holds 500,000 devices pushing every 260s (1923/s): the largest, C4, holds 100,000 at that period, bound by memory; add a larger profile to the plan (or to spec.predict)"},
	}, {
		name: "a smaller predicted size wins over a larger measured one",
		q:    v1alpha1.FleetQuestion{Devices: 60000, Period: "260s"}, period: plan,
		options: append(fleetOptions(), SizeOption{Profile: "C3", Cores: 3, MemoryGiB: 6, ThroughputSafe: 75000, ThroughputLimit: "cpu", Predicted: true}),
		want: v1alpha1.FleetAnswer{Devices: 60000, Period: "260s", Rate: "230.8", Profile: "C3", Predicted: true, SafeMaxDevices: 75000, HeadroomPercent: "20.0", Limit: "cpu",
			Message: "C3 (predicted) holds 60,000 devices pushing every 260s (230.8/s): safe 75,000 (20.0 % headroom), bound by cpu"},
	}, {
		name: "the same size measured and predicted (the scoreboard): measured wins",
		q:    v1alpha1.FleetQuestion{Devices: 30000, Period: "260s"}, period: plan,
		options: append([]SizeOption{{Profile: "C2", Cores: 2, MemoryGiB: 4, ThroughputSafe: 60000, Predicted: true}}, fleetOptions()...),
		want: v1alpha1.FleetAnswer{Devices: 30000, Period: "260s", Rate: "115.4", Profile: "C2", SafeMaxDevices: 52000, HeadroomPercent: "42.3", Limit: "cpu",
			MonthlyCost: "61.32", CostPer1000Devices: "2.04", Currency: "EUR", PriceAsOf: "2026-11-01",
			Message: "C2 holds 30,000 devices pushing every 260s (115.4/s): safe 52,000 (42.3 % headroom), bound by cpu; 61.32 EUR a month, 2.04 EUR per 1,000 devices (price of 2026-11-01)"},
	}, {
		name: "a profile of unknown size (its Profile is gone) is never the smallest",
		q:    v1alpha1.FleetQuestion{Devices: 10000, Period: "260s"}, period: plan,
		options: append([]SizeOption{{Profile: "gone", ThroughputSafe: 900000, ThroughputLimit: "generator"}}, fleetOptions()...),
		want: v1alpha1.FleetAnswer{Devices: 10000, Period: "260s", Rate: "38.46", Profile: "C1", SafeMaxDevices: 20000, HeadroomPercent: "50.0", Limit: "cpu",
			Message: "C1 holds 10,000 devices pushing every 260s (38.46/s): safe 20,000 (50.0 % headroom), bound by cpu"},
	}, {
		name: "the generators bound it: said to be a lower bound",
		q:    v1alpha1.FleetQuestion{Devices: 10, Period: "1m"}, period: time.Minute,
		options: []SizeOption{{Profile: "small", Cores: 0.25, MemoryGiB: 0.5, ThroughputSafe: 462, ThroughputLimit: "generator"}},
		want: v1alpha1.FleetAnswer{Devices: 10, Period: "1m", Rate: "0.1667", Profile: "small", SafeMaxDevices: 462, HeadroomPercent: "97.8", Limit: "generator",
			Message: "small holds 10 devices pushing every 1m (0.1667/s): safe 462 (97.8 % headroom), bound by the load generators (so at least that)"},
	}, {
		name: "no safe fleet anywhere",
		q:    v1alpha1.FleetQuestion{Devices: 10, Period: "1m"}, period: time.Minute,
		options: []SizeOption{{Profile: "C1", Cores: 1, MemoryGiB: 2}},
		want: v1alpha1.FleetAnswer{Devices: 10, Period: "1m", Rate: "0.1667",
			Message: "no measured or predicted profile of the plan has a safe fleet (no passing rows, no prediction): nothing holds 10 devices pushing every 1m (0.1667/s)"},
	}, {
		name: "a period that is not one",
		q:    v1alpha1.FleetQuestion{Devices: 10, Period: "soon"}, period: time.Minute, options: fleetOptions(),
		want: v1alpha1.FleetAnswer{Devices: 10, Period: "soon", Message: `the question's period "soon" is not a positive duration such as 260s or 5m`},
	}, {
		name: "a plan without a push period",
		q:    v1alpha1.FleetQuestion{Devices: 10, Period: "1m"}, options: fleetOptions(),
		want: v1alpha1.FleetAnswer{Devices: 10, Period: "1m", Message: "the plan has no push period to rescale from: set spec.capacity.pushPeriod or spec.template.load.period"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Answer(tc.q, tc.period, tc.options)
			if got != tc.want {
				t.Errorf("Answer\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// TestAnswerWithOptions: every option at the question's period, smallest first, whether it
// holds the fleet and its monthly cost.
func TestAnswerWithOptions(t *testing.T) {
	_, at := AnswerWithOptions(v1alpha1.FleetQuestion{Devices: 40000, Period: "130s"}, 260*time.Second, fleetOptions())
	var got []string
	for _, o := range at {
		got = append(got, strings.Join([]string{o.Profile, Grouped(o.Safe), yes(o.Holds), o.Monthly}, " "))
	}
	want := "C1 10,000 no |C2 26,000 no 61.32|C4 65,000 yes 87.60"
	if strings.Join(got, "|") != want {
		t.Errorf("options %q, want %q", strings.Join(got, "|"), want)
	}
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// TestSizeOptions: the summary's safe fleets and limits, the model's predictions, sizes and
// prices from the Profiles found without case, and a gone Profile's prediction sized from it.
func TestSizeOptions(t *testing.T) {
	p := &v1alpha1.CapacityPlan{Status: v1alpha1.CapacityPlanStatus{
		Summary: []v1alpha1.ProfileSummary{{Profile: "C1", SafeFleet: 20000, Limit: "cpu"}, {Profile: "C2", Limit: "generator"}},
		Model: &v1alpha1.SizeModel{Predictions: []v1alpha1.SizePrediction{
			{Profile: "C3", CPU: "3", Memory: "6Gi", SafeMaxDevices: 75000, Limit: "cpu"},
			{Profile: "c2", SafeMaxDevices: 50000},
		}},
	}}
	price := perHour("0.084", "EUR", "2026-11-01")
	profiles := map[string]v1alpha1.ProfileSpec{
		"c1": {CPU: resource.MustParse("1"), Memory: resource.MustParse("2Gi")},
		"c2": {CPU: resource.MustParse("2"), Memory: resource.MustParse("4Gi"), Price: price},
	}
	got := SizeOptions(p, profiles)
	want := []SizeOption{
		{Profile: "C1", Cores: 1, MemoryGiB: 2, ThroughputSafe: 20000, ThroughputLimit: "cpu"},
		{Profile: "C2", Cores: 2, MemoryGiB: 4, ThroughputLimit: "generator", Price: price},
		{Profile: "C3", Cores: 3, MemoryGiB: 6, ThroughputSafe: 75000, ThroughputLimit: "cpu", Predicted: true},
		{Profile: "c2", Cores: 2, MemoryGiB: 4, ThroughputSafe: 50000, Predicted: true, Price: price},
	}
	if len(got) != len(want) {
		t.Fatalf("options %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("option %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestPlanPeriod: the children's push period, as their capacity figures take it: the
// template's capacity when it has one (the plan's does not reach the children then), else the
// plan's, else the template's load period.
func TestPlanPeriod(t *testing.T) {
	spec := func(load, planPush, templatePush string) *v1alpha1.CapacityPlanSpec {
		s := &v1alpha1.CapacityPlanSpec{Profiles: []string{"C1"}}
		if load != "" {
			s.Template.Load = &v1alpha1.LoadSpec{Period: v1alpha1.Duration(load)}
		}
		if planPush != "" {
			s.Capacity = &v1alpha1.CapacitySpec{PushPeriod: v1alpha1.Duration(planPush)}
		}
		if templatePush != "" {
			s.Template.Capacity = &v1alpha1.CapacitySpec{PushPeriod: v1alpha1.Duration(templatePush)}
		}
		return s
	}
	cases := []struct {
		name string
		spec *v1alpha1.CapacityPlanSpec
		want time.Duration
		err  string
	}{
		{"load period", spec("260s", "", ""), 260 * time.Second, ""},
		{"plan's push period over the load's", spec("10s", "100s", ""), 100 * time.Second, ""},
		{"template's push period over the plan's", spec("10s", "100s", "50s"), 50 * time.Second, ""},
		{"none", spec("", "", ""), 0, "no push period"},
		{"no profiles", &v1alpha1.CapacityPlanSpec{}, 0, "no profiles"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := PlanPeriod(tc.spec)
			if got != tc.want || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("PlanPeriod = %v, %v; want %v, error containing %q", got, err, tc.want, tc.err)
			}
		})
	}
}

func TestGroupedAndSignificant(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 52000: "52,000", 1234567: "1,234,567", -1500: "-1,500"} {
		if got := Grouped(n); got != want {
			t.Errorf("Grouped(%d) = %q, want %q", n, got, want)
		}
	}
	for v, want := range map[float64]string{153.846: "153.8", 0.38461: "0.3846", 15384.6: "15385", 1: "1.000"} {
		if got := significant(v); got != want {
			t.Errorf("significant(%v) = %q, want %q", v, got, want)
		}
	}
}

// TestMemoryBoundIsNotStretched: a longer period rescales throughput, not memory. C4 holds
// 100,000 devices by memory at 260s: at 520s still 100,000 (not 200,000), so 150,000 devices
// fit no profile; C2's throughput bound doubles to 104,000.
func TestMemoryBoundIsNotStretched(t *testing.T) {
	a, at := AnswerWithOptions(v1alpha1.FleetQuestion{Devices: 150000, Period: "520s"}, 260*time.Second, fleetOptions())
	for _, o := range at {
		want := map[string]int64{"C1": 40000, "C2": 104000, "C4": 100000}[o.Profile]
		if o.Safe != want {
			t.Errorf("%s: safe %d at 520s, want %d", o.Profile, o.Safe, want)
		}
	}
	if a.Profile != "" {
		t.Errorf("answer %q: nothing holds 150,000 once memory is not stretched", a.Profile)
	}
}
