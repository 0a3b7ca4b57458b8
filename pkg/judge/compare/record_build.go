package compare

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/judge"
	"fleetbench.dev/fleetbench/pkg/measure"
)

// Bounds of a Record, whatever the run's length and its script's metrics: a 48-hour run has
// thousands of windows, a script may have 64 metrics of 5 stats each. MaxRecordWindows ×
// MaxRecordSeries numbers of at most 6 significant digits are under 400 KiB of JSON and about
// a third of that gzipped, so a kept Record fits a ConfigMap (1 MiB) with room to spare.
const (
	// MaxRecordWindows bounds the windows of one series: past it, adjacent windows are merged
	// into block means (WindowSeconds says the blocks' width).
	MaxRecordWindows = 240
	// MaxRecordSeries bounds the series; the built-ins come first, then the metrics by name.
	MaxRecordSeries = 128
	// MaxRecordJSON bounds a Record's JSON once inflated; a larger one is refused undecoded.
	MaxRecordJSON = 2 << 20
	// MaxRecordGzip bounds a Record's stored (gzipped) form.
	MaxRecordGzip = 1 << 20
	// RecordDecodeCost bounds what decoding one Record allocates (the JSON, the decoded floats
	// and their slices' growth): what a caller takes from a memory budget first.
	RecordDecodeCost = 6 * MaxRecordJSON
	maxNameLength    = 512
)

// Built-in series names.
const (
	SeriesThroughput   = "throughput"
	SeriesLatencyP95   = "latencyP95"
	SeriesLatencyP99   = "latencyP99"
	SeriesTargetMemory = "targetMemory"
	SeriesTargetCPU    = "targetCPU"
)

// BuildRecord is what a finished run keeps: the built-in series from the timeline (throughput
// and latency quantiles per window, target memory and CPU per sample), and every metric of
// status.results.metrics with its natural stats per window (trend: avg, med, p90, p95, p99;
// counter and rate: rate; gauge: value), and the sub-metrics subs names (SubMetricsOf the
// run's spec). Series longer than MaxRecordWindows are block means of adjacent windows; past
// MaxRecordSeries the last are cut, in this order: built-ins, subs.Named, the metrics,
// subs.Thresholds. It reads only its arguments.
func BuildRecord(run RunRef, res *v1alpha1.Results, s *measure.Summary, tl *judge.Timeline, subs SubMetrics) Record {
	rec := Record{Run: run, WindowSeconds: tl.WindowSeconds}
	var rps, p95, p99 []float64
	for _, w := range tl.Windows {
		rps = append(rps, w.RequestsPerSecond)
		if w.Requests > 0 { // a window without requests has no latency, not a latency of 0
			p95, p99 = append(p95, w.P95), append(p99, w.P99)
		}
	}
	whole := func(text string) float64 { v, _ := strconv.ParseFloat(text, 64); return v }
	if res != nil && res.Throughput != nil {
		rec.Series = append(rec.Series, Series{Name: SeriesThroughput, Unit: "req/s", Whole: whole(res.Throughput.RequestsPerSecond), Windows: rps})
	}
	duration := "http_req_duration"
	if res != nil && res.Protocol == judge.ProtocolGRPC {
		duration = "grpc_req_duration"
	}
	if m := s.Metrics[duration]; m != nil && m.Stats.Count > 0 {
		rec.Series = append(rec.Series,
			Series{Name: SeriesLatencyP95, Stat: "p95", Unit: "ms", Whole: m.Stats.P95, Windows: p95},
			Series{Name: SeriesLatencyP99, Stat: "p99", Unit: "ms", Whole: m.Stats.P99, Windows: p99})
	}
	if len(tl.Target) > 0 {
		var mem, cpu []float64
		peak, sum := 0.0, 0.0
		for _, p := range tl.Target {
			mem, cpu = append(mem, p.MemoryMiB), append(cpu, p.Cores)
			peak, sum = math.Max(peak, p.MemoryMiB), sum+p.Cores
		}
		// Seed 000 compares the memory a version needs (its peak) and the CPU it spends (the mean).
		rec.Series = append(rec.Series,
			Series{Name: SeriesTargetMemory, Stat: "max", Unit: "MiB", Whole: peak, Windows: mem},
			Series{Name: SeriesTargetCPU, Stat: "avg", Unit: "cores", Whole: sum / float64(len(cpu)), Windows: cpu})
	}
	for _, key := range subs.Named {
		rec.Series = append(rec.Series, subMetricSeries(key, res, s)...)
	}
	if res != nil {
		width := time.Duration(s.WindowNanos)
		for _, row := range res.Metrics {
			if m := s.Metrics[row.Name]; m != nil {
				rec.Series = append(rec.Series, metricSeries(m, row.Unit, s.Start, s.End, width)...)
			}
		}
	}
	for _, key := range subs.Thresholds {
		rec.Series = append(rec.Series, subMetricSeries(key, res, s)...)
	}
	return bounded(rec)
}

// metricSeries are a k6 metric's natural stats, whole and per window.
func metricSeries(m *measure.MetricSummary, unit string, start, end time.Time, width time.Duration) []Series {
	return statSeries(m.Name, m.Type, m.Stats, m.Windows, true, unit, start, end, width)
}

