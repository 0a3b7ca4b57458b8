package measure

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// ThresholdExpressionPattern matches exactly the threshold expressions
// fleetbench accepts: the subset of k6's grammar with decimal numbers,
// percentiles in [0, 100], and the operators k6 knows. It is RE2 syntax
// without Perl classes, so it can be used verbatim as a CRD pattern or in
// a CEL matches() rule.
const ThresholdExpressionPattern = `^[ \t]*(avg|min|max|med|count|rate|value|p\((100(\.0+)?|[0-9]{1,2}(\.[0-9]+)?)\))[ \t]*(<=|<|>=|>|===|==|!=)[ \t]*([+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?)[ \t]*$`

var thresholdRE = regexp.MustCompile(ThresholdExpressionPattern)

// Threshold is a parsed threshold expression such as "p(95)<200".
type Threshold struct {
	Source string
	// Method is avg, min, max, med, count, rate, value or p.
	Method     string
	Percentile float64 // for Method "p": 0..100
	Operator   string
	Value      float64
}

// ParseThreshold parses one expression. The parser is the pattern itself,
// so ValidateThresholdExpression, the CRD pattern and evaluation agree.
func ParseThreshold(expr string) (Threshold, error) {
	m := thresholdRE.FindStringSubmatch(expr)
	if m == nil {
		return Threshold{}, fmt.Errorf("threshold %q: want <method><op><number>, method one of "+
			"avg, min, max, med, count, rate, value, p(0..100); op one of < <= > >= == === !=", expr)
	}
	t := Threshold{Source: expr, Method: m[1], Operator: m[5]}
	var err error
	if m[2] != "" {
		t.Method = "p"
		if t.Percentile, err = strconv.ParseFloat(m[2], 64); err != nil {
			return Threshold{}, fmt.Errorf("threshold %q: percentile: %w", expr, err)
		}
	}
	// An exponent out of range (1e999) is ±Inf, as JavaScript's parseFloat reads it for k6;
	// the CRD's pattern admits it, so refusing it here would fail a run admission accepted
	// (found by FuzzParseThreshold).
	if t.Value, err = strconv.ParseFloat(m[6], 64); err != nil && !errors.Is(err, strconv.ErrRange) {
		return Threshold{}, fmt.Errorf("threshold %q: value: %w", expr, err)
	}
	return t, nil
}

// ValidateThresholdExpression reports whether expr is an accepted threshold
// expression; admission validation mirrors it with ThresholdExpressionPattern.
func ValidateThresholdExpression(expr string) error {
	_, err := ParseThreshold(expr)
	return err
}

// methodsFor lists the aggregation methods k6 allows per metric type.
func methodsFor(t MetricType) []string {
	switch t {
	case Counter:
		return []string{"count", "rate"}
	case Gauge:
		return []string{"value"}
	case Rate:
		return []string{"rate"}
	case Trend:
		return []string{"avg", "min", "max", "med", "p"}
	}
	return nil
}

// Supports reports whether the threshold's method applies to metric type t.
func (t Threshold) Supports(typ MetricType) bool {
	for _, m := range methodsFor(typ) {
		if m == t.Method {
			return true
		}
	}
	return false
}

// Passes applies the operator to lhs as k6 does (== and === are the same
// on numbers).
func (t Threshold) Passes(lhs float64) bool {
	switch t.Operator {
	case "<":
		return lhs < t.Value
	case "<=":
		return lhs <= t.Value
	case ">":
		return lhs > t.Value
	case ">=":
		return lhs >= t.Value
	case "==", "===":
		return lhs == t.Value
	case "!=":
		return lhs != t.Value
	}
	return false
}

// ParseMetricSelector splits a threshold key such as
// `http_req_duration{scenario:a,expected_response:true}` into the metric
// name and the tag filter, as k6 does for submetrics.
func ParseMetricSelector(key string) (string, map[string]string, error) {
	name, rest, ok := strings.Cut(key, "{")
	name = strings.TrimSpace(name)
	if name == "" {
		return "", nil, fmt.Errorf("threshold key %q: metric name missing", key)
	}
	if !ok {
		return name, nil, nil
	}
	if !strings.HasSuffix(rest, "}") {
		return "", nil, fmt.Errorf("threshold key %q: missing closing brace", key)
	}
	rest = strings.TrimSuffix(rest, "}")
	tags := map[string]string{}
	if strings.TrimSpace(rest) == "" {
		return name, tags, nil
	}
	for _, kv := range strings.Split(rest, ",") {
		k, v, ok := strings.Cut(kv, ":")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return "", nil, fmt.Errorf("threshold key %q: tag filter %q is not key:value", key, kv)
		}
		// k6 allows quoted values: {name:"x"}.
		v = strings.Trim(strings.TrimSpace(v), `"'`)
		tags[k] = v
	}
	return name, tags, nil
}

