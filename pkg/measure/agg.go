package measure

import (
	"fmt"
	"math"
)

// MetricType mirrors k6's four metric types.
type MetricType string

// The k6 metric types.
const (
	Counter MetricType = "counter"
	Gauge   MetricType = "gauge"
	Rate    MetricType = "rate"
	Trend   MetricType = "trend"
)

func (t MetricType) valid() bool {
	switch t {
	case Counter, Gauge, Rate, Trend:
		return true
	}
	return false
}

// Agg folds the samples of one metric series (or one time window of it).
// Counts and sums are exact; trends additionally keep a Histogram. Which
// fields matter depends on the metric type, the rest stay zero.
type Agg struct {
	Count   uint64  `json:"n"`
	Sum     float64 `json:"s,omitempty"`
	Min     float64 `json:"lo,omitempty"`
	Max     float64 `json:"hi,omitempty"`
	NonZero uint64  `json:"nz,omitempty"` // rate: samples whose value is not 0
	// Gauge: the last value by sample time, and that time (unix ns).
	Last     float64    `json:"last,omitempty"`
	LastTime int64      `json:"lt,omitempty"`
	Hist     *Histogram `json:"h,omitempty"` // trend only
}

// Add folds one sample taken at unix-ns time t.
// Non-finite samples are dropped: they have no rank, would poison sums and
// cannot be encoded as JSON.
func (a *Agg) Add(typ MetricType, v float64, t int64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	if a.Count == 0 || v < a.Min {
		a.Min = v
	}
	if a.Count == 0 || v > a.Max {
		a.Max = v
	}
	a.Count++
	a.Sum += v
	switch typ {
	case Rate:
		if v != 0 {
			a.NonZero++
		}
	case Gauge:
		if t >= a.LastTime {
			a.Last, a.LastTime = v, t
		}
	case Trend:
		if a.Hist == nil {
			a.Hist = &Histogram{}
		}
		a.Hist.Add(v)
	}
}

// Merge folds b into a as if b's samples had been added to a. For gauges the
// later value wins; see MergeAdditive for summing across runners.
func (a *Agg) Merge(b Agg) {
	if b.Count == 0 {
		return
	}
	if a.Count == 0 || b.Min < a.Min {
		a.Min = b.Min
	}
	if a.Count == 0 || b.Max > a.Max {
		a.Max = b.Max
	}
	a.Count += b.Count
	a.Sum += b.Sum
	a.NonZero += b.NonZero
	if b.LastTime >= a.LastTime {
		a.Last, a.LastTime = b.Last, b.LastTime
	}
	if b.Hist != nil {
		if a.Hist == nil {
			a.Hist = &Histogram{}
		}
		a.Hist.Merge(b.Hist)
	}
}

// Avg is the exact arithmetic mean.
func (a *Agg) Avg() float64 {
	if a.Count == 0 {
		return 0
	}
	return a.Sum / float64(a.Count)
}

// Quantile returns the q-quantile (0..1) with k6's definition: linear
// interpolation between the order statistics at floor and ceil of q*(n-1).
// Both are read from the histogram (each within RelativeAccuracy) and the
// exact min and max bound the result, so the result is within
// RelativeAccuracy of k6's exact value for same-signed data.
func (a *Agg) Quantile(q float64) float64 {
	n := uint64(0)
	if a.Hist != nil {
		n = a.Hist.Count()
	}
	if n == 0 {
		return 0
	}
	pos := q * float64(n-1)
	lo, hi := uint64(math.Floor(pos)), uint64(math.Ceil(pos))
	at := func(r uint64) float64 {
		switch r {
		case 0:
			return a.Min
		case n - 1:
			return a.Max
		}
		return min(max(a.Hist.ValueAtRank(r), a.Min), a.Max)
	}
	j, k := at(lo), at(hi)
	return j + (k-j)*(pos-math.Floor(pos))
}

func (a *Agg) validate(typ MetricType) error {
	switch {
	case a.NonZero > a.Count:
		return fmt.Errorf("nonzero count %d exceeds sample count %d", a.NonZero, a.Count)
	case a.Count > 0 && a.Min > a.Max:
		return fmt.Errorf("min %g exceeds max %g", a.Min, a.Max)
	case typ == Trend && a.Hist.Count() != a.Count:
		return fmt.Errorf("histogram holds %d values but count is %d", a.Hist.Count(), a.Count)
	case typ != Trend && a.Hist != nil:
		return fmt.Errorf("histogram present on a %s metric", typ)
	}
	return nil
}