// statSeries are the natural stats of a metric's type, named name: whole from whole, per
// window from windows. Without quantileWindows the windows' quantiles (a trend's med, p90,
// p95, p99) and gauge values are not kept (see subMetricSeries): only the additive stats.
func statSeries(name string, typ measure.MetricType, whole measure.Stats, windows []measure.WindowStats, quantileWindows bool,
	unit string, start, end time.Time, width time.Duration) []Series {
	of := func(stat string, whole float64, additive bool, fn func(measure.WindowStats) float64) Series {
		out := Series{Name: name, Stat: stat, Unit: unit, Whole: whole}
		if !additive && !quantileWindows {
			return out
		}
		for _, w := range windows {
			out.Windows = append(out.Windows, fn(w))
		}
		return out
	}
	switch typ {
	case measure.Trend:
		st := whole
		return []Series{
			of("avg", st.Avg, true, func(w measure.WindowStats) float64 { return w.Stats.Avg }),
			of("med", st.Med, false, func(w measure.WindowStats) float64 { return w.Stats.Med }),
			of("p90", st.P90, false, func(w measure.WindowStats) float64 { return w.Stats.P90 }),
			of("p95", st.P95, false, func(w measure.WindowStats) float64 { return w.Stats.P95 }),
			of("p99", st.P99, false, func(w measure.WindowStats) float64 { return w.Stats.P99 }),
		}
	case measure.Counter:
		// Per second of the part of the window inside the run, as the timeline's rates, so the
		// first and last windows are not understated.
		s := of("rate", whole.Rate, true, func(w measure.WindowStats) float64 {
			from, to := later(w.Start, start), earlier(w.Start.Add(width), end)
			if sec := to.Sub(from).Seconds(); sec > 0 {
				return w.Stats.Sum / sec
			}
			return 0
		})
		s.Unit = unit + "/s"
		return []Series{s}
	case measure.Rate:
		return []Series{of("rate", whole.Rate, true, func(w measure.WindowStats) float64 { return w.Stats.Rate })}
	case measure.Gauge:
		return []Series{of("value", whole.Value, false, func(w measure.WindowStats) float64 { return w.Stats.Value })}
	}
	return nil
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// bounded cuts rec to MaxRecordSeries and merges adjacent windows so no series has more than
// MaxRecordWindows: block means of k windows, k the same for every window series so one
// WindowSeconds holds (target samples are thinned already, judge.MaxTargetPoints, and are
// blocked on their own). Numbers keep 6 significant digits.
func bounded(rec Record) Record {
	if len(rec.Series) > MaxRecordSeries {
		rec.Series = rec.Series[:MaxRecordSeries]
	}
	k := 1
	for _, s := range rec.Series {
		if !isTarget(s.Name) {
			k = max(k, recordMergeFactor(len(s.Windows)))
		}
	}
	rec.WindowSeconds *= float64(k)
	for i := range rec.Series {
		s := &rec.Series[i]
		f := k
		if isTarget(s.Name) {
			f = recordMergeFactor(len(s.Windows))
		}
		s.Windows = blockMeans(s.Windows, f)
		s.Whole = round6(s.Whole)
		for j := range s.Windows {
			s.Windows[j] = round6(s.Windows[j])
		}
	}
	return rec
}

func isTarget(name string) bool { return name == SeriesTargetMemory || name == SeriesTargetCPU }

func recordMergeFactor(n int) int { return max(1, (n+MaxRecordWindows-1)/MaxRecordWindows) }

// blockMeans averages each k adjacent values (the last block may be shorter).
func blockMeans(v []float64, k int) []float64 {
	if k <= 1 {
		return v
	}
	out := make([]float64, 0, (len(v)+k-1)/k)
	for i := 0; i < len(v); i += k {
		end := min(i+k, len(v))
		sum := 0.0
		for _, x := range v[i:end] {
			sum += x
		}
		out = append(out, sum/float64(end-i))
	}
	return out
}

func round6(v float64) float64 {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 6, 64), 64)
	return r
}

// EncodeRecord is rec as gzipped JSON, as the full result's parts are stored.
func EncodeRecord(rec Record) ([]byte, error) {
	z, err := judge.EncodeGzipJSON(rec)
	if err != nil {
		return nil, err
	}
	if len(z) > MaxRecordGzip {
		return nil, fmt.Errorf("the record is %d KiB gzipped, over %d KiB", len(z)>>10, MaxRecordGzip>>10)
	}
	return z, nil
}

// ErrBadRecord marks stored bytes that are not a Record within its bounds (errors.Is).
var ErrBadRecord = errors.New("not a kept record")

// DecodeRecord reads a Record from EncodeRecord's bytes, which anyone who may write a
// ConfigMap in the namespace could have written: at most MaxRecordGzip stored and MaxRecordJSON
// inflated, and within the series, window and name bounds, or ErrBadRecord.
func DecodeRecord(data []byte) (Record, error) {
	bad := func(format string, args ...any) (Record, error) {
		return Record{}, fmt.Errorf("%w: "+format, append([]any{ErrBadRecord}, args...)...)
	}
	if len(data) > MaxRecordGzip {
		return bad("%d bytes stored, over %d", len(data), MaxRecordGzip)
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return bad("not gzip: %v", err)
	}
	raw, err := io.ReadAll(io.LimitReader(zr, MaxRecordJSON+1))
	if err != nil {
		return bad("inflating: %v", err)
	}
	if len(raw) > MaxRecordJSON {
		return bad("inflates past %d KiB", MaxRecordJSON>>10)
	}
	var rec Record
	if err := json.Unmarshal(raw, &rec); err != nil {
		return bad("%v", err)
	}
	if len(rec.Series) > MaxRecordSeries {
		return bad("%d series, over %d", len(rec.Series), MaxRecordSeries)
	}
	if rec.WindowSeconds < 0 || math.IsNaN(rec.WindowSeconds) {
		return bad("window of %v s", rec.WindowSeconds)
	}
	for _, s := range rec.Series {
		if len(s.Windows) > MaxRecordWindows || len(s.Name) > maxNameLength || len(s.Stat) > 16 || len(s.Unit) > 32 {
			return bad("series %.64q out of bounds", s.Name)
		}
	}
	return rec, nil
}
