package measure

import (
	"bytes"
	"errors"
	"math"
	"math/rand"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestParseThreshold(t *testing.T) {
	valid := map[string]Threshold{
		"p(95)<200":     {Method: "p", Percentile: 95, Operator: "<", Value: 200},
		"p(99.9)<=500":  {Method: "p", Percentile: 99.9, Operator: "<=", Value: 500},
		"p(100)<1":      {Method: "p", Percentile: 100, Operator: "<", Value: 1},
		"p(0)>=0":       {Method: "p", Percentile: 0, Operator: ">=", Value: 0},
		"avg<=150":      {Method: "avg", Operator: "<=", Value: 150},
		"med<100":       {Method: "med", Operator: "<", Value: 100},
		"min>0":         {Method: "min", Operator: ">", Value: 0},
		"max<1000":      {Method: "max", Operator: "<", Value: 1000},
		"rate<0.01":     {Method: "rate", Operator: "<", Value: 0.01},
		"rate<.01":      {Method: "rate", Operator: "<", Value: 0.01},
		"count>10":      {Method: "count", Operator: ">", Value: 10},
		"value<5":       {Method: "value", Operator: "<", Value: 5},
		"count==3":      {Method: "count", Operator: "==", Value: 3},
		"count===3":     {Method: "count", Operator: "===", Value: 3},
		"count!=3":      {Method: "count", Operator: "!=", Value: 3},
		" avg < 1e3 ":   {Method: "avg", Operator: "<", Value: 1000}, //nolint:gocritic // surrounding blanks are what this case tests
		"min>-5":        {Method: "min", Operator: ">", Value: -5},
		"avg>=+2.5E-1":  {Method: "avg", Operator: ">=", Value: 0.25},
		"p(90.5)\t<\t1": {Method: "p", Percentile: 90.5, Operator: "<", Value: 1},
		// Admission's pattern admits it; k6 (JavaScript) reads it as Infinity.
		"avg<1e999": {Method: "avg", Operator: "<", Value: math.Inf(1)},
	}
	for expr, want := range valid {
		got, err := ParseThreshold(expr)
		if err != nil {
			t.Errorf("%q: %v", expr, err)
			continue
		}
		want.Source = expr
		if got != want {
			t.Errorf("%q: got %+v want %+v", expr, got, want)
		}
	}
	invalid := []string{
		"", "p95<200", "p(101)<1", "p(100.5)<1", "p(-1)<1", "p()<1", "p( 95 )<1", "avg", "avg<",
		"<5", "avg=<5", "avg=5", "avg<5ms", "avg<0x10", "avg<NaN", "avg<Inf", "mean<5", "AVG<5",
		"avg<5<6", "avg<<5", "p(95)<200 && p(99)<300",
	}
	for _, expr := range invalid {
		if err := ValidateThresholdExpression(expr); err == nil {
			t.Errorf("%q: accepted", expr)
		}
	}
}

// The pattern must compile as plain RE2 and accept exactly what the parser
// accepts (the parser uses it, so only the overflow case can differ).
func TestThresholdPatternIsPortable(t *testing.T) {
	if strings.Contains(ThresholdExpressionPattern, `\d`) || strings.Contains(ThresholdExpressionPattern, `\s`) {
		t.Fatal("pattern uses Perl classes; CRD/CEL tooling may not agree on them")
	}
	re := regexp.MustCompile(ThresholdExpressionPattern)
	for _, expr := range []string{"p(95)<200", "rate<0.01", "avg<1e999", "p(101)<1"} {
		_, err := ParseThreshold(expr)
		if re.MatchString(expr) != (err == nil) {
			t.Errorf("%q: pattern and parser disagree", expr)
		}
	}
}

func TestParseMetricSelector(t *testing.T) {
	name, tags, err := ParseMetricSelector(`http_req_duration{scenario:a, expected_response:"true"}`)
	if err != nil || name != "http_req_duration" || tags["scenario"] != "a" || tags["expected_response"] != "true" {
		t.Fatalf("got %q %v %v", name, tags, err)
	}
	for _, bad := range []string{"{a:b}", "m{a:b", "m{ab}", "m{:b}"} {
		if _, _, err := ParseMetricSelector(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func smallEnvelope(runner string, final bool) Envelope {
	c := NewCollector(DefaultCollectorConfig, time.Unix(1_700_000_000, 0))
	ok := map[string]string{"scenario": "default", "expected_response": "true", "status_class": "2xx"}
	for i := 0; i < 10; i++ {
		ts := time.Unix(1_700_000_000+int64(i), 0).UnixNano()
		c.Series("http_reqs", Counter, "", ok).Add(ts, 1)
		c.Series("http_req_duration", Trend, "time", ok).Add(ts, float64(10+i))
		c.Series("checks", Rate, "", map[string]string{"check": "ok"}).Add(ts, 1)
		c.Series("vus", Gauge, "", nil).Add(ts, 5)
	}
	e := c.Envelope(time.Unix(1_700_000_010, 0))
	e.Runner, e.Final = runner, final
	e.CPU = CPU{UserSeconds: 1, SystemSeconds: 0.5, Cores: 2}
	e.Thresholds = map[string][]string{"http_req_duration": {"p(95)<100"}, "http_reqs": {"count>=20"}}
	return e
}

func encode(t testing.TB, e Envelope) []byte {
	var b bytes.Buffer
	if err := Encode(&b, &e); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestEncodeDecodeBothEncodings(t *testing.T) {
	small := Envelope{Version: Version, Runner: "r", Final: true, WindowNanos: 1, Accuracy: RelativeAccuracy}
	start := time.Unix(1_700_000_000, 0)
	c := NewCollector(DefaultCollectorConfig, start)
	for _, smp := range randomStream(rand.New(rand.NewSource(1)), 500, start, time.Minute) {
		c.Series(smp.metric, smp.typ, "", smp.tags).Add(smp.t, smp.v)
	}
	big := c.Envelope(start.Add(time.Minute))
	big.Runner, big.Final = "r", true
	for name, e := range map[string]Envelope{"json": small, "gzip": big} {
		data := encode(t, e)
		if name == "gzip" && !bytes.Contains(data, []byte("encoding=gzip+base64")) {
			t.Errorf("large envelope not compressed")
		}
		for _, l := range strings.Split(string(data), "\n") {
			if len(l) > 2*base64LineWidth && name == "gzip" {
				t.Errorf("line of %d chars", len(l))
			}
		}
		got, err := Decode(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got.Runner != "r" || len(got.Metrics) != len(e.Metrics) {
			t.Fatalf("%s: round trip lost data: %+v", name, got)
		}
	}
}

func TestDecodeErrorsNameTheProblem(t *testing.T) {
	good := encode(t, smallEnvelope("r", true))
	lines := strings.Split(strings.TrimSpace(string(good)), "\n")
	join := func(ls []string) []byte { return []byte(strings.Join(ls, "\n") + "\n") }
	flip := append([]string(nil), lines...)
	mid := flip[3]
	flip[3] = mid[:10] + string(rune('A'+(mid[10]-'A'+1)%26)) + mid[11:]
	v2 := append([]string(nil), lines...)
	v2[0] = strings.Replace(v2[0], "v1", "v2", 1)
	cases := map[string]struct {
		data []byte
		want string
	}{
		"empty":          {nil, "no fleetbench result envelope"},
		"no end marker":  {join(lines[:len(lines)-1]), "end marker missing"},
		"lines missing":  {join(append(append([]string{}, lines[:2]...), lines[len(lines)-1])), "truncated"},
		"byte flipped":   {join(flip), ""},
		"newer version":  {join(v2), "unsupported envelope marker"},
		"no header":      {join([]string{BeginMarker, EndMarker}), "header missing"},
		"bad header":     {join([]string{BeginMarker, "encoding=zstd bytes=1 sha256=00", EndMarker}), "unknown encoding"},
		"trailing noise": {append(append([]byte{}, good...), "hello\n"...), "after the end marker"},
	}
	for name, c := range cases {
		_, err := Decode(c.data)
		if err == nil {
			t.Errorf("%s: decoded", name)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q does not mention %q", name, err, c.want)
		}
	}
	// Every truncation point of a valid envelope is an error, not a panic.
	for i := 0; i < len(good)-1; i++ {
		if _, err := Decode(good[:i]); err == nil && i < len(good)-1 {
			t.Fatalf("truncated at %d of %d decoded", i, len(good))
		}
	}
}

func TestDecodeRejectsInvalidContent(t *testing.T) {
	e := smallEnvelope("r", true)
	e.Metrics[0].Type = "histogram"
	if _, err := Decode(encode(t, e)); err == nil || !strings.Contains(err.Error(), `unknown type "histogram"`) {
		t.Fatalf("got %v", err)
	}
	e = smallEnvelope("r", true)
	for i := range e.Metrics {
		if e.Metrics[i].Type == Trend {
			e.Metrics[i].Series[0].Total.Count++
		}
	}
	if _, err := Decode(encode(t, e)); err == nil || !strings.Contains(err.Error(), "histogram holds") {
		t.Fatalf("got %v", err)
	}
}

func TestExtractEnvelopeFromLogTail(t *testing.T) {
	checkpoint := encode(t, smallEnvelope("checkpoint", false))
	final := encode(t, smallEnvelope("final", true))
	var log bytes.Buffer
	log.WriteString("running (0m10.0s), 0/1 VUs\n")
	log.Write(checkpoint)
	// k6 logs interleaved into the final envelope, plus kubelet timestamps.
	for i, l := range strings.Split(strings.TrimSpace(string(final)), "\n") {
		log.WriteString("2025-01-02T03:04:05.123456789Z " + l + "\n")
		if i == 3 {
			log.WriteString(`time="2025-01-02T03:04:05Z" level=warning msg="Request Failed"` + "\n")
		}
	}
	log.WriteString("     checks.........................: 100.00% 10 out of 10\n")
	e, err := ExtractEnvelope(log.Bytes())
	if err != nil || e.Runner != "final" {
		t.Fatalf("got %q, %v", e.Runner, err)
	}

	// k6's stderr may land between the begin marker and the header too (seen on a runner
	// with no VU, whose warning and envelope are written at the same moment).
	lines := strings.Split(strings.TrimSpace(string(final)), "\n")
	early := strings.Join(append([]string{lines[0], `time="2025-01-02T03:04:05Z" level=warning msg="no VU" script=test.js`}, lines[1:]...), "\n") + "\n"
	if e, err := ExtractEnvelope([]byte(early)); err != nil || e.Runner != "final" {
		t.Fatalf("a log line before the header: got %q, %v", e.Runner, err)
	}

	// A runner killed while printing its final envelope leaves the checkpoint.
	cut := append(append([]byte{}, checkpoint...), final[:len(final)/2]...)
	e, err = ExtractEnvelope(cut)
	if err != nil || e.Runner != "checkpoint" || e.Final {
		t.Fatalf("got %q final=%v, %v", e.Runner, e.Final, err)
	}

	if _, err := ExtractEnvelope(final[:len(final)/2]); err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Fatalf("got %v", err)
	}
	if _, err := ExtractEnvelope([]byte("just k6 output\n")); !errors.Is(err, ErrNoEnvelope) {
		t.Fatalf("got %v", err)
	}
}

func TestMergeSmallEnvelopes(t *testing.T) {
	s, err := Merge(smallEnvelope("a", true), smallEnvelope("b", true))
	if err != nil {
		t.Fatal(err)
	}
	reqs := s.Metrics["http_reqs"]
	if reqs.Stats.Count != 20 || reqs.Stats.Rate != 2 {
		t.Errorf("http_reqs: %+v", reqs.Stats)
	}
	d := s.Metrics["http_req_duration"].Stats
	if d.Min != 10 || d.Max != 19 || d.Avg != 14.5 || relErr(d.Med, 14.5) > RelativeAccuracy {
		t.Errorf("duration: %+v", d)
	}
	if d.AboveAvgPercent != 50 || d.BelowAvgPercent != 50 {
		t.Errorf("above/below avg: %g/%g", d.AboveAvgPercent, d.BelowAvgPercent)
	}
	if v := s.Metrics["vus"].Stats.Value; v != 10 {
		t.Errorf("fleet vus = %g, want sum of runners 10", v)
	}
	if len(s.Checks) != 1 || s.Checks[0].Passes != 20 {
		t.Errorf("checks: %+v", s.Checks)
	}
	if len(s.Thresholds) != 2 || !s.Thresholds[0].Passed || !s.Thresholds[1].Passed {
		t.Errorf("script thresholds: %+v", s.Thresholds)
	}
	if u := s.Runners[0].CPUUtilization; u != 1.5/(10*2) {
		t.Errorf("cpu utilization %g", u)
	}
	res := s.EvaluateThresholds(map[string][]string{
		"http_reqs":                     {"count>20", "rate>=2", "avg<1"},
		"http_req_duration{status:200}": {"p(95)<1"},
		"http_req_duration":             {"bogus"},
		"vus":                           {"value==10"},
	})
	want := map[string]string{ // expression -> outcome
		"count>20": "fail", "rate>=2": "pass", "avg<1": "error", "p(95)<1": "error", "bogus": "error", "value==10": "pass",
	}
	for _, r := range res {
		got := "fail"
		switch {
		case r.Error != "":
			got = "error"
		case r.Passed:
			got = "pass"
		}
		if got != want[r.Expression] {
			t.Errorf("%s %s: %s (%+v)", r.Metric, r.Expression, got, r)
		}
	}

	b := smallEnvelope("c", false)
	b.Metrics[0].Type = Gauge
	if _, err := Merge(smallEnvelope("a", true), b); err == nil {
		t.Error("type conflict merged")
	}
	if _, err := Merge(); err == nil {
		t.Error("empty merge succeeded")
	}
}

// TestEmptyMetricsAreJudgedAsK6Does: k6 v2.2.0 judges a threshold on a metric or sub-metric
// with no samples on its empty sink (zeros), except a rate, whose value is missing and passes.
func TestEmptyMetricsAreJudgedAsK6Does(t *testing.T) {
	s, err := Merge(smallEnvelope("a", true))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		key, expr     string
		passed, empty bool
	}{
		{"http_req_duration{scenario:none}", "p(95)<500", true, false},
		{"http_req_duration{scenario:none}", "avg>0", false, false},
		{"http_reqs{scenario:none}", "count>0", false, false},
		{"http_reqs{scenario:none}", "count<1", true, false},
		{"http_reqs{scenario:none}", "rate<1", true, false},
		{"http_reqs{scenario:none}", "rate>0", false, false},
		{"http_req_failed", "rate<0.01", true, true}, // built in, no samples: a Rate has no value
		{"checks{scenario:none}", "rate>0.99", true, true},
		{"ws_sessions", "count>0", false, false}, // built in, never emitted: a Counter's 0
		{"vus{scenario:none}", "value>0", false, false},
		{"errors", "count<1", true, false}, // custom, never emitted: k6 judges it on 0
		{"errors", "rate<0.1", true, true},
		{"time_lapse", "p(90)<100", true, false},
	} {
		r := s.EvaluateThresholds(map[string][]string{tc.key: {tc.expr}})[0]
		if r.Error != "" || r.Passed != tc.passed || r.Skipped != tc.empty || r.Value != 0 {
			t.Errorf("%s %s = %+v, want passed=%v skipped=%v value 0", tc.key, tc.expr, r, tc.passed, tc.empty)
		}
	}
}

// A script's own gauge is one quantity every runner observes: the fleet's value is the latest
// one, as one k6 shows it; vus stays the sum of the runners' VUs.
func TestCustomGaugesKeepTheLatestValue(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	runner := func(name string, at time.Duration, catalog, vus float64) Envelope {
		c := NewCollector(DefaultCollectorConfig, start)
		c.Series("catalog_size", Gauge, "", nil).Add(start.Add(at).UnixNano(), catalog)
		c.Series("vus", Gauge, "", nil).Add(start.Add(at).UnixNano(), vus)
		e := c.Envelope(start.Add(10 * time.Second))
		e.Runner, e.Final = name, true
		return e
	}
	s, err := Merge(runner("a", time.Second, 25, 3), runner("b", 2*time.Second, 26, 4))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Metrics["catalog_size"].Stats.Value; got != 26 {
		t.Errorf("catalog_size = %g, want the latest value 26", got)
	}
	if got := s.Metrics["vus"].Stats.Value; got != 7 {
		t.Errorf("vus = %g, want the fleet's 3+4", got)
	}
}

// A threshold whose key matched no sample is marked NoData, whatever k6 judges it to; one that
// matched samples is not.
func TestThresholdsJudgedOnNoDataAreMarked(t *testing.T) {
	s, err := Merge(smallEnvelope("a", true))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		key, expr string
		noData    bool
	}{
		{"http_req_duration{scenario:none}", "p(95)<500", true},
		{"http_req_failed", "rate<0.01", true},
		{"errors", "count<1", true},
		{"http_req_duration", "p(95)<500", false},
		{"http_req_duration{scenario:default}", "p(95)<500", false},
	} {
		r := s.EvaluateThresholds(map[string][]string{tc.key: {tc.expr}})[0]
		if r.Error != "" || r.NoData != tc.noData {
			t.Errorf("%s %s: NoData %v, want %v (%+v)", tc.key, tc.expr, r.NoData, tc.noData, r)
		}
	}
}
