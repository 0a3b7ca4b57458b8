package measure

import (
	"sort"
	"strings"
)

// CanonicalSelector writes a metric key such as `http_req_duration{ name: "push" }` in one
// form, `http_req_duration{name:push}` (tags sorted by key, no spaces or quotes), so keys
// written differently that select the same samples compare equal. An empty filter selects
// every series: it is the bare name. hasFilter says whether a tag filter is left.
func CanonicalSelector(key string) (canonical string, hasFilter bool, err error) {
	name, filter, err := ParseMetricSelector(key)
	if err != nil {
		return "", false, err
	}
	if len(filter) == 0 {
		return name, false, nil
	}
	keys := make([]string, 0, len(filter))
	for k := range filter {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(name)
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k + ":" + filter[k])
	}
	b.WriteByte('}')
	return b.String(), true, nil
}

// MatchingSeries are the series of the metric key names whose tags match its filter: those
// SubMetric merges. Nil when the key is malformed, names a tag the runners did not split by,
// or no runner reported the metric.
func (s *Summary) MatchingSeries(key string) []*SeriesSummary {
	_, m, _, err := s.SubMetric(key)
	if err != nil || m == nil {
		return nil
	}
	_, filter, _ := ParseMetricSelector(key)
	var out []*SeriesSummary
	for i := range m.Series {
		if matches(m.Series[i].Tags, filter) {
			out = append(out, &m.Series[i])
		}
	}
	return out
}
