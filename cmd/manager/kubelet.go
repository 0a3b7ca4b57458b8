package main

import (
	"crypto/x509"
	"fmt"
	"os"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"fleetbench.dev/fleetbench/internal/controller/testrun/runio"
	"fleetbench.dev/fleetbench/internal/kubelet"
)

// kubeletSummaries reads node summaries for --target-metrics auto and kubelet, as the
// ServiceAccount identity ("namespace/name"), verifying kubelets' serving certificates with the
// PEM bundle caFile, or, without one, the CA the manager trusts for the API server (a cluster
// whose CA signs kubelet serving certificates, e.g. kubelets with serverTLSBootstrap). With
// metrics-api it is nil: no summary is read. There is no way to skip the verification: the
// request carries a token.
func kubeletSummaries(targetMetrics, identity, caFile string, cfg *rest.Config, cs kubernetes.Interface) (runio.KubeletSummaries, error) {
	if targetMetrics == runio.TargetMetricsMetricsAPI {
		return nil, nil
	}
	id, err := kubelet.ParseIdentity(identity)
	if err != nil {
		return nil, fmt.Errorf("--kubelet-stats-identity: %w", err)
	}
	pem, from := cfg.CAData, "the API server's CA"
	switch {
	case caFile != "":
		from = "--kubelet-ca-file " + caFile
		if pem, err = os.ReadFile(caFile); err != nil {
			return nil, fmt.Errorf("--kubelet-ca-file: %w", err)
		}
	case len(pem) == 0 && cfg.CAFile != "":
		if pem, err = os.ReadFile(cfg.CAFile); err != nil {
			return nil, fmt.Errorf("the API server's CA: %w", err)
		}
	}
	var roots *x509.CertPool // nil: the system's roots, where the API server's CA is
	if len(pem) > 0 {
		roots = x509.NewCertPool()
		if !roots.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s holds no PEM certificate", from)
		}
	}
	return runio.NewKubeletSummaries(cs, id, roots), nil
}
