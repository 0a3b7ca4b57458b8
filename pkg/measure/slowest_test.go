package measure

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// slowSample is one request of a stream: its sample time and what a runner keeps of it.
type slowSample struct {
	t int64
	r SlowRequest
}

// slowStream makes n requests over span: durations from a few values, so ties are common,
// and starts that tie too, to exercise every step of the order.
func slowStream(r *rand.Rand, n int, start time.Time, span time.Duration) []slowSample {
	urls := []string{"http://a/x", "http://a/y", "http://b/z"}
	out := make([]slowSample, n)
	for i := range out {
		ms := float64(r.Intn(40)) * 2.5
		if r.Intn(50) == 0 {
			ms = 1000 + float64(r.Intn(5)) // a heavy tail, with ties of its own
		}
		t := start.UnixNano() + r.Int63n(int64(span))/1e6*1e6
		out[i] = slowSample{t: t, r: SlowRequest{DurationMillis: ms, StartUnixNano: t - int64(ms*1e6),
			URL: urls[r.Intn(len(urls))], Name: "req", Method: "GET", Status: "200", Scenario: "s",
			TraceID: fmt.Sprintf("%032x", r.Intn(3))}}
		if out[i].r.TraceID == strings.Repeat("0", 32) {
			out[i].r.TraceID = "" // no trace context
		}
	}
	return out
}

// TestSlowestMergeIsExact: a random stream split over 1 to 8 runners, each collecting (and
// coarsening its windows) on its own and going through the wire format, merges into exactly
// the K slowest of each window and the run's slowest of the whole stream.
func TestSlowestMergeIsExact(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	for seed := int64(1); seed <= 8; seed++ {
		r := rand.New(rand.NewSource(seed))
		span := time.Duration(10+r.Intn(50)) * time.Second
		stream := slowStream(r, 200+r.Intn(3000), start, span)
		runners := 1 + r.Intn(8)
		k := 1 + r.Intn(8)
		cfg := CollectorConfig{Window: time.Second, MaxWindows: 4 + r.Intn(60), Slowest: k}
		parts := make([][]slowSample, runners)
		for _, s := range stream {
			i := r.Intn(runners)
			parts[i] = append(parts[i], s)
		}
		envs := make([]Envelope, runners)
		for i, part := range parts {
			envs[i] = collectSlow(t, fmt.Sprintf("runner-%d", i), part, start, start.Add(span), cfg)
		}
		s, err := Merge(envs...)
		if err != nil {
			t.Fatal(err)
		}
		// The whole stream, each request named by the runner it went to.
		var whole []SlowRequest
		for i, part := range parts {
			for _, p := range part {
				w := p.r
				w.Runner, w.Key = fmt.Sprintf("runner-%d", i), floorDiv(p.t, s.WindowNanos)
				whole = append(whole, w)
			}
		}
		byWindow := map[int64][]SlowRequest{}
		for _, w := range whole {
			byWindow[w.Key] = append(byWindow[w.Key], w)
		}
		keys := make([]int64, 0, len(byWindow))
		for key := range byWindow {
			keys = append(keys, key)
		}
		slices.Sort(keys)
		var want []SlowRequest
		for _, key := range keys {
			want = append(want, TopSlow(byWindow[key], k)...)
		}
		if !reflect.DeepEqual(s.Slowest, want) {
			t.Fatalf("seed %d (%d runners, k %d, window %s): per-window slowest differ:\n got %v\nwant %v",
				seed, runners, k, time.Duration(s.WindowNanos), s.Slowest, want)
		}
		if wantRun := TopSlow(whole, SlowestOfRun); !reflect.DeepEqual(s.SlowestOfRun, wantRun) {
			t.Fatalf("seed %d: run's slowest differ:\n got %v\nwant %v", seed, s.SlowestOfRun, wantRun)
		}
		// The order of the runners does not matter.
		slices.Reverse(envs)
		again, err := Merge(envs...)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(again.Slowest, s.Slowest) || !reflect.DeepEqual(again.SlowestOfRun, s.SlowestOfRun) {
			t.Fatalf("seed %d: merging the runners in another order changed the slowest requests", seed)
		}
	}
}

// collectSlow is a runner's envelope of samples (a runner sees its samples in time order, give
// or take; the collector does not rely on it), through the wire format.
func collectSlow(t *testing.T, name string, samples []slowSample, start, end time.Time, cfg CollectorConfig) Envelope {
	t.Helper()
	c := NewCollector(cfg, start)
	series := c.Series("http_req_duration", Trend, "time", nil)
	for _, s := range samples {
		series.Add(s.t, s.r.DurationMillis)
		if c.SlowAdmits(s.t, s.r.DurationMillis) {
			c.AddSlow(s.t, s.r)
		}
	}
	e := c.Envelope(end)
	e.Runner, e.Final = name, true
	var b bytes.Buffer
	if err := Encode(&b, &e); err != nil {
		t.Fatal(err)
	}
	d, err := Decode(b.Bytes())
	if err != nil {
		t.Fatalf("decode %s: %v", name, err)
	}
	return d
}

