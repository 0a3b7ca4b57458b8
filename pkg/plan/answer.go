package plan

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/judge/sizing"
)

// SizeOption is one profile the answer may choose: measured (from status.summary) or predicted
// (status.model.predictions), with its two bounds; 0 means a bound is not known.
type SizeOption struct {
	Profile          string
	Cores, MemoryGiB float64
	// ThroughputSafe is the safe fleet by throughput at the plan's push period, and
	// ThroughputLimit what bound it (cpu, latency, errors, generator, target): the rate it
	// holds, so the devices follow the period (Little's law).
	ThroughputSafe  int64
	ThroughputLimit string
	// MemorySafe is the safe fleet by memory: devices × memory per device do not depend on
	// how often the devices push, so it holds at every period.
	MemorySafe int64
	Predicted  bool
	Price      *v1alpha1.ProfilePrice
}

// SafeAt is the option's safe fleet at period and what bounds it there: the smaller of the
// throughput bound, rescaled from planPeriod, and the memory bound, which is never rescaled. A
// longer period stretches the first only, so a profile bound by cpu at the plan's period can be
// bound by memory at the question's, and the other way round. 0 and "" when neither is known.
func (o SizeOption) SafeAt(planPeriod, period time.Duration) (int64, string) {
	throughput := sizing.Rescale(o.ThroughputSafe, planPeriod, period)
	switch {
	case o.MemorySafe > 0 && (throughput == 0 || o.MemorySafe < throughput):
		return o.MemorySafe, v1alpha1.LimitMemory
	case throughput > 0:
		return throughput, o.ThroughputLimit
	}
	return 0, ""
}

// OptionAt is an option at the plan's period and at the question's, with its price.
type OptionAt struct {
	SizeOption
	// SafeFleet and PlanLimit are at the plan's period, as the summary has them.
	SafeFleet int64
	PlanLimit string
	// Safe and Limit are at the question's period (SafeAt); Holds: Safe ≥ the devices.
	Safe  int64
	Limit string
	Holds bool
	// Monthly is the monthly cost, "" without a price.
	Monthly string
}

// maxMessage is FleetAnswer.message's MaxLength.
const maxMessage = 1024

// Answer says which option holds the fleet q with the plan's headroom: the smallest (fewest
// cores, then least memory, then measured before predicted) whose safe fleet at q.Period
// (SizeOption.SafeAt: the throughput bound rescaled through Little's law, capped by the memory
// bound) is at least q.Devices.
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
		at[i].SafeFleet, at[i].PlanLimit = o.SafeAt(planPeriod, planPeriod)
		at[i].Safe, at[i].Limit = o.SafeAt(planPeriod, period)
		at[i].Holds = at[i].Safe > 0 && at[i].Safe >= q.Devices
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
		b.WriteString(rescaled(c, planPeriod, period))
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

// rescaled says how the safe fleet at another period came about: the throughput bound
// rescaled from the plan's, or the memory bound, which does not follow the period.
func rescaled(c OptionAt, planPeriod, period time.Duration) string {
	if c.Limit != v1alpha1.LimitMemory {
		return fmt.Sprintf(", rescaled from %s at the plan's %s", Grouped(c.ThroughputSafe), FormatPeriod(planPeriod))
	}
	s := ", the memory bound, which no period changes"
	if t := sizing.Rescale(c.ThroughputSafe, planPeriod, period); t > 0 {
		s += fmt.Sprintf(" (throughput, rescaled from %s at the plan's %s, would allow %s)", Grouped(c.ThroughputSafe), FormatPeriod(planPeriod), Grouped(t))
	}
	return s
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
