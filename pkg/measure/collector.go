package measure

import (
	"slices"
	"sort"
	"time"
)

// CollectorConfig bounds what a Collector keeps.
type CollectorConfig struct {
	// Window is the initial width of time windows.
	Window time.Duration
	// MaxWindows caps the number of windows; when a run outgrows it the
	// width doubles and neighbouring windows merge, so memory stays flat
	// however long the run is.
	MaxWindows int
	// MaxSeriesPerMetric caps tag combinations per metric; further ones
	// fold into one "_overflow" series.
	MaxSeriesPerMetric int
	// Slowest is K, the slowest requests kept per window (AddSlow); 0 keeps none, at most
	// MaxSlowest.
	Slowest int
}

// DefaultCollectorConfig: 10 s windows, 10 min before the first coarsening.
var DefaultCollectorConfig = CollectorConfig{Window: DefaultWindow, MaxWindows: 60, MaxSeriesPerMetric: 200}

// Collector folds a sample stream into an Envelope with bounded memory. It
// is not safe for concurrent use.
type Collector struct {
	cfg         CollectorConfig
	windowNanos int64
	firstKey    int64 // key of window slot 0, shared by all series
	start       int64
	metrics     map[string]*collectedMetric
	cpu         []float64 // CPU seconds per window slot
	rss         []int64   // resident memory at the slot's last sample, bytes
	overflow    uint64
	overflows   []Overflow
	slow        []slowHeap // the slowest requests per window slot
	// slowRun are the run's slowest requests; their Key holds the sample's time until Envelope.
	slowRun slowHeap
}

type collectedMetric struct {
	name, contains string
	typ            MetricType
	series         map[string]*CollectedSeries
	overflow       *CollectedSeries
}

// CollectedSeries is a handle for adding samples to one series; callers can
// cache it per tag set to avoid building a key per sample.
type CollectedSeries struct {
	c        *Collector
	typ      MetricType
	tags     map[string]string
	total    Agg
	windows  []Agg // slot i is window key c.firstKey+i
	overflow bool
}

// NewCollector starts collecting at start.
func NewCollector(cfg CollectorConfig, start time.Time) *Collector {
	if cfg.Window <= 0 {
		cfg.Window = DefaultCollectorConfig.Window
	}
	if cfg.MaxWindows < 2 {
		cfg.MaxWindows = DefaultCollectorConfig.MaxWindows
	}
	if cfg.MaxSeriesPerMetric < 1 {
		cfg.MaxSeriesPerMetric = DefaultCollectorConfig.MaxSeriesPerMetric
	}
	cfg.Slowest = min(max(cfg.Slowest, 0), MaxSlowest)
	c := &Collector{cfg: cfg, windowNanos: int64(cfg.Window), start: start.UnixNano(), metrics: map[string]*collectedMetric{}}
	c.firstKey = floorDiv(c.start, c.windowNanos)
	return c
}

// Series returns the series of metric name with the given (already
// filtered) tags, creating it on first use. The map is retained.
func (c *Collector) Series(name string, typ MetricType, contains string, tags map[string]string) *CollectedSeries {
	m := c.metrics[name]
	if m == nil {
		m = &collectedMetric{name: name, typ: typ, contains: contains, series: map[string]*CollectedSeries{}}
		c.metrics[name] = m
	}
	key := sortedTagKey(tags)
	if s := m.series[key]; s != nil {
		return s
	}
	if len(m.series) >= c.cfg.MaxSeriesPerMetric {
		if m.overflow == nil {
			m.overflow = &CollectedSeries{c: c, typ: m.typ, tags: map[string]string{"_overflow": "true"}, overflow: true}
			c.overflows = append(c.overflows, Overflow{Metric: name, Tag: mostVaried(m.series, tags), Series: c.cfg.MaxSeriesPerMetric})
		}
		return m.overflow
	}
	s := &CollectedSeries{c: c, typ: m.typ, tags: tags}
	m.series[key] = s
	return s
}

