package results

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"
)

// hostileEnvelope encodes n windows of a trend whose histograms hold the smallest and the
// largest value: a few bytes each gzip'd, a dense array over the whole bucket range (~50 KiB)
// each decoded.
func hostileEnvelope(t testing.TB, n int) []byte {
	var h Agg
	h.Add(Trend, 1e-9, 0)
	h.Add(Trend, 1e18, 0)
	s := Series{Windows: make([]Window, n)}
	for i := range s.Windows {
		s.Windows[i] = Window{Key: int64(i), Agg: h}
	}
	e := Envelope{Version: Version, Final: true, StartUnixNano: 1, EndUnixNano: 2, WindowNanos: 10, Accuracy: RelativeAccuracy,
		Metrics: []Metric{{Name: "t", Type: Trend, Series: []Series{s}}}}
	var buf bytes.Buffer
	if err := Encode(&buf, &e); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// allocated is what f allocated on the heap, in total (garbage included).
func allocated(f func()) uint64 {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestHostileEnvelopeIsRejectedWithinABudget: 20,000 such windows are 66 KiB on the wire and
// decoded into 1.1 GiB before; now the envelope is refused, as ErrRejected, having allocated
// a few MiB.
func TestHostileEnvelopeIsRejectedWithinABudget(t *testing.T) {
	for _, n := range []int{2000, 20000} {
		wire := hostileEnvelope(t, n)
		var err error
		alloc := allocated(func() { _, err = ExtractEnvelope(wire) })
		t.Logf("%d windows, %d KiB on the wire: allocated %d KiB decoding it: %v", n, len(wire)>>10, alloc>>10, err)
		if !errors.Is(err, ErrRejected) {
			t.Errorf("%d windows: error %v, want ErrRejected", n, err)
		}
		if limit := uint64(16 << 20); alloc > limit {
			t.Errorf("%d windows: decoding allocated %d MiB, want at most %d MiB", n, alloc>>20, limit>>20)
		}
	}
}

// TestShapesThatWouldBlowUpAreRejected: each shape that allocates far more than its JSON is
// refused before it is built.
func TestShapesThatWouldBlowUpAreRejected(t *testing.T) {
	repeat := func(s string, n int) string {
		var b bytes.Buffer
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(s)
		}
		return b.String()
	}
	envelope := func(metrics string) string {
		return `{"version":1,"start":1,"end":2,"window":10,"accuracy":0.005,"metrics":[` + metrics + `]}`
	}
	deep := ""
	for i := 0; i < 50; i++ {
		deep = `{"x":` + deep + `1}`
	}
	for name, raw := range map[string]string{
		"empty windows": envelope(`{"name":"c","type":"counter","series":[{"total":{"n":0},"windows":[` + repeat("{}", 2_000_000) + `]}]}`),
		"many series":   envelope(`{"name":"c","type":"counter","series":[` + repeat(`{"total":{}}`, 1_000_000) + `]}`),
		"many tags": envelope(`{"name":"c","type":"counter","series":[{"tags":{` + func() string {
			var b bytes.Buffer
			for i := 0; i < 1_000_000; i++ {
				if i > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, `"%d":""`, i)
			}
			return b.String()
		}() + `},"total":{}}]}`),
		"wide histogram": envelope(`{"name":"t","type":"trend","series":[{"total":{"n":2,"h":{"p":[-2000,1,6000,1]}},"windows":[` + repeat(`{"k":1,"n":2,"h":{"P":[-2000,1,6000,1]}}`, 2000) + `]}]}`),
		"deep nesting":   envelope(`{"name":"c","type":"counter","series":[],"x":` + deep + `}`),
		"long string":    envelope(`{"name":"` + string(bytes.Repeat([]byte("a"), 1<<20)) + `","type":"counter","series":[]}`),
	} {
		_, err := scanCost(bytes.NewReader([]byte(raw)), DefaultLimits)
		if !errors.Is(err, ErrRejected) {
			t.Errorf("%s: %v, want ErrRejected", name, err)
		}
	}
}

// realisticEnvelope is what a runner with the default collector settings writes for a
// 10-minute load of 8 trends and 10 counters split over series tag values, latencies spread
// log-normally over four orders of magnitude.
func realisticEnvelope(series int) Envelope {
	c := NewCollector(DefaultCollectorConfig, time.Unix(1000, 0))
	r := rand.New(rand.NewPCG(1, 2))
	for ts := int64(1000e9); ts < 1600e9; ts += 2e7 {
		for m := 0; m < 8; m++ {
			tags := map[string]string{"scenario": "default", "name": fmt.Sprintf("u%d", r.IntN(series))}
			c.Series(fmt.Sprintf("trend_%d", m), Trend, "time", tags).Add(ts, math.Exp(r.NormFloat64()+3))
		}
		for m := 0; m < 10; m++ {
			c.Series(fmt.Sprintf("counter_%d", m), Counter, "", map[string]string{"scenario": "default"}).Add(ts, 1)
		}
	}
	e := c.Envelope(time.Unix(1600, 0))
	e.Final = true
	return e
}

