package runners

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"fleetbench.dev/fleetbench/pkg/measure"
)

// The runner capacity a finished run measured, kept for parallelism auto. It is the work the
// runners did per CPU-second they spent: iterations per core-second, and for a VU load VUs
// per busy core. Measured below saturation it understates what a busy runner does (a runner's
// fixed cost weighs more at low load), so a fleet sized from it errs towards more runners;
// measured at saturation (generator-bound) it is the runner's limit. It is kept per namespace
// and script, in a ConfigMap no TestRun owns (CapacityRecordName), and the last finished run
// of that script replaces it.

// CapacityRecordKey is the ConfigMap key of the record.
const CapacityRecordKey = "capacity.json"

// maxCapacityRecordBytes bounds what is read: the ConfigMap is in the tenant's namespace.
const maxCapacityRecordBytes = 4096

// maxPerCore bounds a believable figure: beyond it the record is not a measurement.
const maxPerCore = 1e7

// CapacityRecord is one run's measured runner capacity.
type CapacityRecord struct {
	// Run is the TestRun that measured it.
	Run string `json:"run"`
	// IterationsPerCoreSecond is the iterations done over the runners' CPU-seconds.
	IterationsPerCoreSecond float64 `json:"iterationsPerCoreSecond"`
	// VUsPerCore is the VUs of a VU load over the cores the runners kept busy on average.
	VUsPerCore float64 `json:"vusPerCore,omitempty"`
	// CPUUtilization is the busiest runner's share of its usable cores.
	CPUUtilization float64 `json:"cpuUtilization"`
	// GeneratorBound: measured at the runners' limit rather than below it.
	GeneratorBound bool `json:"generatorBound"`
	Runners        int  `json:"runners"`
}

func (c *CapacityRecord) perCore(vuModel bool) float64 {
	if vuModel {
		return c.VUsPerCore
	}
	return c.IterationsPerCoreSecond
}

// CapacityRecordName names the record of a script in a namespace: the script's text, or for
// a script in the runner image (spec.script.localFile, text unknown) its path and image.
func CapacityRecordName(scriptText, localRef string) string {
	sum := sha256.Sum256([]byte("text\x00" + scriptText + "\x00ref\x00" + localRef))
	return "fleetbench-capacity-" + hex.EncodeToString(sum[:8])
}

// MeasureCapacity is the capacity a merged run measured, from its runners' CPU time and its
// iterations; ok is false when it measured none (no CPU time, no iterations, partial results).
// vus is the run's VU load (0 for an arrival rate).
func MeasureCapacity(run string, s *measure.Summary, vus int64, generatorBound, partial bool) (CapacityRecord, bool) {
	if s == nil || partial || len(s.Runners) == 0 {
		return CapacityRecord{}, false
	}
	var cpuSeconds, maxUtil float64
	for _, r := range s.Runners {
		cpuSeconds += r.CPU.UserSeconds + r.CPU.SystemSeconds
		maxUtil = max(maxUtil, r.CPUUtilization)
	}
	var iterations float64
	if m := s.Metrics["iterations"]; m != nil {
		iterations = m.Stats.Sum
	}
	sec := s.Duration.Seconds()
	if !(cpuSeconds > 0) || !(iterations > 0) || !(sec > 0) {
		return CapacityRecord{}, false
	}
	rec := CapacityRecord{Run: run, IterationsPerCoreSecond: iterations / cpuSeconds, CPUUtilization: maxUtil,
		GeneratorBound: generatorBound, Runners: len(s.Runners)}
	if vus > 0 {
		rec.VUsPerCore = float64(vus) / (cpuSeconds / sec)
	}
	return rec, rec.valid() == nil
}

func (c *CapacityRecord) valid() error {
	for _, f := range []float64{c.IterationsPerCoreSecond, c.VUsPerCore, c.CPUUtilization} {
		if math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || f > maxPerCore {
			return errors.New("a figure is out of range")
		}
	}
	if c.IterationsPerCoreSecond == 0 && c.VUsPerCore == 0 {
		return errors.New("it records no capacity")
	}
	if len(c.Run) > 253 || c.Runners < 0 || c.Runners > 100000 {
		return errors.New("its run is out of range")
	}
	return nil
}

// EncodeCapacityRecord is the record as kept.
func EncodeCapacityRecord(c CapacityRecord) ([]byte, error) {
	return json.Marshal(c)
}

// DecodeCapacityRecord reads a kept record, which anyone who may write ConfigMaps in the
// namespace may have written: bounded in size, every figure finite, positive and believable.
func DecodeCapacityRecord(data []byte) (*CapacityRecord, error) {
	if len(data) > maxCapacityRecordBytes {
		return nil, fmt.Errorf("the runner capacity record holds %d bytes, more than %d", len(data), maxCapacityRecordBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var c CapacityRecord
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("the runner capacity record cannot be read: %w", err)
	}
	if err := c.valid(); err != nil {
		return nil, fmt.Errorf("the runner capacity record is not used: %w", err)
	}
	return &c, nil
}
