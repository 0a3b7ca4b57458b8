package plan

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/judge"
	"fleetbench.dev/fleetbench/pkg/judge/sizing"
)

// SizeOption is one profile the answer may choose: measured (from status.summary) or predicted
// (status.model.predictions). SafeFleet is at the plan's push period; 0 means none known.
type SizeOption struct {
	Profile          string
	Cores, MemoryGiB float64
	SafeFleet        int64
	Limit            string
	Predicted        bool
	Price            *v1alpha1.ProfilePrice
}

// OptionAt is an option with its safe fleet rescaled to the question's period and its price.
type OptionAt struct {
	SizeOption
	// Safe is SafeFleet at the question's period (Little's law); Holds: Safe ≥ the devices.
	Safe  int64
	Holds bool
	// Monthly is the monthly cost, "" without a price.
	Monthly string
}

// maxMessage is FleetAnswer.message's MaxLength.
const maxMessage = 1024

// Answer says which option holds the fleet q with the plan's headroom: the smallest (fewest
// cores, then least memory, then measured before predicted) whose safe fleet, measured at
// planPeriod and rescaled to q.Period through Little's law, is at least q.Devices.
func Answer(q v1alpha1.FleetQuestion, planPeriod time.Duration, options []SizeOption) v1alpha1.FleetAnswer {
	a, _ := answer(q, planPeriod, options)
	return a
}

// AnswerWithOptions is Answer and every option at the question's period, in the order Answer
// weighs them (for a table of them).
func AnswerWithOptions(q v1alpha1.FleetQuestion, planPeriod time.Duration, options []SizeOption) (v1alpha1.FleetAnswer, []OptionAt) {
	return answer(q, planPeriod, options)
}

func answer(q v1alpha1.FleetQuestion, planPeriod time.Duration, options []SizeOption) (v1alpha1.FleetAnswer, []OptionAt) {
	a := v1alpha1.FleetAnswer{Devices: q.Devices, Period: string(q.Period)}
	period, err := time.ParseDuration(string(q.Period))
	switch {
	case err != nil || period <= 0:
		a.Message = truncateMessage(fmt.Sprintf("the question's period %q is not a positive duration such as 260s or 5m", q.Period))
		return a, nil
	case q.Devices < 1:
		a.Message = "the question asks for no devices: give devices of 1 or more"
		return a, nil
	case planPeriod <= 0:
		a.Message = "the plan has no push period to rescale from: set spec.capacity.pushPeriod or spec.template.load.period"
		return a, nil
	}
	rate := sizing.RateFor(q.Devices, period)
	a.Rate = significant(rate)
	fleet := fmt.Sprintf("%s devices pushing every %s (%s/s)", Grouped(q.Devices), q.Period, a.Rate)

	ordered := slices.Clone(options)
	slices.SortStableFunc(ordered, func(x, y SizeOption) int {
		// An option whose size is unknown (its Profile is gone) comes last: it cannot be
		// called smaller than any other.
		if c := compareKnown(x.Cores, y.Cores); c != 0 {
			return c
		}
		if c := compareKnown(x.MemoryGiB, y.MemoryGiB); c != 0 {
			return c
		}
		if x.Predicted != y.Predicted {
			if x.Predicted {
				return 1
			}
			return -1
		}
		return strings.Compare(x.Profile, y.Profile)
	})
	at := make([]OptionAt, len(ordered))
	chosen, largest := -1, -1
	for i, o := range ordered {
		at[i] = OptionAt{SizeOption: o}
		if o.SafeFleet > 0 {
			at[i].Safe = sizing.Rescale(o.SafeFleet, planPeriod, period)
			if o.Limit == v1alpha1.LimitMemory {
				// Devices × memory per device does not depend on how often they push: a
				// memory bound is never stretched by a longer period.
				at[i].Safe = min(at[i].Safe, o.SafeFleet)
			}
			at[i].Holds = at[i].Safe >= q.Devices
		}
		if m, ok := monthly(o); ok {
			at[i].Monthly = money(m)
		}
		if at[i].Holds && chosen < 0 {
			chosen = i
		}
		if at[i].Safe > 0 && (largest < 0 || at[i].Safe > at[largest].Safe) {
			largest = i
		}
	}
	if chosen < 0 {
		if largest < 0 {
			a.Message = truncateMessage("no measured or predicted profile of the plan has a safe fleet (no passing rows, no prediction): nothing holds " + fleet)
			return a, at
		}
		l := at[largest]
		a.Message = truncateMessage(fmt.Sprintf("no measured or predicted profile holds %s: the largest, %s, holds %s at that period%s; add a larger profile to the plan (or to spec.predict)",
			fleet, label(l.SizeOption), Grouped(l.Safe), boundBy(l.Limit)))
		return a, at
	}
	c := at[chosen]
	a.Profile, a.Predicted, a.SafeMaxDevices, a.Limit = c.Profile, c.Predicted, c.Safe, c.Limit
	headroom := float64(c.Safe-q.Devices) / float64(c.Safe) * 100
	a.HeadroomPercent = strconv.FormatFloat(headroom, 'f', 1, 64)
	var b strings.Builder
	fmt.Fprintf(&b, "%s holds %s: safe %s (%s %% headroom)", label(c.SizeOption), fleet, Grouped(c.Safe), a.HeadroomPercent)
	if period != planPeriod {
		fmt.Fprintf(&b, ", rescaled from %s at the plan's %s", Grouped(c.SafeFleet), FormatPeriod(planPeriod))
	}
	b.WriteString(boundBy(c.Limit))
	if m, ok := monthly(c.SizeOption); ok {
		p := c.Price
		a.MonthlyCost, a.CostPer1000Devices = money(m), money(sizing.PerThousandDevices(m, q.Devices))
		a.Currency, a.PriceAsOf = p.Currency, p.AsOf
		fmt.Fprintf(&b, "; %s %s a month, %s %s per 1,000 devices (price of %s)", a.MonthlyCost, p.Currency, a.CostPer1000Devices, p.Currency, p.AsOf)
	}
	a.Message = truncateMessage(b.String())
	return a, at
}

