package measure

import (
	"bytes"
	"context"
	"encoding/binary"
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
// largest value: a few bytes each gzip'd. Each was a dense array over the whole bucket range
// (~50 KiB) decoded; now it is two packed buckets, and only many windows take much.
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

// TestHostileEnvelopeIsRejectedWithinABudget: 20,000 such windows were 66 KiB on the wire and
// decoded into 1.1 GiB; now they decode into what their data takes (TestWideHistogramsTakeWhat
// TheirDataTakes), and an envelope of enough of them to pass the limits is refused, as
// ErrRejected, having allocated a few MiB.
func TestHostileEnvelopeIsRejectedWithinABudget(t *testing.T) {
	for _, n := range []int{60000, 120000} {
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

// TestWideHistogramsTakeWhatTheirDataTakes: windows whose histograms span the whole bucket range
// hold a few hundred bytes each decoded, not a dense array of ~50 KiB, and the scan prices
// what they hold and what their decode allocates from above.
func TestWideHistogramsTakeWhatTheirDataTakes(t *testing.T) {
	for _, n := range []int{2000, 20000} {
		wire := hostileEnvelope(t, n)
		var e Envelope
		var err error
		alloc := allocated(func() { e, err = ExtractEnvelope(wire) })
		if err != nil {
			t.Fatalf("%d windows: %v", n, err)
		}
		raw, _ := json.Marshal(&e)
		cost, held, err := scanCost(bytes.NewReader(raw), DefaultLimits)
		if err != nil {
			t.Fatal(err)
		}
		size := SizeOf(&e)
		t.Logf("%d windows, %d KiB on the wire: holds %d KiB decoded (priced %d KiB), allocated %d KiB (priced %d KiB)",
			n, len(wire)>>10, size>>10, held>>10, alloc>>10, cost>>10)
		if per := held / int64(n); per > 512 {
			t.Errorf("%d windows: %d bytes held per window, want at most 512", n, per)
		}
		if size > held || alloc > uint64(cost)+uint64(len(raw)+len(wire))+(1<<20) {
			t.Errorf("%d windows: the scan priced %d KiB held, %d KiB allocated; decoding held %d KiB, allocated %d KiB",
				n, held>>10, cost>>10, size>>10, alloc>>10)
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
		// No longer a blow-up (each histogram is packed), but enough of them still pass the limit.
		"wide histograms": envelope(`{"name":"t","type":"trend","series":[{"total":{"n":2,"h":{"p":[-2000,1,6000,1]}},"windows":[` + repeat(`{"k":1,"n":2,"h":{"P":[-2000,1,6000,1]}}`, 100000) + `]}]}`),
		"deep nesting":    envelope(`{"name":"c","type":"counter","series":[],"x":` + deep + `}`),
		"long string":     envelope(`{"name":"` + string(bytes.Repeat([]byte("a"), 1<<20)) + `","type":"counter","series":[]}`),
	} {
		_, _, err := scanCost(bytes.NewReader([]byte(raw)), DefaultLimits)
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
	cost, held, err := scanCost(bytes.NewReader(raw), DefaultLimits)
	t.Logf("realistic envelope: %d KiB JSON, %d KiB on the wire, estimated %d KiB allocated decoding it and %d KiB held "+
		"decoded (%d KiB by SizeOf); allocated %d KiB in all (scan included)",
		len(raw)>>10, buf.Len()>>10, cost>>10, held>>10, SizeOf(&got)>>10, alloc>>10)
	if err != nil || cost > DefaultLimits.MaxCost/2 {
		t.Errorf("estimate %d KiB, %v: want it within half the limit", cost>>10, err)
	}
	if alloc > uint64(cost)+uint64(len(raw)+buf.Len())+(1<<20) {
		t.Errorf("decoding allocated %d KiB, more than the %d KiB estimated (and the JSON, and the scan's buffers)", alloc>>10, cost>>10)
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
		cost, _, err := scanCost(bytes.NewReader(data), lim)
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
	_, held, err := scanCost(bytes.NewReader(raw), DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	if size := SizeOf(&got); size > held || size < held/3 {
		t.Errorf("SizeOf %d KiB, the scan priced what it holds at %d KiB", size>>10, held>>10)
	}
}

// singleSeriesEnvelope is what a runner writes for a 10-minute load of one trend of one series
// (http_req_duration, say), latencies spread log-normally over four orders of magnitude.
func singleSeriesEnvelope() Envelope {
	c := NewCollector(DefaultCollectorConfig, time.Unix(1000, 0))
	r := rand.New(rand.NewPCG(3, 4))
	for ts := int64(1000e9); ts < 1600e9; ts += 1e7 {
		c.Series("http_req_duration", Trend, "time", map[string]string{"scenario": "default"}).Add(ts, math.Exp(1.2*r.NormFloat64()+3))
	}
	e := c.Envelope(time.Unix(1600, 0))
	e.Final = true
	return e
}

// The per-run budget of the manager's envelopes (internal/controller/testrun): a run holds at
// most this much of them decoded, one envelope of a run of n runners at most 1/n of it.
const runEnvelopeBudget = 192 << 20

// TestLegitimateFleetsFit: the envelopes of an 8-runner run of the realistic shape, and of a
// 1,000-runner run of 10-minute single-series loads, hold less than the per-run budget's share
// decoded, each (they were priced at 25 MiB and ~317 KiB with dense histograms, over 192/8 MiB
// and 192 KiB); the fleets they fit in are logged.
func TestLegitimateFleetsFit(t *testing.T) {
	for _, c := range []struct {
		name  string
		e     Envelope
		fleet int
	}{
		{"8 trends x 5 series x 60 windows", realisticEnvelope(5), 8},
		{"1 trend x 1 series x 60 windows", singleSeriesEnvelope(), 1000},
	} {
		raw, _ := json.Marshal(&c.e)
		lim := DefaultLimits
		lim.MaxHeld = runEnvelopeBudget / int64(c.fleet)
		cost, held, err := scanCost(bytes.NewReader(raw), lim)
		t.Logf("%s: %d KiB JSON, holds %d KiB decoded (allocates %d KiB): fits a run of %d runners", c.name, len(raw)>>10,
			held>>10, cost>>10, runEnvelopeBudget/held)
		if err != nil {
			t.Errorf("%s, %d runners: %v", c.name, c.fleet, err)
		}
	}
}

// denseOf and packedOf are h with both bucket ranges in one form, whatever is smaller.
func denseOf(h *Histogram) *Histogram {
	o := &Histogram{zero: h.zero}
	for _, p := range [][2]*buckets{{&o.pos, &h.pos}, {&o.neg, &h.neg}} {
		for it := p[1].iter(); !it.done; it.next() {
			p[0].add(it.i, it.c)
		}
	}
	return o
}

func packedOf(h *Histogram) *Histogram {
	o := &Histogram{zero: h.zero}
	for _, p := range [][2]*buckets{{&o.pos, &h.pos}, {&o.neg, &h.neg}} {
		prev := minIndex
		p[0].packed = []byte{}
		for it := p[1].iter(); !it.done; it.next() {
			p[0].packed = binary.AppendUvarint(binary.AppendUvarint(p[0].packed, uint64(it.i-prev)), it.c)
			prev = it.i
		}
		if len(p[0].packed) == 0 {
			p[0].packed = nil
		}
	}
	return o
}

// valueAtRankDense is ValueAtRank as it was, on the dense form d only: negative buckets walked
// from the highest index down.
func valueAtRankDense(d *Histogram, r uint64) float64 {
	for i := len(d.neg.counts) - 1; i >= 0; i-- {
		if c := d.neg.counts[i]; r < c {
			return -bucketValue(d.neg.offset + i)
		} else {
			r -= c
		}
	}
	if r < d.zero {
		return 0
	}
	r -= d.zero
	for i, c := range d.pos.counts {
		if r < c {
			return bucketValue(d.pos.offset + i)
		}
		r -= c
	}
	return math.NaN()
}

// TestPackedAndDenseAgree: histograms of random data, in either form, decoded, or merged in any
// mix of forms, give the same counts, ranks, quantiles and threshold counts, bit for bit.
func TestPackedAndDenseAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	value := func() float64 {
		switch r.IntN(6) {
		case 0:
			return 0
		case 1:
			return -math.Exp(r.NormFloat64() * 4)
		case 2:
			return math.Exp(r.Float64()*80 - 40) // sparse over a wide range
		case 3:
			return []float64{1e-9, 1e18, -1e18, 1e-12}[r.IntN(4)]
		}
		return math.Exp(r.NormFloat64() + 3)
	}
	same := func(what string, a, b *Histogram) {
		t.Helper()
		n, ref := a.Count(), denseOf(a)
		if b.Count() != n {
			t.Fatalf("%s: count %d and %d", what, n, b.Count())
		}
		for rank := uint64(0); rank < n; rank += 1 + uint64(r.IntN(int(n/40+1))) {
			x, y, want := a.ValueAtRank(rank), b.ValueAtRank(rank), valueAtRankDense(ref, rank)
			if math.Float64bits(x) != math.Float64bits(want) || math.Float64bits(y) != math.Float64bits(want) {
				t.Fatalf("%s: rank %d: %v and %v, want %v", what, rank, x, y, want)
			}
		}
		for _, x := range []float64{0, 1, -1, 20, 1e-9, value(), value()} {
			ab, aa := a.CountBelowAbove(x)
			bb, ba := b.CountBelowAbove(x)
			if ab != bb || aa != ba {
				t.Fatalf("%s: below/above %v: %d/%d and %d/%d", what, x, ab, aa, bb, ba)
			}
		}
		ja, _ := a.MarshalJSON()
		jb, _ := b.MarshalJSON()
		if !bytes.Equal(ja, jb) {
			t.Fatalf("%s: %s and %s", what, ja, jb)
		}
	}
	for round := 0; round < 120; round++ {
		parts := make([]*Histogram, 1+r.IntN(6))
		whole := &Histogram{}
		for i := range parts {
			parts[i] = &Histogram{}
			for k := r.IntN(1 + r.IntN(500)); k > 0; k-- {
				v := value()
				parts[i].Add(v)
				whole.Add(v)
			}
		}
		forms := []func(*Histogram) *Histogram{denseOf, packedOf, func(h *Histogram) *Histogram {
			raw, _ := h.MarshalJSON()
			var o Histogram
			if err := o.UnmarshalJSON(raw); err != nil {
				t.Fatal(err)
			}
			return &o
		}}
		for f, form := range forms {
			same(fmt.Sprintf("round %d form %d", round, f), whole, form(whole))
		}
		merged := &Histogram{}
		for _, p := range parts {
			merged.Merge(forms[r.IntN(len(forms))](p))
		}
		same(fmt.Sprintf("round %d merged", round), whole, merged)
		var a, b Agg
		for _, v := range []float64{value(), value()} {
			a.Add(Trend, v, 0)
			b.Add(Trend, v, 0)
		}
		a.Hist.Merge(merged)
		b.Hist.Merge(packedOf(whole))
		a.Count, b.Count = a.Hist.Count(), b.Hist.Count()
		for _, q := range []float64{0, 0.01, 0.5, 0.9, 0.95, 0.99, 1} {
			if x, y := a.Quantile(q), b.Quantile(q); math.Float64bits(x) != math.Float64bits(y) {
				t.Fatalf("round %d: p(%v) %v and %v", round, q, x, y)
			}
		}
		packedOf(whole).AddN(value(), 3) // a packed histogram takes values too
	}
}

// TestCounterHeavyEnvelopeFits: an envelope of 15 counters split over 200 tag values each (the
// collector's cap) over 60 windows, which the scan priced at 49 MiB with DefaultLimits at 64 MiB,
// still fits the lower limit: its price follows what its decode allocates, which it bounds.
func TestCounterHeavyEnvelopeFits(t *testing.T) {
	c := NewCollector(DefaultCollectorConfig, time.Unix(1000, 0))
	for ts := int64(1000e9); ts < 1600e9; ts += 1e9 {
		for m := 0; m < 15; m++ {
			for s := 0; s < 200; s++ {
				c.Series(fmt.Sprintf("counter_%d", m), Counter, "", map[string]string{"name": fmt.Sprintf("u%d", s)}).Add(ts, 1)
			}
		}
	}
	e := c.Envelope(time.Unix(1600, 0))
	raw, _ := json.Marshal(&e)
	cost, held, err := scanCost(bytes.NewReader(raw), DefaultLimits)
	var got Envelope
	alloc := allocated(func() { _ = json.Unmarshal(raw, &got) })
	t.Logf("%d KiB JSON: priced %d KiB allocated, %d KiB held; decoding allocated %d KiB, holds %d KiB",
		len(raw)>>10, cost>>10, held>>10, alloc>>10, SizeOf(&got)>>10)
	if err != nil {
		t.Fatal(err)
	}
	if alloc > uint64(cost) || SizeOf(&got) > held {
		t.Errorf("the scan's prices are below what the decode takes")
	}
}
