package sizing

import (
	"math"
	"strings"
	"testing"
)

func near(got, want, rel float64) bool { return math.Abs(got-want) <= rel*math.Abs(want) }

func TestFitSizesRecoversExactPowerLaw(t *testing.T) {
	var ps []SizePoint
	for _, c := range []float64{1, 2, 4, 8} {
		ps = append(ps, SizePoint{Name: "C", Cores: c, MemoryGiB: 4 * c, Capacity: 1000 * math.Pow(c, 0.8)})
	}
	m, err := FitSizes(ps)
	if err != nil {
		t.Fatal(err)
	}
	if !near(m.Exponent, 0.8, 1e-12) || !near(m.Scale, 1000, 1e-12) || m.ResidualLog > 1e-12 || m.By != SizeByCores || m.Points != 4 {
		t.Errorf("model %+v", m)
	}
	if len(m.Untrusted) != 0 {
		t.Errorf("exact 4-point law flagged: %q", m.Untrusted)
	}
	// C3 was not run: the law predicts it, with no spread since the points lie on it exactly.
	p := m.Predict(3)
	if want := 1000 * math.Pow(3, 0.8); !near(p.Median, want, 1e-12) || !near(p.Low, want, 1e-9) || !near(p.High, want, 1e-9) || p.Extrapolated {
		t.Errorf("Predict(3) = %+v, want %v", p, want)
	}
	if !m.Predict(16).Extrapolated || m.Predict(0) != (Prediction{}) {
		t.Error("16 cores is beyond the measured 1..8; 0 cores has no prediction")
	}
}

// TestFitSizesThreePointsByHand: cores 1, 2, 4 holding 100, 190, 400 devices. In logs x = 0, a,
// 2a (a = ln 2), so x̄ = a, SS = 2a², and the slope is a·(ln 400 − ln 100)/(2a²) = 2a²/2a² = 1
// exactly. Scale = exp(ȳ − a) = (100·190·400)^(1/3) / 2 = 98.30476. The middle residual is
// ln 190 − ȳ = ln(190²/40000)/3 = −0.0341955, the outer two +0.0170978 each, so RSS = 0.00175400
// and ResidualLog = sqrt(RSS/1) = 0.0418808. At 3 cores: median 3·98.30476 = 294.914, dx = ln 1.5,
// half-width t(0.975,1)·s·sqrt(1 + 1/3 + dx²/SS) = 12.7062·0.0418808·1.226550 = 0.652703, so the
// 95 % prediction range is 294.914·exp(∓0.652703) = 153.543 .. 566.450: wide, as one degree of
// freedom deserves.
func TestFitSizesThreePointsByHand(t *testing.T) {
	m, err := FitSizes([]SizePoint{{"C1", 1, 2, 100}, {"C2", 2, 4, 190}, {"C4", 4, 8, 400}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"exponent", m.Exponent, 1},
		{"scale", m.Scale, 98.30476},
		{"residual", m.ResidualLog, 0.0418808},
	} {
		if !near(c.got, c.want, 1e-5) {
			t.Errorf("%s = %.7g, by hand %.7g", c.name, c.got, c.want)
		}
	}
	p := m.Predict(3)
	if !near(p.Median, 294.914, 1e-5) || !near(p.Low, 153.543, 1e-5) || !near(p.High, 566.450, 1e-5) {
		t.Errorf("Predict(3) = %+v, by hand 294.914 [153.543, 566.450]", p)
	}
}

func TestFitSizesFlagsAndErrors(t *testing.T) {
	two, err := FitSizes([]SizePoint{{"C1", 1, 2, 100}, {"C4", 4, 8, 300}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(two.Untrusted, "\n"), "2 points: no error estimate") {
		t.Errorf("2 points not flagged: %q", two.Untrusted)
	}
	if p := two.Predict(2); !near(p.Low, 0.85*p.Median, 1e-12) || !near(p.High, 1.15*p.Median, 1e-12) {
		t.Errorf("2-point range is the stated ±15 %%: %+v", p)
	}
	// Both profiles serve the same: the limit is not CPU (the 250m/500m example).
	flat, err := FitSizes([]SizePoint{{"small", 0.25, 0.5, 78}, {"medium", 0.5, 1, 80}, {"large", 1, 2, 79}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(flat.Untrusted, "\n"), "barely grows with cores") {
		t.Errorf("flat capacity not flagged: %q", flat.Untrusted)
	}
	for name, ps := range map[string][]SizePoint{
		"none":           nil,
		"one":            {{"C1", 1, 2, 100}},
		"same cores":     {{"a", 2, 2, 100}, {"b", 2, 4, 120}},
		"zero capacity":  {{"a", 1, 2, 0}, {"b", 2, 4, 120}},
		"negative cores": {{"a", -1, 2, 10}, {"b", 2, 4, 120}},
		"NaN":            {{"a", 1, 2, math.NaN()}, {"b", 2, 4, 120}},
	} {
		if _, err := FitSizes(ps); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestTwoPointRangeIsAssumed: 2 points leave no residual, so the ±15 % range is an assumption
// and says so (Assumed); from 3 points it is estimated.
func TestTwoPointRangeIsAssumed(t *testing.T) {
	two, _ := FitSizes([]SizePoint{{Cores: 1, Capacity: 1000}, {Cores: 2, Capacity: 2000}})
	three, _ := FitSizes([]SizePoint{{Cores: 1, Capacity: 1000}, {Cores: 2, Capacity: 1900}, {Cores: 4, Capacity: 4000}})
	if p := two.Predict(3); !p.Assumed || !near(p.Low, 2550, 1e-9) || !near(p.High, 3450, 1e-9) {
		t.Errorf("2 points: %+v, want 3000 ± 15 %%, assumed", p)
	}
	if p := three.Predict(3); p.Assumed {
		t.Errorf("3 points: %+v, an estimated interval", p)
	}
}
