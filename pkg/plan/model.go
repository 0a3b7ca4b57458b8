package plan

import (
	"fmt"
	"math"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/judge/sizing"
)

// Model fits capacity across the measured profiles against their cores and predicts each
// spec.predict profile; a predicted profile the plan also measured is held out of the fit and
// its measurement is the scoreboard. profiles holds the Profiles' specs by lower-case name
// (a predicted profile was never run, so only its Profile says its size). nil without
// spec.predict.
func Model(in SummaryInput, summaries []v1alpha1.ProfileSummary, profiles map[string]v1alpha1.ProfileSpec) *v1alpha1.SizeModel {
	if len(in.Spec.Predict) == 0 {
		return nil
	}
	heldOut := map[string]bool{}
	for _, p := range in.Spec.Predict {
		heldOut[strings.ToLower(p)] = true
	}
	measured := map[string]float64{}
	var points []sizing.SizePoint
	var mems []memorySample
	var limits []v1alpha1.CapacityRow // the measured profiles' throughput limits
	for _, s := range summaries {
		ideal := idealMedian(s)
		if ideal <= 0 {
			continue
		}
		measured[strings.ToLower(s.Profile)] = ideal
		cores, memGiB, ok := in.measuredSize(s.Profile, profiles)
		if !ok || heldOut[strings.ToLower(s.Profile)] {
			continue
		}
		points = append(points, sizing.SizePoint{Name: s.Profile, Cores: cores, MemoryGiB: memGiB, Capacity: ideal})
		mems = append(mems, in.ownSamples(s.Profile, true)...)
		if s.Floor != nil {
			limits = append(limits, v1alpha1.CapacityRow{Limit: s.Floor.Limit})
		}
	}
	out := &v1alpha1.SizeModel{Points: int32(len(points))}
	model, err := sizing.FitSizes(points)
	if err != nil {
		out.Untrusted = []string{err.Error() + ": spec.profiles needs at least 2 measured profiles of different cpu besides those in spec.predict"}
		return out
	}
	out.Exponent, out.Scale = format(model.Exponent, 3), format(model.Scale, 2)
	out.Untrusted = model.Untrusted
	safePercent := in.safePercent()
	for _, name := range in.Spec.Predict {
		p := predict(name, model, profiles, measured, mems, safePercent)
		if p.Limit == "" && p.IdealMaxDevices != nil { // nothing predicted: no limit to name
			p.Limit = mostCommonLimit(limits)
		}
		out.Predictions = append(out.Predictions, p)
	}
	return out
}

func predict(name string, m sizing.SizeModel, profiles map[string]v1alpha1.ProfileSpec, measured map[string]float64, mems []memorySample, safePercent int32) v1alpha1.SizePrediction {
	out := v1alpha1.SizePrediction{Profile: name}
	spec, ok := profiles[strings.ToLower(name)]
	if !ok {
		out.Message = fmt.Sprintf("no Profile %s: create it (kubectl get profiles) to predict its capacity", name)
		return out
	}
	out.CPU, out.Memory = spec.CPU.String(), spec.Memory.String()
	p := m.Predict(cores(spec.CPU))
	// The range says what it is: a 95 % prediction interval from 3 profiles or more, an
	// assumption from 2 (no residual to estimate an error from).
	interval, rangeWords := v1alpha1.IntervalPI95, "the 95 % prediction interval"
	if p.Assumed {
		interval, rangeWords = v1alpha1.IntervalAssumed, fmt.Sprintf("an assumed ±%.0f %%, not measured: 2 profiles leave no error to estimate", 100*(p.High-p.Median)/p.Median)
	}
	out.IdealMaxDevices = &v1alpha1.FigureRange{Median: format(p.Median, 0), Low: format(p.Low, 0), High: format(p.High, 0), Interval: interval, N: int32(m.Points)}
	out.ThroughputSafeMaxDevices = sizing.Safe(p.Low, float64(safePercent)/100)
	out.SafeMaxDevices = out.ThroughputSafeMaxDevices
	where := "interpolated"
	if p.Extrapolated {
		where = "extrapolated"
	}
	out.Message = fmt.Sprintf("predicted (%s) from %d measured profiles: ideal devices ∝ cores^%.2f; its range is %s", where, m.Points, m.Exponent, rangeWords)
	if len(mems) > 0 {
		s := medianSample(mems)
		s.profileMiB = float64(spec.Memory.Value()) / (1 << 20)
		b := boundFrom(s, safePercent, "median of the measured profiles")
		out.MemoryBound = b.devices
		if b.devices > 0 && b.devices < out.SafeMaxDevices {
			out.SafeMaxDevices, out.Limit = b.devices, v1alpha1.LimitMemory
			out.Message += "; bounded by memory: " + b.message
		}
	}
	if got, ok := measured[strings.ToLower(name)]; ok {
		out.MeasuredIdealMaxDevices = int64(math.Round(got))
		out.ErrorPercent = format(100*(p.Median-got)/got, 1)
		out.Message += fmt.Sprintf("; measured %d (held out of the model): off by %s %%", out.MeasuredIdealMaxDevices, out.ErrorPercent)
	}
	out.Message = cutTo(out.Message, maxPredictionMessage)
	return out
}

// maxPredictionMessage is SizePrediction.message's MaxLength.
const maxPredictionMessage = 512

// idealMedian is a summary's floor ideal devices median, 0 when not measured.
func idealMedian(s v1alpha1.ProfileSummary) float64 {
	if s.Floor == nil || s.Floor.IdealMaxDevices == nil {
		return 0
	}
	v := decimal(s.Floor.IdealMaxDevices.Median)
	if math.IsNaN(v) {
		return 0
	}
	return v
}

// measuredSize is the size a profile was measured at: the snapshot its children copied, else
// the Profile as it is now.
func (in SummaryInput) measuredSize(profile string, profiles map[string]v1alpha1.ProfileSpec) (coresN, memGiB float64, ok bool) {
	for _, ch := range in.Children {
		if ch.Run != nil && ch.Run.Status.Profile != nil && sameProfile(ch.Run.Status.Profile.Name, profile) {
			sp := ch.Run.Status.Profile.Spec
			return cores(sp.CPU), gib(sp.Memory), true
		}
	}
	if spec, found := profiles[strings.ToLower(profile)]; found {
		return cores(spec.CPU), gib(spec.Memory), true
	}
	return 0, 0, false
}

// ownSamples are the memory footprints of a profile's passing children: those that grew, or
// those that did not.
func (in SummaryInput) ownSamples(profile string, grew bool) []memorySample {
	var out []memorySample
	for i, ch := range in.Children {
		if ch.Run != nil && i < len(in.Rows) && in.Rows[i].Profile == profile && passed(in.Rows[i]) {
			if s, ok := sampleOf(ch.Run); ok && (s.perDeviceMiB > 0) == grew {
				out = append(out, s)
			}
		}
	}
	return out
}

func cores(q resource.Quantity) float64 { return float64(q.MilliValue()) / 1000 }
func gib(q resource.Quantity) float64   { return float64(q.Value()) / (1 << 30) }