// compareKnown orders sizes ascending with 0 (unknown) last.
func compareKnown(x, y float64) int {
	switch {
	case x == y:
		return 0
	case x == 0:
		return 1
	case y == 0:
		return -1
	case x < y:
		return -1
	}
	return 1
}

func label(o SizeOption) string {
	if o.Predicted {
		return o.Profile + " (predicted)"
	}
	return o.Profile
}

func boundBy(limit string) string {
	switch limit {
	case "":
		return ""
	case v1alpha1.LimitGenerator:
		return ", bound by the load generators (so at least that)"
	}
	return ", bound by " + limit
}

// monthly is the option's monthly cost, false without a usable price (an amount the API's
// pattern admits always parses; the check guards a price written around it).
func monthly(o SizeOption) (float64, bool) {
	p := o.Price
	if p == nil {
		return 0, false
	}
	var sp sizing.Price
	ok := true
	amount := func(a *v1alpha1.PriceAmount) float64 {
		if a == nil {
			return 0
		}
		v, err := strconv.ParseFloat(string(*a), 64)
		if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
			ok = false
		}
		return v
	}
	switch {
	case p.PerHour != nil:
		sp.PerHour = amount(p.PerHour)
	case p.PerVCPUHour != nil && p.PerGiBHour != nil && o.Cores > 0:
		sp.PerVCPUHour, sp.PerGiBHour = amount(p.PerVCPUHour), amount(p.PerGiBHour)
	default:
		return 0, false
	}
	if !ok {
		return 0, false
	}
	return sp.Monthly(o.Cores, o.MemoryGiB), true
}

func money(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

// FormatPeriod writes a period in whole seconds when it is one (260s, not 4m20s), as the
// seeds and their planners write push periods.
func FormatPeriod(d time.Duration) string {
	if d > 0 && d%time.Second == 0 {
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	}
	return d.String()
}

// significant writes a rate with 4 significant digits (153.8, 0.3846, 15385).
func significant(v float64) string {
	if v <= 0 {
		return "0"
	}
	d := 3 - int(math.Floor(math.Log10(v)))
	return strconv.FormatFloat(v, 'f', max(d, 0), 64)
}

// Grouped writes a count with thousands separators: 40,000.
func Grouped(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// SizeOptions are a plan's options: each profile of status.summary (its safe fleet and
// limit) and each prediction of status.model; cores and memory come from the Profile (keyed by
// its name; looked up without case, as TestRun.spec.profile), or for a prediction whose Profile
// is gone from the prediction itself. A Profile that is gone leaves the size unknown (0).
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
		o.SafeFleet, o.Limit = s.SafeFleet, s.Limit
		out = append(out, o)
	}
	if m := p.Status.Model; m != nil {
		for _, pr := range m.Predictions {
			o := sized(pr.Profile)
			o.SafeFleet, o.Limit, o.Predicted = pr.SafeMaxDevices, pr.Limit, true
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
