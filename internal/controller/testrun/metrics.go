package testrun

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

var (
	phaseTransitions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "fleetbench_testrun_phase_transitions_total",
		Help: "TestRuns entering each phase.",
	}, []string{"phase"})
	startSkew = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "fleetbench_testrun_start_skew_seconds",
		Help:    "Spread between the first and last runner acknowledging the synchronized start.",
		Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14),
	})
	collectionDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "fleetbench_testrun_collection_seconds",
		Help:    "Time from the last runner ending to merged results in status.",
		Buckets: prometheus.ExponentialBuckets(0.05, 2, 12),
	})
)

func init() {
	metrics.Registry.MustRegister(phaseTransitions, startSkew, collectionDuration)
}

// phaseCollector reports how many TestRuns are in each phase, counted from the informer cache
// at scrape time: the numbers are the world's, not a tally kept across restarts.
type phaseCollector struct {
	reader client.Reader
	desc   *prometheus.Desc
}

func newPhaseCollector(reader client.Reader) *phaseCollector {
	return &phaseCollector{reader: reader, desc: prometheus.NewDesc("fleetbench_testruns",
		"TestRuns by phase.", []string{"phase"}, nil)}
}

func (c *phaseCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *phaseCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var list v1alpha1.TestRunList
	if err := c.reader.List(ctx, &list); err != nil {
		return
	}
	counts := map[v1alpha1.TestRunPhase]float64{}
	for _, phase := range []v1alpha1.TestRunPhase{v1alpha1.PhasePending, v1alpha1.PhaseProvisioning, v1alpha1.PhaseStarting,
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
