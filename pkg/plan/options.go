package plan

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/judge"
)

// SizeOptions are a plan's options: each profile of status.summary and each prediction of
// status.model, with its throughput bound (the floor's safe count, a prediction's
// throughputSafeMaxDevices) and its memory bound (memoryBound); cores and memory come from
// the Profile (keyed by its name; looked up without case, as TestRun.spec.profile), or for a
// prediction whose Profile is gone from the prediction itself. A Profile that is gone leaves
// the size unknown (0).
func SizeOptions(p *v1alpha1.CapacityPlan, profiles map[string]v1alpha1.ProfileSpec) []SizeOption {
	byName := make(map[string]v1alpha1.ProfileSpec, len(profiles))
	for k, v := range profiles {
		byName[strings.ToLower(k)] = v
	}
	sized := func(name string) SizeOption {
		o := SizeOption{Profile: name}
		if spec, ok := byName[strings.ToLower(name)]; ok {
			o.Cores = spec.CPU.AsApproximateFloat64()
			o.MemoryGiB = spec.Memory.AsApproximateFloat64() / (1 << 30)
			o.Price = spec.Price
		}
		return o
	}
	var out []SizeOption
	for _, s := range p.Status.Summary {
		o := sized(s.Profile)
		var throughput int64
		var limit string
		if s.Floor != nil {
			throughput, limit = s.Floor.SafeMaxDevices, s.Floor.Limit
		}
		o.ThroughputSafe, o.ThroughputLimit, o.MemorySafe = bounds(throughput, limit, s.MemoryBound, s.SafeFleet, s.Limit)
		out = append(out, o)
	}
	if m := p.Status.Model; m != nil {
		for _, pr := range m.Predictions {
			o := sized(pr.Profile)
			o.ThroughputSafe, o.ThroughputLimit, o.MemorySafe = bounds(pr.ThroughputSafeMaxDevices, throughputLimit(pr), pr.MemoryBound, pr.SafeMaxDevices, pr.Limit)
			o.Predicted = true
			if o.Cores == 0 {
				o.Cores = quantity(pr.CPU)
			}
			if o.MemoryGiB == 0 {
				o.MemoryGiB = quantity(pr.Memory) / (1 << 30)
			}
			out = append(out, o)
		}
	}
	return out
}

// bounds are an option's throughput bound with its limit and its memory bound, from what
// status says: the throughput figure and its limit, the memory bound, and the safe fleet with
// its limit (the smaller of the two). Without a throughput figure (a status written before the
// bounds were kept apart, or no ideal devices) the safe fleet stands in for it: it is at most
// the throughput bound, so rescaling it claims no more than was measured. A throughput figure
// bound by memory (an OOM-killed run) also caps the fleet at every period, as memory does.
func bounds(throughput int64, limit string, memory, safe int64, safeLimit string) (int64, string, int64) {
	if throughput == 0 {
		throughput, limit = safe, safeLimit
	}
	if memory == 0 && safeLimit == v1alpha1.LimitMemory {
		memory = safe
	}
	if limit == v1alpha1.LimitMemory && throughput > 0 && (memory == 0 || throughput < memory) {
		memory = throughput
	}
	return throughput, limit, memory
}

// throughputLimit is what bounds a prediction's throughput: its limit, unless memory bounds
// it, when the throughput's own is not kept.
func throughputLimit(pr v1alpha1.SizePrediction) string {
	if pr.Limit == v1alpha1.LimitMemory {
		return ""
	}
	return pr.Limit
}

func quantity(s string) float64 {
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return 0
	}
	return q.AsApproximateFloat64()
}

// PlanPeriod is the push period the plan's device counts were measured at: its children's,
// as the TestRun's capacity figures take it.
func PlanPeriod(spec *v1alpha1.CapacityPlanSpec) (time.Duration, error) {
	a, err := childAssumptions(spec)
	if err != nil {
		return 0, err
	}
	if a.Period <= 0 {
		return 0, fmt.Errorf("the plan's push period %s is not a positive duration: set spec.capacity.pushPeriod or spec.template.load.period", a.Period)
	}
	return a.Period, nil
}

// childAssumptions are the capacity assumptions every child runs with (judge.CapacityAssumptions
// of the child spec: the plan's spec.capacity applies only where the template has none).
func childAssumptions(spec *v1alpha1.CapacityPlanSpec) (judge.Assumptions, error) {
	cells := Cells(spec)
	if len(cells) == 0 {
		return judge.Assumptions{}, errors.New("the plan lists no profiles")
	}
	child, err := ChildSpec(spec, cells[0])
	if err != nil {
		return judge.Assumptions{}, err
	}
	a, err := judge.CapacityAssumptions(&child)
	if err != nil {
		return a, errors.New("the plan has no push period: set spec.capacity.pushPeriod or spec.template.load.period")
	}
	return a, nil
}

// StatusAnswer answers the plan's spec.question from its status (summary and model) and the
// Profiles, as status.answer carries it; nil without a question.
func StatusAnswer(p *v1alpha1.CapacityPlan, profiles map[string]v1alpha1.ProfileSpec) *v1alpha1.FleetAnswer {
	q := p.Spec.Question
	if q == nil {
		return nil
	}
	period, err := PlanPeriod(&p.Spec)
	if err != nil {
		return &v1alpha1.FleetAnswer{Devices: q.Devices, Period: string(q.Period), Message: truncateMessage(err.Error())}
	}
	a := Answer(*q, period, SizeOptions(p, profiles))
	return &a
}
