// Package output is fleetbench's k6 output extension. It folds every sample
// into bounded, mergeable aggregates (see pkg/measure) as it arrives and, when
// k6 stops the output, prints one result envelope to stdout for the
// controller to read from the pod log.
//
// Use it as `k6 run --out fleetbench script.js`. Configuration (env):
//
//	K6_FLEETBENCH_WINDOW       window width (at least 100ms); by default from the script's plan (windowForScript)
//	K6_FLEETBENCH_MAX_WINDOWS  windows kept before widths double, default 60
//	K6_FLEETBENCH_MAX_SERIES   tag combinations per metric, default 200
//	K6_FLEETBENCH_CHECKPOINT   also print a partial envelope this often (default off)
//	K6_FLEETBENCH_FILE         also write the final envelope to this file
//	K6_FLEETBENCH_RUNNER       runner name, default $POD_NAME or the host name
//	K6_FLEETBENCH_EXCLUDE_SCENARIOS  comma-separated scenarios whose samples are not counted (a warm-up)
//	K6_FLEETBENCH_LIVE         serve the envelope so far at this address (e.g. :6566), path measure.LivePath
//	K6_FLEETBENCH_TAGS         comma-separated tags to split series by besides measure.KeptTags (the
//	                           operator passes those its thresholds and baseline metrics name; the script's are added)
//	K6_FLEETBENCH_SLOWEST      slowest requests kept per window, 0 to 50 (0: none), default 5
package output

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.k6.io/k6/v2/metrics"
	"go.k6.io/k6/v2/output"

	"fleetbench.dev/fleetbench/pkg/measure"
	"fleetbench.dev/fleetbench/runner/check"
	"fleetbench.dev/fleetbench/runner/preflight"
)

// Name is the output name used with --out.
const Name = "fleetbench"

func init() {
	output.RegisterExtension(Name, func(p output.Params) (output.Output, error) {
		if check.Active() {
			// The pre-flight: k6 run has accepted the test; it must go no further.
			return nil, check.Conclude(p)
		}
		return New(p)
	})
}

// Config is the output's configuration.
type Config struct {
	Collector  measure.CollectorConfig
	Checkpoint time.Duration
	File       string
	Runner     string
	// Live is the address of the live endpoint; empty turns it off.
	Live string
	// Exclude are scenarios whose samples are dropped, e.g. a benchmark's warm-up.
	Exclude map[string]bool
	// Tags are tags to keep besides measure.KeptTags.
	Tags []string
}

// ConfigFromEnv reads the K6_FLEETBENCH_* variables.
func ConfigFromEnv(env map[string]string) (Config, error) {
	c := Config{Collector: measure.DefaultCollectorConfig, File: env["K6_FLEETBENCH_FILE"], Runner: env["K6_FLEETBENCH_RUNNER"],
		Live: env["K6_FLEETBENCH_LIVE"], Exclude: map[string]bool{}}
	for _, sc := range strings.Split(env["K6_FLEETBENCH_EXCLUDE_SCENARIOS"], ",") {
		if sc = strings.TrimSpace(sc); sc != "" {
			c.Exclude[sc] = true
		}
	}
	for _, tag := range strings.Split(env["K6_FLEETBENCH_TAGS"], ",") {
		if tag = strings.TrimSpace(tag); tag != "" {
			c.Tags = append(c.Tags, tag)
		}
	}
	durations := map[string]*time.Duration{"K6_FLEETBENCH_WINDOW": &c.Collector.Window, "K6_FLEETBENCH_CHECKPOINT": &c.Checkpoint}
	for k, dst := range durations {
		if v, ok := env[k]; ok && v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d < 0 {
				return c, fmt.Errorf("%s=%q: want a non-negative duration like 10s", k, v)
			}
			*dst = d
		}
	}
	if c.Collector.Window < measure.MinWindow {
		return c, fmt.Errorf("K6_FLEETBENCH_WINDOW=%s: must be at least %s", c.Collector.Window, measure.MinWindow)
	}
	ints := map[string]*int{"K6_FLEETBENCH_MAX_WINDOWS": &c.Collector.MaxWindows, "K6_FLEETBENCH_MAX_SERIES": &c.Collector.MaxSeriesPerMetric}
	for k, dst := range ints {
		if v, ok := env[k]; ok && v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 2 || n > 100000 {
				return c, fmt.Errorf("%s=%q: want an integer in [2, 100000]", k, v)
			}
			*dst = n
		}
	}
	c.Collector.Slowest = measure.DefaultSlowest
	if v, ok := env["K6_FLEETBENCH_SLOWEST"]; ok && v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > measure.MaxSlowest {
			return c, fmt.Errorf("K6_FLEETBENCH_SLOWEST=%q: want an integer in [0, %d]", v, measure.MaxSlowest)
		}
		c.Collector.Slowest = n
	}
	if c.Runner == "" {
		c.Runner = env["POD_NAME"]
	}
	if c.Runner == "" {
		c.Runner, _ = os.Hostname()
	}
	return c, nil
}