// TestRealisticEnvelopeFits: the scan's estimate covers what the decode really allocates, and a
// runner's envelope with several series per metric stays well within the limits.
func TestRealisticEnvelopeFits(t *testing.T) {
	e := realisticEnvelope(5)
	var buf bytes.Buffer
	if err := Encode(&buf, &e); err != nil {
		t.Fatal(err)
	}
	var got Envelope
	var err error
	alloc := allocated(func() { got, err = ExtractEnvelope(buf.Bytes()) })
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(&got)
	cost, err := scanCost(bytes.NewReader(raw), DefaultLimits)
	t.Logf("realistic envelope: %d KiB JSON, %d KiB on the wire, estimated %d KiB decoded, allocated %d KiB in all (scan included)",
		len(raw)>>10, buf.Len()>>10, cost>>10, alloc>>10)
	if err != nil || cost > DefaultLimits.MaxCost/2 {
		t.Errorf("estimate %d KiB, %v: want it within half the limit", cost>>10, err)
	}
}

// TestDecodesShareOneBudget: concurrent decodes never hold more of DecodeMemory than it has,
// and all of it is given back.
func TestDecodesShareOneBudget(t *testing.T) {
	e := realisticEnvelope(2)
	var buf bytes.Buffer
	if err := Encode(&buf, &e); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Go(func() {
			if _, err := ExtractEnvelope(buf.Bytes()); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if used := DecodeMemory.Used(); used != 0 {
		t.Errorf("%d bytes of the decode budget still held", used)
	}
}

// TestBudgetWaitsForRoom: an acquisition that does not fit waits until enough is released, or
// gives up with its context.
func TestBudgetWaitsForRoom(t *testing.T) {
	b := NewBudget(10)
	release, err := b.Acquire(context.Background(), 8)
	if err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := b.Acquire(cancelled, 5); err == nil {
		t.Fatal("5 more bytes of a budget of 10 with 8 held were granted")
	}
	granted := make(chan func())
	go func() {
		r, _ := b.Acquire(context.Background(), 5)
		granted <- r
	}()
	release()
	(<-granted)()
	if b.Used() != 0 {
		t.Errorf("used %d after every release", b.Used())
	}
	r, _ := b.Acquire(context.Background(), 100) // cut to the budget's size, not refused
	r()
}

// FuzzScanCost: the scan never panics, refuses no valid JSON as malformed (encoding/json is the
// judge), and what it lets through decodes within its estimate's order.
func FuzzScanCost(f *testing.F) {
	f.Add([]byte(`{"version":1,"metrics":[{"name":"t","type":"trend","series":[{"tags":{"a":"b"},"total":{"n":2,"h":{"p":[1,1,3,1]}}}]}]}`))
	f.Add([]byte(`{"Metrics":[{"SERIES":[{"\u0074ags":{"x":"\u00e9\n"},"windows":[{"k":-1,"h":{"n":[-5,2]}}]}]}],"thresholds":{"m":["p(95)<1"]}}`))
	f.Add([]byte(`[1e5, -0.5, true, false, null, "s\"q", {}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		lim := Limits{MaxBytes: 1 << 20, MaxCost: 1 << 20, MaxString: 1 << 10, MaxDepth: 12}
		cost, err := scanCost(bytes.NewReader(data), lim)
		if errors.Is(err, ErrRejected) {
			return
		}
		// The scan may pass malformed JSON on (json.Unmarshal checks the whole text before it
		// allocates anything), but must not call valid JSON malformed.
		if !json.Valid(data) {
			return
		}
		if err != nil {
			t.Fatalf("valid JSON, scan error %v", err)
		}
		var e Envelope
		if alloc := allocated(func() { _ = json.Unmarshal(data, &e) }); alloc > uint64(4*cost+64<<10) {
			t.Fatalf("estimated %d bytes, decoding allocated %d", cost, alloc)
		}
	})
}

// TestSizeOfMatchesTheScan: what a kept envelope is charged is what its decode was priced at.
func TestSizeOfMatchesTheScan(t *testing.T) {
	e := realisticEnvelope(3)
	raw, _ := json.Marshal(&e)
	var got Envelope
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	cost, err := scanCost(bytes.NewReader(raw), DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	if size := SizeOf(&got); size > cost || size < cost/3 {
		t.Errorf("SizeOf %d KiB, the scan priced %d KiB", size>>10, cost>>10)
	}
}
