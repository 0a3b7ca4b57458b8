package compare

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/judge"
	"fleetbench.dev/fleetbench/pkg/measure"
)

// longRun is a run of n windows of 10 s with metrics trends of 5 stats each, noisy values.
func longRun(n, metrics int) (*v1alpha1.Results, *measure.Summary, *judge.Timeline) {
	rng := rand.New(rand.NewPCG(1, 2))
	start := time.Unix(1_700_000_000, 0)
	s := &measure.Summary{Start: start, End: start.Add(time.Duration(n) * 10 * time.Second), WindowNanos: int64(10 * time.Second), Metrics: map[string]*measure.MetricSummary{}}
	tl := &judge.Timeline{WindowSeconds: 10}
	res := &v1alpha1.Results{Protocol: "http", Throughput: &v1alpha1.Throughput{RequestsPerSecond: "200.00"}}
	for i := 0; i < n; i++ {
		tl.Windows = append(tl.Windows, judge.TimelineWindow{Start: start.Add(time.Duration(i) * 10 * time.Second), Requests: 2000,
			RequestsPerSecond: 200 + rng.NormFloat64(), P95: 20 + rng.NormFloat64(), P99: 30 + rng.NormFloat64()})
	}
	for i := 0; i < judge.MaxTargetPoints; i++ {
		tl.Target = append(tl.Target, judge.TargetPoint{MemoryMiB: 100 + rng.Float64(), Cores: 0.5 + rng.Float64()/10})
	}
	add := func(name string, typ measure.MetricType) {
		m := &measure.MetricSummary{Name: name, Type: typ, Stats: measure.Stats{Count: 1, Avg: 10, Med: 9, P90: 15, P95: 20, P99: 30, Rate: 200, Sum: 2000}}
		for i := 0; i < n; i++ {
			m.Windows = append(m.Windows, measure.WindowStats{Start: start.Add(time.Duration(i) * 10 * time.Second), Stats: measure.Stats{
				Avg: 10 + rng.NormFloat64(), Med: 9 + rng.NormFloat64(), P90: 15 + rng.NormFloat64(), P95: 20 + rng.NormFloat64(), P99: 30 + rng.NormFloat64(), Sum: 2000}})
		}
		s.Metrics[name] = m
		res.Metrics = append(res.Metrics, v1alpha1.MetricResult{Name: name, Type: string(typ)})
	}
	add("http_req_duration", measure.Trend)
	add("http_reqs", measure.Counter)
	for i := 0; len(res.Metrics) < metrics; i++ {
		add(fmt.Sprintf("custom_trend_%02d", i), measure.Trend)
	}
	return res, s, tl
}

// TestRecordOfAShortRun: every series the comparison reads, with the values of each window.
func TestRecordOfAShortRun(t *testing.T) {
	res, s, tl := longRun(30, 2)
	rec := BuildRecord(RunRef{Name: "a", UID: "u"}, res, s, tl, SubMetrics{})
	got := map[string]Series{}
	for _, sr := range rec.Series {
		got[sr.Name+"/"+sr.Stat] = sr
	}
	for _, want := range []string{"throughput/", "latencyP95/p95", "latencyP99/p99", "targetMemory/max", "targetCPU/avg",
		"http_req_duration/avg", "http_req_duration/p99", "http_reqs/rate"} {
		sr, ok := got[want]
		if !ok {
			t.Errorf("no series %s in %d series", want, len(rec.Series))
			continue
		}
		if n := len(sr.Windows); n != 30 && !isTarget(sr.Name) {
			t.Errorf("%s has %d windows, want 30", want, n)
		}
	}
	if tp := got["throughput/"]; tp.Whole != 200 || tp.Unit != "req/s" {
		t.Errorf("throughput %+v", tp)
	}
	if r := got["http_reqs/rate"].Windows[3]; r != 200 { // 2000 requests in 10 s
		t.Errorf("http_reqs rate of a window = %v, want 200", r)
	}
	if rec.WindowSeconds != 10 {
		t.Errorf("window %v s", rec.WindowSeconds)
	}
}

// TestRecordOfA48HourRunIsBounded: 17,280 windows of 10 s and 64 metrics become block means of
// at most MaxRecordWindows windows in at most MaxRecordSeries series, well within a ConfigMap,
// and decode back.
func TestRecordOfA48HourRunIsBounded(t *testing.T) {
	res, s, tl := longRun(48*360, 64)
	rec := BuildRecord(RunRef{Name: "long", UID: "u"}, res, s, tl, SubMetrics{})
	if len(rec.Series) > MaxRecordSeries {
		t.Errorf("%d series", len(rec.Series))
	}
	for _, sr := range rec.Series {
		if len(sr.Windows) > MaxRecordWindows || len(sr.Windows) < MaxRecordWindows/2 {
			t.Errorf("%s/%s: %d windows", sr.Name, sr.Stat, len(sr.Windows))
		}
	}
	if rec.WindowSeconds != 10*72 { // 17,280 windows in blocks of 72
		t.Errorf("window %v s, want 720", rec.WindowSeconds)
	}
	if m := rec.Series[0].Windows[5]; m < 199 || m > 201 { // a block mean of noisy 200s
		t.Errorf("throughput block mean %v", m)
	}
	data, err := EncodeRecord(rec)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("48-hour run, 64 metrics: %d series, %d KiB gzipped", len(rec.Series), len(data)>>10)
	if len(data) > 400<<10 {
		t.Errorf("%d KiB gzipped: too large to keep beside others", len(data)>>10)
	}
	back, err := DecodeRecord(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Series) != len(rec.Series) || back.Run.Name != "long" || back.Series[1].Windows[7] != rec.Series[1].Windows[7] {
		t.Errorf("round trip lost data")
	}
}

func gz(raw []byte) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	_, _ = w.Write(raw)
	_ = w.Close()
	return b.Bytes()
}

// TestDecodeRecordRefusesHostileBytes: anyone who may write a ConfigMap in the namespace may
// write a kept record's bytes.
func TestDecodeRecordRefusesHostileBytes(t *testing.T) {
	many := Record{}
	for i := 0; i <= MaxRecordSeries; i++ {
		many.Series = append(many.Series, Series{Name: "x"})
	}
	manyJSON, _ := json.Marshal(many)
	long, _ := json.Marshal(Record{Series: []Series{{Name: "x", Windows: make([]float64, MaxRecordWindows+1)}}})
	for name, data := range map[string][]byte{
		"not gzip":       []byte("{}"),
		"gzip bomb":      gz(bytes.Repeat([]byte(" "), MaxRecordJSON+10)),
		"stored too big": make([]byte, MaxRecordGzip+1),
		"not JSON":       gz([]byte("[[[")),
		"too many":       gz(manyJSON),
		"too long":       gz(long),
		"huge number":    gz([]byte(`{"series":[{"name":"x","whole":1e999}]}`)),
		"long name":      gz([]byte(`{"series":[{"name":"` + strings.Repeat("n", 600) + `"}]}`)),
	} {
		if _, err := DecodeRecord(data); !errors.Is(err, ErrBadRecord) {
			t.Errorf("%s: err %v, want ErrBadRecord", name, err)
		}
	}
}