// Output implements k6's output.Output.
type Output struct {
	cfg    Config
	stdout io.Writer
	now    func() time.Time // replaceable in tests

	mu         sync.Mutex
	collector  *measure.Collector
	cache      map[metrics.TimeSeries]*measure.CollectedSeries
	thresholds map[string][]string
	// abortOnFail are the script's abortOnFail thresholds, judged by the operator fleet-wide.
	abortOnFail []measure.AbortThreshold
	// keep are the tag keys series are split by: the defaults and every tag a threshold names.
	keep    map[string]bool
	cpu     cpuMeter
	stopped bool
	live    *http.Server
	// release ends a linger (ReleasePath), once; replaceable in tests.
	release func()
	// reached says whether the runner reached its target (preflight.Reached): ReadyPath's answer.
	reached     func() bool
	releaseOnce sync.Once
	// final is the final envelope, set before finalReady is closed (FinalPath).
	final      []byte
	finalReady chan struct{}

	done chan struct{}
	wg   sync.WaitGroup
}

var (
	_ output.WithStopWithTestError = (*Output)(nil)
	_ output.WithThresholds        = (*Output)(nil)
)

// New creates the output from k6's parameters.
func New(p output.Params) (*Output, error) {
	cfg, err := ConfigFromEnv(p.Environment)
	if err != nil {
		return nil, err
	}
	if p.Environment["K6_FLEETBENCH_WINDOW"] == "" {
		cfg.Collector.Window = windowForScript(p.ScriptOptions)
	}
	w := p.StdOut
	if w == nil {
		w = os.Stdout
	}
	o := &Output{cfg: cfg, stdout: w, now: time.Now, done: make(chan struct{}), keep: map[string]bool{}, release: interruptSelf,
		reached: preflight.Reached, finalReady: make(chan struct{})}
	for _, tag := range append(append([]string(nil), measure.KeptTags...), cfg.Tags...) {
		o.keep[tag] = true
	}
	return o, nil
}

// Description is shown in k6's banner.
func (o *Output) Description() string { return "fleetbench (result envelope on stdout)" }

// SetThresholds keeps the script's thresholds so they can be evaluated on
// the merged data of all runners.
func (o *Output) SetThresholds(th map[string]metrics.Thresholds) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.thresholds = map[string][]string{}
	o.abortOnFail = nil
	for key, t := range th {
		// k6 validated the keys; a sub-metric's tags must be split by so it can be judged.
		if _, filter, err := measure.ParseMetricSelector(key); err == nil {
			for tag := range filter {
				o.keep[tag] = true
			}
		}
		for _, x := range t.Thresholds {
			o.thresholds[key] = append(o.thresholds[key], x.Source)
			if x.AbortOnFail {
				o.abortOnFail = append(o.abortOnFail, measure.AbortThreshold{Metric: key, Expression: x.Source,
					DelayNanos: int64(x.AbortGracePeriod.TimeDuration())})
			}
		}
	}
	// Metrics come from a map: order them, keeping each metric's own order.
	sort.SliceStable(o.abortOnFail, func(i, j int) bool { return o.abortOnFail[i].Metric < o.abortOnFail[j].Metric })
}

