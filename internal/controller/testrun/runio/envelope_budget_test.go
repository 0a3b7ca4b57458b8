package runio

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/measure"
)

// collectedLog is the log tail of a runner that measured, with the default collector settings,
// samples every step over 10 minutes of each of trends trends split over series tag values,
// latencies spread log-normally, and ten counters.
func collectedLog(t *testing.T, trends, series int, step time.Duration) []byte {
	t.Helper()
	c := measure.NewCollector(measure.DefaultCollectorConfig, time.Unix(1000, 0))
	r := rand.New(rand.NewPCG(1, 2))
	for ts := int64(1000e9); ts < 1600e9; ts += int64(step) {
		for m := 0; m < trends; m++ {
			tags := map[string]string{"scenario": "default", "name": fmt.Sprintf("u%d", r.IntN(series))}
			c.Series(fmt.Sprintf("trend_%d", m), measure.Trend, "time", tags).Add(ts, math.Exp(1.2*r.NormFloat64()+3))
		}
		if trends > 1 {
			for m := 0; m < 10; m++ {
				c.Series(fmt.Sprintf("counter_%d", m), measure.Counter, "", map[string]string{"scenario": "default"}).Add(ts, 1)
			}
		}
	}
	e := c.Envelope(time.Unix(1600, 0))
	e.Final, e.Runner = true, "runner"
	var buf bytes.Buffer
	if err := measure.Encode(&buf, &e); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestEnvelopeLimitsFitLegitimateFleets: an envelope is decoded within the limits of its run's
// runner count; the envelopes of ordinary fleets fit them, hostile ones do not.
func TestEnvelopeLimitsFitLegitimateFleets(t *testing.T) {
	realistic := collectedLog(t, 8, 5, 20*time.Millisecond)
	single := collectedLog(t, 1, 1, 10*time.Millisecond)
	for _, c := range []struct {
		name    string
		log     []byte
		runners int
		refused bool
	}{
		{"8 trends x 5 series x 60 windows, 8 runners", realistic, 8, false},
		{"8 trends x 5 series x 60 windows, 100 runners", realistic, 100, false},
		{"8 trends x 5 series x 60 windows, 200 runners", realistic, 200, true},
		{"1 trend x 1 series x 60 windows, 1 runner", single, 1, false},
		{"1 trend x 1 series x 60 windows, 1,000 runners", single, 1000, false},
		{"1 trend x 1 series x 60 windows, 2,000 runners", single, 2000, false},
		{"60,000 windows of wide histograms, 1 runner", tw.HostileEnvelopeLog("runner", 60000), 1, true},
		{"20,000 windows of wide histograms, 64 runners", tw.HostileEnvelopeLog("runner", 20000), 64, true},
		{"4,000 windows of wide histograms, 1,000 runners", tw.HostileEnvelopeLog("runner", 4000), 1000, true},
	} {
		e, err := measure.ExtractEnvelopeWithin(c.log, EnvelopeLimits(c.runners, "tenant"))
		if c.refused != errors.Is(err, measure.ErrRejected) || !c.refused && err != nil {
			t.Errorf("%s: %v, want refused %v", c.name, err, c.refused)
			continue
		}
		if err == nil {
			if size := measure.SizeOf(&e); size*int64(c.runners) > max(runEnvelopeBudget, minEnvelopeCost*int64(c.runners)) {
				t.Errorf("%s: %d KiB held each, over the run's budget", c.name, size>>10)
			}
		}
	}
}
