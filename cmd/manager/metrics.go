package main

import (
	metricsfilters "sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// metricsOptions serves /metrics over HTTPS to whoever the API server says may get it: a
// bearer token checked with a TokenReview, then a SubjectAccessReview of `get` on the
// non-resource URL /metrics (the chart's <release>-metrics-reader ClusterRole grants it). The
// metrics name every tenant's TestRuns. The certificate is certDir's tls.crt and tls.key, or
// self-signed in memory when there are none. secure=false serves plain HTTP to anyone, for a
// manager on a developer's machine bound to the loopback address (make run, hack/scale).
func metricsOptions(addr string, secure bool, certDir string) metricsserver.Options {
	if !secure {
		return metricsserver.Options{BindAddress: addr}
	}
	return metricsserver.Options{
		BindAddress:    addr,
		SecureServing:  true,
		FilterProvider: metricsfilters.WithAuthenticationAndAuthorization,
		CertDir:        certDir,
	}
}
