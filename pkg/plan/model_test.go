package plan

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
)

// modelInput is a plan over profiles, one run each holding ideal devices, predicting predict.
func modelInput(profiles []string, ideal map[string][]int64, predict []string, decorate func(c Cell, w *tw.TestRunWrapper)) SummaryInput {
	spec := sizingSpec(1, []string{"4"}, profiles...)
	spec.Predict = predict
	return inputOf(spec, ideals(ideal, decorate))
}

// TestModel: C1, C2 and C4 (1, 2 and 4 cores) hold exactly 1000 devices per core, so the model is
// 1000 · cores^1. C3 was measured too (2980) and is held out: predicted 3000, off by
// (3000 − 2980) / 2980 = +0.67 %, within 1 %. C8 lies beyond the measured sizes. C5 has no
// Profile: it is named with what to do, and every figure stays empty.
func TestModel(t *testing.T) {
	measured := map[string][]int64{"C1/4": {1000}, "C2/4": {2000}, "C4/4": {4000}, "C3/4": {2980}}
	in := modelInput([]string{"C1", "C2", "C4", "C3"}, measured, []string{"C3", "C8", "C5"}, func(c Cell, w *tw.TestRunWrapper) {
		if c.Profile == "C4" {
			w.Status.Profile = nil // no snapshot: its size comes from the Profile
		}
	})
	m := Model(in, Summarize(in), sizes)
	if m == nil {
		t.Fatal("no model")
	}
	if m.Points != 3 || m.Exponent != "1.000" || m.Scale != "1000.00" || len(m.Untrusted) != 0 {
		t.Errorf("model points %d exponent %s scale %s untrusted %q; want 3, 1.000, 1000.00, none", m.Points, m.Exponent, m.Scale, m.Untrusted)
	}
	// no residual: the 95 % range collapses onto the median
	want := []v1alpha1.SizePrediction{{
		Profile: "C3", CPU: "3", Memory: "1Gi",
		IdealMaxDevices:          &v1alpha1.FigureRange{Median: "3000", Low: "3000", High: "3000", Interval: v1alpha1.IntervalPI95, N: 3},
		SafeMaxDevices:           2400, // floor(3000 × 80 %)
		ThroughputSafeMaxDevices: 2400,
		Limit:                    v1alpha1.LimitTarget,
		MeasuredIdealMaxDevices:  2980,
		ErrorPercent:             "0.7",
		Message: "predicted (interpolated) from 3 measured profiles: ideal devices ∝ cores^1.00; its range is the 95 % prediction interval; " +
			"measured 2980 (held out of the model): off by 0.7 %",
	}, {
		Profile: "C8", CPU: "8", Memory: "4Gi",
		IdealMaxDevices:          &v1alpha1.FigureRange{Median: "8000", Low: "8000", High: "8000", Interval: v1alpha1.IntervalPI95, N: 3},
		SafeMaxDevices:           6400, // floor(8000 × 80 %)
		ThroughputSafeMaxDevices: 6400,
		Limit:                    v1alpha1.LimitTarget,
		Message:                  "predicted (extrapolated) from 3 measured profiles: ideal devices ∝ cores^1.00; its range is the 95 % prediction interval",
	}, {
		Profile: "C5",
		Message: "no Profile C5: create it (kubectl get profiles) to predict its capacity",
	}}
	if diff := cmp.Diff(want, m.Predictions); diff != "" {
		t.Errorf("predictions (-want +got):\n%s", diff)
	}
}

// TestModelMemoryBound: the measured profiles grew 0.5 MiB per device from 100 MiB, so C3's
// 1 GiB holds (1024 × 80 % − 100) / 0.5 = 1438.4 → 1438 devices, fewer than the 2400 its
// throughput allows: memory bounds the prediction, and says so.
func TestModelMemoryBound(t *testing.T) {
	measured := map[string][]int64{"C1/4": {1000}, "C2/4": {2000}, "C4/4": {4000}}
	in := modelInput([]string{"C1", "C2", "C4"}, measured, []string{"C3"}, func(_ Cell, w *tw.TestRunWrapper) { withMemory(w, 100, "0.5") })
	m := Model(in, Summarize(in), sizes)
	p := m.Predictions[0]
	const msg = "predicted (interpolated) from 3 measured profiles: ideal devices ∝ cores^1.00; its range is the 95 % prediction interval; bounded by memory: " +
		"0.5000 MiB per device (median of the measured profiles) fills 80 % of 1024 MiB, from 100 MiB before the load, at 1438 devices"
	if p.SafeMaxDevices != 1438 || p.Limit != v1alpha1.LimitMemory || p.Message != msg || p.IdealMaxDevices.Median != "3000" {
		t.Errorf("prediction safe %d limit %q ideal %+v\n message %q\nwant 1438 memory 3000\n message %q", p.SafeMaxDevices, p.Limit, p.IdealMaxDevices, p.Message, msg)
	}
	// Both bounds are kept, so the answer can rescale the one and cap at the other.
	if p.ThroughputSafeMaxDevices != 2400 || p.MemoryBound != 1438 {
		t.Errorf("throughput bound %d, memory bound %d; want 2400 (floor(3000 × 80 %%)) and 1438", p.ThroughputSafeMaxDevices, p.MemoryBound)
	}
}

// TestModelTooFew: one measured profile (C2's runs failed) fits no model: the plan says what it
// needs, and predicts nothing.
func TestModelTooFew(t *testing.T) {
	in := modelInput([]string{"C1", "C2"}, map[string][]int64{"C1/4": {1000}}, []string{"C3"}, nil)
	m := Model(in, Summarize(in), sizes)
	want := &v1alpha1.SizeModel{Points: 1, Untrusted: []string{
		"a size model needs at least 2 profiles, got 1: spec.profiles needs at least 2 measured profiles of different cpu besides those in spec.predict"}}
	if diff := cmp.Diff(want, m); diff != "" {
		t.Errorf("model (-want +got):\n%s", diff)
	}

	// C1 and C2 measured but C2 held out to be predicted: one point again
	in = modelInput([]string{"C1", "C2"}, map[string][]int64{"C1/4": {1000}, "C2/4": {2000}}, []string{"C2"}, nil)
	if m := Model(in, Summarize(in), sizes); m.Points != 1 || len(m.Predictions) != 0 || len(m.Untrusted) != 1 {
		t.Errorf("held-out profile counted as a point: %+v", m)
	}

	in = modelInput([]string{"C1", "C2"}, map[string][]int64{"C1/4": {1000}, "C2/4": {2000}}, nil, nil)
	if m := Model(in, Summarize(in), sizes); m != nil {
		t.Errorf("model %+v without spec.predict, want none", m)
	}
}