// Start begins collecting; a background loop attributes CPU time to
// windows and prints checkpoints.
func (o *Output) Start() error {
	o.mu.Lock()
	start := o.now()
	o.collector = measure.NewCollector(o.cfg.Collector, start)
	o.cache = map[metrics.TimeSeries]*measure.CollectedSeries{}
	o.cpu = newCPUMeter()
	o.mu.Unlock()

	if o.cfg.Live != "" {
		if err := o.serveLive(); err != nil {
			return fmt.Errorf("fleetbench: live endpoint on %s: %w", o.cfg.Live, err)
		}
	}
	o.wg.Add(1)
	go o.loop()
	return nil
}

func (o *Output) loop() {
	defer o.wg.Done()
	// Sample CPU a few times per window so each window gets its own share.
	cpuTick := time.NewTicker(min(o.cfg.Collector.Window, 2*time.Second))
	defer cpuTick.Stop()
	var checkpoint <-chan time.Time
	if o.cfg.Checkpoint > 0 {
		t := time.NewTicker(o.cfg.Checkpoint)
		defer t.Stop()
		checkpoint = t.C
	}
	for {
		select {
		case <-o.done:
			return
		case <-cpuTick.C:
			o.mu.Lock()
			o.sampleCPU()
			o.mu.Unlock()
		case <-checkpoint:
			o.mu.Lock()
			b := o.encode(false, nil)
			o.mu.Unlock()
			o.stdout.Write(b) //nolint:errcheck // best effort; the final envelope reports errors
		}
	}
}

// sampleCPU books CPU time used since the last sample to the current window, and the
// resident memory now: the runner's own memory over time, for its leak verdict.
// Callers hold o.mu.
func (o *Output) sampleCPU() {
	now := o.now().UnixNano()
	if sec := o.cpu.delta(); sec > 0 {
		o.collector.AddCPU(now, sec)
	}
	if rss := residentBytes(); rss > 0 {
		o.collector.AddMemory(now, rss)
	}
}

// maxCachedSeries bounds the TimeSeries cache; scripts with unbounded tag
// values (e.g. URLs as names) would otherwise grow it forever.
const maxCachedSeries = 10000

// AddMetricSamples folds samples in memory; no I/O per sample.
func (o *Output) AddMetricSamples(containers []metrics.SampleContainer) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.stopped {
		return
	}
	for _, sc := range containers {
		for _, s := range sc.GetSamples() {
			series := o.cache[s.TimeSeries]
			if series == nil && len(o.cfg.Exclude) > 0 && s.Tags != nil {
				if name, _ := s.Tags.Get("scenario"); o.cfg.Exclude[name] {
					continue
				}
			}
			if series == nil {
				if len(o.cache) >= maxCachedSeries {
					clear(o.cache)
				}
				series = o.collector.Series(s.Metric.Name, metricType(s.Metric.Type), contains(s.Metric.Contains), o.keptTags(s.Metric.Name, s.Tags))
				o.cache[s.TimeSeries] = series
			}
			series.Add(s.Time.UnixNano(), s.Value)
			if slowMetric(s.Metric.Name) {
				o.addSlow(&s)
			}
		}
	}
}

// Stop is called by k6 when the test ends without an error.
func (o *Output) Stop() error { return o.StopWithTestError(nil) }

