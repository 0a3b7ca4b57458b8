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
