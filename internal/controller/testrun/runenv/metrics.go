package runenv

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmanager "sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

var (
	PhaseTransitions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "fleetbench_testrun_phase_transitions_total",
		Help: "TestRuns entering each phase.",
	}, []string{"phase"})
	StartSkew = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "fleetbench_testrun_start_skew_seconds",
		Help:    "Spread between the first and last runner acknowledging the synchronized start.",
		Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14),
	})
	CollectionDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "fleetbench_testrun_collection_seconds",
		Help:    "Time from the last runner ending to merged results in status.",
		Buckets: prometheus.ExponentialBuckets(0.05, 2, 12),
	})
)

// Phases is registered once per process; the latest manager points it at its cache (tests
// restart managers in one process).
var Phases = &phaseCollector{desc: prometheus.NewDesc("fleetbench_testruns", "TestRuns by phase.", []string{"phase"}, nil)}

func init() {
	metrics.Registry.MustRegister(PhaseTransitions, StartSkew, CollectionDuration, Phases)
}

// phaseCollector reports how many TestRuns are in each phase, and each TestRun's results
// (run_metrics.go), read from the informer cache at scrape time: the numbers are the world's,
// not a tally kept across restarts.
type phaseCollector struct {
	mu sync.Mutex
	// readers are the caches of the managers running in this process, the latest last.
	readers []*client.Reader
	desc    *prometheus.Desc
}

// ReadWhileRunning has the collector count from reader while its manager runs.
func (c *phaseCollector) ReadWhileRunning(reader client.Reader) ctrlmanager.Runnable {
	return phaseReader(func(ctx context.Context) error {
		// Compared by address: a client's dynamic type need not be comparable.
		entry := &reader
		c.mu.Lock()
		c.readers = append(c.readers, entry)
		c.mu.Unlock()
		<-ctx.Done()
		c.mu.Lock()
		defer c.mu.Unlock()
		c.readers = slices.DeleteFunc(c.readers, func(r *client.Reader) bool { return r == entry })
		return nil
	})
}

// phaseReader runs on every replica, leader or not: each serves its own /metrics.
type phaseReader func(ctx context.Context) error

func (f phaseReader) Start(ctx context.Context) error { return f(ctx) }
func (phaseReader) NeedLeaderElection() bool          { return false }

func (c *phaseCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.desc
	describeRuns(ch)
}

func (c *phaseCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c.mu.Lock()
	var reader client.Reader
	if len(c.readers) > 0 {
		reader = *c.readers[len(c.readers)-1]
	}
	c.mu.Unlock()
	var list v1alpha1.TestRunList
	if reader == nil || reader.List(ctx, &list) != nil {
		return
	}
	for i := range list.Items {
		collectRun(ch, &list.Items[i])
	}
	counts := map[v1alpha1.TestRunPhase]float64{}
	for _, phase := range []v1alpha1.TestRunPhase{v1alpha1.PhasePending, v1alpha1.PhaseQueued, v1alpha1.PhaseProvisioning, v1alpha1.PhaseStarting,
		v1alpha1.PhaseRunning, v1alpha1.PhaseCollecting, v1alpha1.PhaseSucceeded, v1alpha1.PhaseFailed} {
		counts[phase] = 0
	}
	for i := range list.Items {
		phase := list.Items[i].Status.Phase
		if phase == "" {
			phase = v1alpha1.PhasePending
		}
		counts[phase]++
	}
	for phase, n := range counts {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, n, string(phase))
	}
}