// mostVaried is the tag key with the most distinct values among a metric's series and the
// combination that overflowed: the tag to blame for the overflow.
func mostVaried(series map[string]*CollectedSeries, extra map[string]string) string {
	values := map[string]map[string]bool{}
	count := func(tags map[string]string) {
		for k, v := range tags {
			if values[k] == nil {
				values[k] = map[string]bool{}
			}
			values[k][v] = true
		}
	}
	for _, s := range series {
		count(s.tags)
	}
	count(extra)
	best, most := "", 0
	for k, vs := range values {
		if len(vs) > most || (len(vs) == most && k < best) {
			best, most = k, len(vs)
		}
	}
	return best
}

// slot returns the window slot for unix-ns time t, coarsening first if t
// lies beyond the last slot. Times before the start land in slot 0.
func (c *Collector) slot(t int64) int {
	for {
		i := floorDiv(t, c.windowNanos) - c.firstKey
		if i < 0 {
			return 0
		}
		if i < int64(c.cfg.MaxWindows) {
			return int(i)
		}
		c.coarsen()
	}
}

// coarsen doubles the window width. Keys are unixNano/width, so new key =
// floor(old key / 2) and every runner's windows still align.
func (c *Collector) coarsen() {
	newFirst := floorDiv(c.firstKey, 2)
	remap := func(n int, merge func(from, to int)) int {
		size := 0
		for i := 0; i < n; i++ {
			j := int(floorDiv(c.firstKey+int64(i), 2) - newFirst)
			merge(i, j)
			size = max(size, j+1)
		}
		return size
	}
	for _, m := range c.metrics {
		all := make([]*CollectedSeries, 0, len(m.series)+1)
		for _, s := range m.series {
			all = append(all, s)
		}
		if m.overflow != nil {
			all = append(all, m.overflow)
		}
		for _, s := range all {
			out := make([]Agg, (len(s.windows)+2)/2)
			// Visiting windows in time order lets the later gauge value win.
			n := remap(len(s.windows), func(from, to int) { out[to].Merge(s.windows[from]) })
			s.windows = out[:n]
		}
	}
	cpu := make([]float64, (len(c.cpu)+2)/2)
	n := remap(len(c.cpu), func(from, to int) { cpu[to] += c.cpu[from] })
	c.cpu = cpu[:n]
	// Memory is a level, not an amount: the later sample of two merged windows wins.
	rss := make([]int64, (len(c.rss)+2)/2)
	n = remap(len(c.rss), func(from, to int) {
		if c.rss[from] > 0 {
			rss[to] = c.rss[from]
		}
	})
	c.rss = rss[:n]
	if len(c.slow) > 0 {
		slow := make([]slowHeap, (len(c.slow)+2)/2)
		n = remap(len(c.slow), func(from, to int) {
			for _, r := range c.slow[from] {
				r.Key = floorDiv(r.Key, 2)
				slow[to] = c.slowAt(slow[to])
				slow[to].offer(r, c.cfg.Slowest)
			}
		})
		c.slow = slow[:n]
	}
	c.firstKey = newFirst
	c.windowNanos *= 2
}

// Add folds one sample taken at unix-ns time t.
func (s *CollectedSeries) Add(t int64, v float64) {
	s.total.Add(s.typ, v, t)
	i := s.c.slot(t)
	if i >= len(s.windows) {
		s.windows = append(s.windows, make([]Agg, i-len(s.windows)+1)...)
	}
	s.windows[i].Add(s.typ, v, t)
	if s.overflow {
		s.c.overflow++
	}
}

// AddCPU records CPU seconds spent up to unix-ns time t.
func (c *Collector) AddCPU(t int64, seconds float64) {
	i := c.slot(t)
	if i >= len(c.cpu) {
		c.cpu = append(c.cpu, make([]float64, i-len(c.cpu)+1)...)
	}
	c.cpu[i] += seconds
}

// AddMemory records the process's resident memory at unix-ns time t; the window keeps the
// latest.
func (c *Collector) AddMemory(t int64, rssBytes int64) {
	i := c.slot(t)
	if i >= len(c.rss) {
		c.rss = append(c.rss, make([]int64, i-len(c.rss)+1)...)
	}
	c.rss[i] = rssBytes
}

