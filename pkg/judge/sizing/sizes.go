package sizing

import (
	"errors"
	"fmt"
	"math"
)

// Capacity across profiles, to predict a size that was not run.
//
// The model is capacity = Scale · Cores^Exponent, fitted by least squares on log(capacity) against
// log(cores). Why cores: the services fleetbench sizes are CPU-bound request handlers (TLS, parsing,
// a database round trip per push), whose throughput grows with the cores they get, at best
// linearly (exponent 1) and usually less (contention). The exponent says how well it scales.
// Memory is a separate, hard limit (devices × memory per device against the profile's memory),
// handled where the limiting resource is decided, not mixed into this curve: a least-squares fit
// on two collinear predictors (profiles grow cores and memory together) could not tell them apart.
// Why a power law and not the USL: profiles are few (3 or 4), and a power law has 2 parameters,
// so 3 profiles already leave a residual to estimate the error from.

// SizeByCores is SizeModel.By for the cores model.
const SizeByCores = "cores"

// assumedTwoPointError is the relative range given with a 2-point model, which has no residual to
// estimate an error from. It is an assumption, not a measurement: the accuracy goal for a
// predicted size (±15 %), and it says so in Untrusted.
const assumedTwoPointError = 0.15

// SizePoint is one measured profile.
type SizePoint struct {
	Name      string
	Cores     float64
	MemoryGiB float64
	// Capacity is what the profile holds, e.g. its ideal devices (median over repetitions).
	Capacity float64
}

// SizeModel is capacity = Scale · Cores^Exponent.
type SizeModel struct {
	Exponent, Scale float64
	Points          int
	// ResidualLog is the residual standard error in natural-log units (0.1 ≈ ±10 %), on n−2
	// degrees of freedom; 0 with 2 points.
	ResidualLog float64
	// By is the predictor, SizeByCores.
	By string
	// LogCoresMean and LogCoresSS are the mean of ln(cores) and the sum of squared deviations
	// from it: the prediction interval widens away from the measured sizes through them.
	LogCoresMean, LogCoresSS float64
	// MinCores and MaxCores are the measured range: a prediction outside it is an extrapolation.
	MinCores, MaxCores float64
	// Untrusted lists each reason to doubt the model, in words a planner reads.
	Untrusted []string
}

// FitSizes fits the model to the measured profiles. It fails with fewer than 2 profiles, fewer
// than 2 distinct core counts, or a core count or capacity that is not positive and finite.
func FitSizes(points []SizePoint) (SizeModel, error) {
	if len(points) < 2 {
		return SizeModel{}, fmt.Errorf("a size model needs at least 2 profiles, got %d", len(points))
	}
	m := SizeModel{Points: len(points), By: SizeByCores, MinCores: math.Inf(1), MaxCores: math.Inf(-1)}
	var sx, sy float64
	for _, p := range points {
		if !(p.Cores > 0) || !(p.Capacity > 0) || math.IsInf(p.Cores, 0) || math.IsInf(p.Capacity, 0) {
			return SizeModel{}, fmt.Errorf("profile %q: cores and capacity must be positive and finite, got %v and %v", p.Name, p.Cores, p.Capacity)
		}
		sx += math.Log(p.Cores)
		sy += math.Log(p.Capacity)
		m.MinCores, m.MaxCores = math.Min(m.MinCores, p.Cores), math.Max(m.MaxCores, p.Cores)
	}
	n := float64(len(points))
	mx, my := sx/n, sy/n
	var sxx, sxy float64
	for _, p := range points {
		dx := math.Log(p.Cores) - mx
		sxx += dx * dx
		sxy += dx * (math.Log(p.Capacity) - my)
	}
	if sxx == 0 {
		return SizeModel{}, errors.New("a size model needs at least 2 distinct core counts")
	}
	m.Exponent = sxy / sxx
	m.Scale = math.Exp(my - m.Exponent*mx)
	m.LogCoresMean, m.LogCoresSS = mx, sxx
	if len(points) == 2 {
		m.Untrusted = append(m.Untrusted, fmt.Sprintf("2 points: no error estimate; the range shown is an assumed ±%.0f %%", assumedTwoPointError*100))
	} else {
		var rss float64
		for _, p := range points {
			r := math.Log(p.Capacity) - math.Log(m.Scale) - m.Exponent*math.Log(p.Cores)
			rss += r * r
		}
		m.ResidualLog = math.Sqrt(rss / (n - 2))
	}
	switch {
	case m.Exponent < 0.2:
		m.Untrusted = append(m.Untrusted, fmt.Sprintf("capacity barely grows with cores (exponent %.2f): the limit is elsewhere (workers, memory, the load generators)", m.Exponent))
	case m.Exponent > 1.2:
		m.Untrusted = append(m.Untrusted, fmt.Sprintf("capacity grows faster than cores (exponent %.2f): the small sizes were probably limited by something else", m.Exponent))
	}
	return m, nil
}

// Prediction is a predicted capacity with its range: the 95 % prediction interval, or, from 2
// points, an assumed one.
type Prediction struct {
	Median, Low, High float64
	// Extrapolated is true outside the measured core range.
	Extrapolated bool
	// Assumed: the range is the assumed ±15 % of a 2-point model, not an interval estimated
	// from the data; whoever shows it must say so.
	Assumed bool
}

// Predict is the model's capacity at the given cores. With 3 or more points the range is the 95 %
// prediction interval of a new profile in log space, exp(± t(0.975, n−2) · ResidualLog ·
// sqrt(1 + 1/n + (ln cores − mean)² / SS)), so it widens away from the measured sizes. With 2
// points it is the assumed ±15 % (see assumedTwoPointError), which says nothing about
// extrapolation: a planner must read Extrapolated and Untrusted. Cores <= 0 gives Prediction{}.
func (m SizeModel) Predict(cores float64) Prediction {
	if !(cores > 0) || m.Points < 2 || math.IsInf(cores, 0) {
		return Prediction{}
	}
	med := m.Scale * math.Pow(cores, m.Exponent)
	p := Prediction{Median: med, Extrapolated: cores < m.MinCores || cores > m.MaxCores}
	if m.Points == 2 {
		p.Low, p.High, p.Assumed = med*(1-assumedTwoPointError), med*(1+assumedTwoPointError), true
		return p
	}
	n := float64(m.Points)
	dx := math.Log(cores) - m.LogCoresMean
	half := StudentTQuantile(0.975, n-2) * m.ResidualLog * math.Sqrt(1+1/n+dx*dx/m.LogCoresSS)
	p.Low, p.High = med*math.Exp(-half), med*math.Exp(half)
	return p
}