// ThresholdResult is the outcome of one threshold on merged data.
type ThresholdResult struct {
	Metric     string  `json:"metric"` // the key as written, with any tag filter
	Expression string  `json:"expression"`
	Value      float64 `json:"value"` // the aggregated left-hand side
	Passed     bool    `json:"passed"`
	// Skipped is true when k6 would have no value to judge (an empty Rate): it passes.
	Skipped bool `json:"skipped,omitempty"`
	// NoData is true when no sample matched the key (no runner saw the metric, or none of its
	// samples carried the tags): k6 judges it on zero values (or skips it) and it usually passes.
	NoData bool   `json:"noData,omitempty"`
	Error  string `json:"error,omitempty"`
}

// EvaluateThresholds evaluates thresholds (metric key to expressions) on the
// merged data. A threshold that cannot be evaluated (unknown tag, method not
// valid for the metric's type, bad expression) fails with Error set.
func (s *Summary) EvaluateThresholds(thresholds map[string][]string) []ThresholdResult {
	keys := make([]string, 0, len(thresholds))
	for k := range thresholds {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []ThresholdResult
	for _, key := range keys {
		for _, expr := range thresholds[key] {
			out = append(out, s.evaluate(key, expr))
		}
	}
	return out
}

func (s *Summary) evaluate(key, expr string) ThresholdResult {
	r := ThresholdResult{Metric: key, Expression: expr}
	fail := func(format string, args ...any) ThresholdResult {
		r.Error = fmt.Sprintf(format, args...)
		return r
	}
	t, err := ParseThreshold(expr)
	if err != nil {
		return fail("%v", err)
	}
	name, m, agg, err := s.SubMetric(key)
	if err != nil {
		return fail("%v", err)
	}
	typ, known := BuiltinMetrics[name]
	if m != nil {
		typ, known = m.Type, true
	}
	if known && !t.Supports(typ) {
		return fail("method %q does not apply to %s metric %q (allowed: %s)",
			t.Method, typ, name, strings.Join(methodsFor(typ), ", "))
	}
	if agg.Count == 0 {
		return emptyThreshold(r, t, typ, known, s.Duration.Seconds())
	}
	r.Value = sinkValue(typ, t, &agg, s.Duration.Seconds())
	r.Passed = t.Passes(r.Value)
	return r
}

// emptyThreshold judges a threshold on a metric or sub-metric without samples as k6 v2.2.0
// does at the end of a test: its sink values are 0 (a counter's count and rate, a gauge's
// value, a trend's min/max/avg/med/percentiles), except a rate's, which is missing, so the
// threshold passes. A metric no runner saw and k6 does not build in has an unknown type; only
// "rate" is ambiguous there (a Counter's 0 or a Rate's pass) and it passes, as the Rate
// thresholds scripts write do.
func emptyThreshold(r ThresholdResult, t Threshold, typ MetricType, known bool, seconds float64) ThresholdResult {
	r.NoData = true
	missing := t.Method == "rate" && (!known || typ == Rate || seconds <= 0)
	if missing {
		r.Passed, r.Skipped = true, true
		return r
	}
	r.Value = 0
	r.Passed = t.Passes(0)
	return r
}

// SubMetric selects what a threshold key such as `http_req_duration{name:home}` names, as k6
// selects a sub-metric's samples: the merged aggregate of the metric's series whose tags match
// the filter (every series without one). name is the metric's name; m is nil when no runner
// reported it. The error names a malformed key or a tag the runners did not split by.
func (s *Summary) SubMetric(key string) (name string, m *MetricSummary, agg Agg, err error) {
	name, filter, err := ParseMetricSelector(key)
	if err != nil {
		return "", nil, Agg{}, err
	}
	for k := range filter {
		if !contains(s.Tags, k) {
			return name, nil, Agg{}, fmt.Errorf("tag %q is not recorded by the runners (recorded: %s): a runner image older than the operator?",
				k, strings.Join(s.Tags, ", "))
		}
	}
	m = s.Metrics[name]
	if m != nil {
		for _, sr := range m.Series {
			if matches(sr.Tags, filter) {
				agg.Merge(sr.Agg)
			}
		}
	}
	return name, m, agg, nil
}

func matches(tags, filter map[string]string) bool {
	for k, v := range filter {
		if tags[k] != v {
			return false
		}
	}
	return true
}

// sinkValue is the left-hand side k6 computes for a method on a metric.
func sinkValue(typ MetricType, t Threshold, a *Agg, seconds float64) float64 {
	switch t.Method {
	case "count":
		return a.Sum // a k6 counter's "count" is the sum of its samples
	case "rate":
		if typ == Counter {
			if seconds <= 0 {
				return 0
			}
			return a.Sum / seconds
		}
		return float64(a.NonZero) / float64(a.Count)
	case "value":
		return a.Last
	case "avg":
		return a.Avg()
	case "min":
		return a.Min
	case "max":
		return a.Max
	case "med":
		return a.Quantile(0.5)
	case "p":
		return a.Quantile(t.Percentile / 100)
	}
	return 0
}