func TestSlowestOffByDefaultAndInOlderEnvelopes(t *testing.T) {
	c := NewCollector(CollectorConfig{Window: time.Second}, time.Unix(10, 0))
	if c.SlowAdmits(10e9, 5) {
		t.Fatal("a collector without K admits a slow request")
	}
	c.AddSlow(10e9, SlowRequest{DurationMillis: 5})
	if e := c.Envelope(time.Unix(11, 0)); e.Slowest != nil || e.SlowestRun != nil || e.SlowestPerWindow != 0 {
		t.Fatalf("slowest requests kept with K 0: %+v", e)
	}
	// An envelope of a runner that predates them decodes and merges without them.
	old := smallEnvelope("old", true)
	raw, _ := json.Marshal(old)
	if bytes.Contains(raw, []byte("slowest")) {
		t.Fatalf("an envelope without slowest requests writes them: %s", raw)
	}
	d, err := Decode(encode(t, old))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Merge(d)
	if err != nil || s.Slowest != nil || s.SlowestOfRun != nil {
		t.Fatalf("merge of an old envelope: %v %+v", err, s.Slowest)
	}
}

func TestSlowestValidation(t *testing.T) {
	ok := SlowRequest{Key: 5, DurationMillis: 10, URL: "http://x", TraceID: "4bf92f3577b34da6a3ce929d0e0e4736"}
	for name, tc := range map[string]struct {
		k       int
		slowest []SlowRequest
		run     []SlowRequest
		want    string
	}{
		"K over the bound":    {k: MaxSlowest + 1, want: "per window"},
		"too many per window": {k: 1, slowest: []SlowRequest{ok, ok}, want: "more than 1 in window 5"},
		"keys descending":     {k: 2, slowest: []SlowRequest{ok, {Key: 4, DurationMillis: 1}}, want: "not ascending"},
		"negative duration":   {k: 1, slowest: []SlowRequest{{DurationMillis: -1}}, want: "duration"},
		"long URL":            {k: 1, slowest: []SlowRequest{{URL: strings.Repeat("u", MaxSlowURL+1)}}, want: "url of 513 bytes"},
		"trace id not hex":    {k: 1, slowest: []SlowRequest{{TraceID: "<script>"}}, want: "trace id"},
		"trace id upper case": {k: 1, slowest: []SlowRequest{{TraceID: "4BF92F35"}}, want: "trace id"},
		"run list too long":   {k: 1, run: make([]SlowRequest, SlowestOfRun+1), want: "of the run"},
		"bad run entry":       {k: 1, run: []SlowRequest{{Method: strings.Repeat("M", 33)}}, want: "method"},
	} {
		e := smallEnvelope("r", true)
		e.SlowestPerWindow, e.Slowest, e.SlowestRun = tc.k, tc.slowest, tc.run
		_, err := Decode(encode(t, e))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error saying %q", name, err, tc.want)
		}
	}
	e := smallEnvelope("r", true)
	e.SlowestPerWindow, e.Slowest, e.SlowestRun = 2, []SlowRequest{ok, ok}, []SlowRequest{ok}
	if _, err := Decode(encode(t, e)); err != nil {
		t.Fatalf("a valid envelope with slowest requests: %v", err)
	}
}

func TestCutSlowBoundsEveryString(t *testing.T) {
	long := strings.Repeat("é", 400) // two bytes each: a cut must not split one
	r := CutSlow(SlowRequest{Name: long, URL: long, Method: long, Status: long, Scenario: long, Runner: long,
		TraceID: "not-hex"})
	if err := r.validate(); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{r.Name, r.URL, r.Method, r.Status, r.Scenario, r.Runner} {
		if !strings.HasPrefix(long, s) || len(s)%2 != 0 {
			t.Errorf("cut %q is not a prefix on a character boundary", s)
		}
	}
	if r.TraceID != "" {
		t.Errorf("trace id %q kept", r.TraceID)
	}
	for id, want := range map[string]bool{"4bf92f3577b34da6a3ce929d0e0e4736": true, "00f067aa0ba902b7": true,
		strings.Repeat("0", 32): false, strings.Repeat("a", 33): false, "": false, "abc-1": false} {
		if ValidTraceID(id) != want {
			t.Errorf("ValidTraceID(%q) = %v", id, !want)
		}
	}
}

// TestSlowHeapKeepsTheKSlowest: whatever order requests arrive in, the heap ends with the k
// slowest of them.
func TestSlowHeapKeepsTheKSlowest(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for range 50 {
		k := r.Intn(6)
		var all []SlowRequest
		h := make(slowHeap, 0, k)
		for i := range 1 + r.Intn(200) {
			x := SlowRequest{DurationMillis: float64(r.Intn(20)), StartUnixNano: int64(i % 7)}
			all = append(all, x)
			if h.admits(x.DurationMillis, k) {
				h.offer(x, k)
			}
		}
		got := TopSlow(slices.Clone(h), k)
		if want := TopSlow(all, k); !slices.Equal(got, want) {
			t.Fatalf("k %d: got %v, want %v", k, got, want)
		}
	}
}
