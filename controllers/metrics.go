package controllers

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
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