// StopWithTestError prints the final envelope. k6 calls it on normal ends,
// on aborts (thresholds, test.abort()) and after the first SIGINT/SIGTERM,
// so an interrupted runner still reports what it has.
func (o *Output) StopWithTestError(testErr error) error {
	o.mu.Lock()
	if o.stopped {
		o.mu.Unlock()
		return nil
	}
	o.stopped = true
	o.mu.Unlock()
	close(o.done)
	o.wg.Wait()

	b, firstErr := o.printFinal(testErr)
	// Answer the held final requests before the live endpoint closes: shutting it down waits
	// for them.
	o.final = b
	close(o.finalReady)
	o.stopLive()
	if o.cfg.File != "" {
		if err := writeFileAtomic(o.cfg.File, b); err != nil && firstErr == nil {
			firstErr = fmt.Errorf("fleetbench: write %s: %w", o.cfg.File, err)
		}
	}
	return firstErr
}

// printFinal prints the final envelope on stdout and returns it.
func (o *Output) printFinal(testErr error) ([]byte, error) {
	o.mu.Lock()
	o.sampleCPU()
	b := o.encode(true, testErr)
	o.mu.Unlock()
	if _, err := o.stdout.Write(b); err != nil {
		return b, fmt.Errorf("fleetbench: print envelope: %w", err)
	}
	return b, nil
}

// encode renders the envelope; callers hold o.mu.
func (o *Output) encode(final bool, testErr error) []byte {
	e := o.collector.Envelope(o.now())
	e.Runner = o.cfg.Runner
	e.K6Version = k6Version()
	e.Final = final
	e.Thresholds = o.thresholds
	e.AbortOnFail = o.abortOnFail
	for tag := range o.keep {
		e.Tags = append(e.Tags, tag)
	}
	sort.Strings(e.Tags)
	if testErr != nil {
		e.Aborted, e.Error = true, testErr.Error()
	}
	e.CPU.UserSeconds, e.CPU.SystemSeconds, e.CPU.MaxRSSBytes = o.cpu.totals()
	e.CPU.Cores = usableCores()
	var b bytes.Buffer
	if err := measure.Encode(&b, &e); err != nil {
		// Cannot happen for collector output (no NaN/Inf); say so loudly.
		fmt.Fprintf(&b, "fleetbench: cannot encode result envelope: %v\n", err)
	}
	return b.Bytes()
}

func metricType(t metrics.MetricType) measure.MetricType {
	switch t {
	case metrics.Counter:
		return measure.Counter
	case metrics.Gauge:
		return measure.Gauge
	case metrics.Rate:
		return measure.Rate
	default:
		return measure.Trend
	}
}

func contains(v metrics.ValueType) string {
	switch v {
	case metrics.Time:
		return "time"
	case metrics.Data:
		return "data"
	}
	return ""
}

// keptTags reduces k6's tags to those fleetbench splits by. An HTTP status is kept as its class,
// and also as it is when a threshold names status; a gRPC status (a code 0..16, 0 is OK) is
// kept as it is.
func (o *Output) keptTags(metric string, ts *metrics.TagSet) map[string]string {
	out := map[string]string{}
	if ts == nil {
		return out
	}
	for k, v := range ts.Map() {
		if v != "" && o.keep[k] {
			out[k] = v
		}
	}
	if v, ok := ts.Get("status"); ok && v != "" {
		if strings.HasPrefix(metric, "grpc_") {
			out["status"] = v
			// k6 also times its own reflection RPCs (client.connect with reflect), without a
			// method tag and only when they end before their context (a race): the method
			// tells the script's calls from those.
			if m, ok := ts.Get("method"); ok && m != "" {
				out["method"] = m
			}
		} else {
			out["status_class"] = statusClass(v)
		}
	}
	return out
}

func statusClass(status string) string {
	n, err := strconv.Atoi(status)
	switch {
	case err != nil:
		return "other"
	case n == 0:
		return "error" // no response: connection refused, timeout, ...
	case n >= 100 && n < 600:
		return strconv.Itoa(n/100) + "xx"
	}
	return "other"
}

func k6Version() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "go.k6.io/k6/v2" {
				return d.Version
			}
		}
	}
	return ""
}

func writeFileAtomic(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