// SlowAdmits says whether a request of ms milliseconds whose sample is at unix-ns time t is
// among the slowest kept so far, of its window or of the run: the caller builds the request
// (its strings) for AddSlow only then.
func (c *Collector) SlowAdmits(t int64, ms float64) bool {
	if c.cfg.Slowest == 0 {
		return false
	}
	if c.slowRun.admits(ms, SlowestOfRun) {
		return true
	}
	i := c.slot(t)
	return i >= len(c.slow) || c.slow[i].admits(ms, c.cfg.Slowest)
}

// AddSlow keeps r, the request of a sample at unix-ns time t, if it is among the slowest of
// its window or of the run; its Key is set here. It allocates only when r is kept.
func (c *Collector) AddSlow(t int64, r SlowRequest) {
	if c.cfg.Slowest == 0 {
		return
	}
	i := c.slot(t)
	if i >= len(c.slow) {
		c.slow = append(c.slow, make([]slowHeap, i-len(c.slow)+1)...)
	}
	r.Key = c.firstKey + int64(i)
	c.slow[i] = c.slowAt(c.slow[i])
	c.slow[i].offer(r, c.cfg.Slowest)
	if c.slowRun == nil {
		c.slowRun = make(slowHeap, 0, SlowestOfRun)
	}
	r.Key = t
	c.slowRun.offer(r, SlowestOfRun)
}

// slowAt is h, made with room for K on first use.
func (c *Collector) slowAt(h slowHeap) slowHeap {
	if h == nil {
		h = make(slowHeap, 0, c.cfg.Slowest)
	}
	return h
}

// Envelope snapshots what was collected. It shares histograms with the
// collector, so encode it before adding more samples.
func (c *Collector) Envelope(end time.Time) Envelope {
	e := Envelope{
		Version:         Version,
		StartUnixNano:   c.start,
		EndUnixNano:     max(end.UnixNano(), c.start),
		WindowNanos:     c.windowNanos,
		Accuracy:        RelativeAccuracy,
		OverflowSamples: c.overflow,
		Overflows:       c.overflows,
	}
	names := make([]string, 0, len(c.metrics))
	for n := range c.metrics {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		m := c.metrics[n]
		em := Metric{Name: m.name, Type: m.typ, Contains: m.contains}
		keys := make([]string, 0, len(m.series))
		for k := range m.series {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			em.Series = append(em.Series, m.series[k].snapshot())
		}
		if m.overflow != nil {
			em.Series = append(em.Series, m.overflow.snapshot())
		}
		e.Metrics = append(e.Metrics, em)
	}
	for i := range max(len(c.cpu), len(c.rss)) {
		w := CPUWindow{Key: c.firstKey + int64(i)}
		if i < len(c.cpu) {
			w.Seconds = c.cpu[i]
		}
		if i < len(c.rss) {
			w.RSSBytes = c.rss[i]
		}
		if w.Seconds > 0 || w.RSSBytes > 0 {
			e.CPU.Windows = append(e.CPU.Windows, w)
		}
	}
	if c.cfg.Slowest > 0 {
		e.SlowestPerWindow = c.cfg.Slowest
		for _, h := range c.slow {
			e.Slowest = append(e.Slowest, TopSlow(slices.Clone(h), len(h))...)
		}
		e.SlowestRun = TopSlow(slices.Clone(c.slowRun), SlowestOfRun)
		for i := range e.SlowestRun {
			e.SlowestRun[i].Key = floorDiv(e.SlowestRun[i].Key, c.windowNanos)
		}
	}
	return e
}

func (s *CollectedSeries) snapshot() Series {
	out := Series{Tags: s.tags, Total: s.total}
	for i := range s.windows {
		if s.windows[i].Count > 0 {
			out.Windows = append(out.Windows, Window{Key: s.c.firstKey + int64(i), Agg: s.windows[i]})
		}
	}
	return out
}
