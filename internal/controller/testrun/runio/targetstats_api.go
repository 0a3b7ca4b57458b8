package runio

import (
	"context"
	"crypto/x509"
	"errors"
	"io"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"fleetbench.dev/fleetbench/internal/kubelet"
)

// TargetStats fetches what the target's containers use: one node's kubelet summary
// (/stats/summary), or a namespace's pod metrics from metrics.k8s.io.
type TargetStats interface {
	NodeSummary(ctx context.Context, node string) ([]byte, error)
	PodMetrics(ctx context.Context, namespace string) ([]byte, error)
}

// APITargetStats reads pod metrics from the API server's aggregated API and node summaries
// from the kubelets themselves (Kubelet: nodes/stats, not the API server's nodes/proxy, which
// also opens exec); with Kubelet nil (--target-metrics=metrics-api) there are no summaries.
type APITargetStats struct {
	Clientset kubernetes.Interface
	Kubelet   KubeletSummaries
}

// KubeletSummaries reads a node's /stats/summary (kubelet.Summaries).
type KubeletSummaries interface {
	Summary(ctx context.Context, node string) ([]byte, error)
}

// NewKubeletSummaries reads summaries as the ServiceAccount identity, from kubelets whose
// serving certificates chain to roots, bounded as every stats answer.
func NewKubeletSummaries(cs kubernetes.Interface, identity types.NamespacedName, roots *x509.CertPool) *kubelet.Summaries {
	return kubelet.New(cs, identity, roots, maxStatsAnswer)
}

var errNoKubelet = errors.New("this manager reads no kubelet summaries (--target-metrics=metrics-api)")

func (a *APITargetStats) NodeSummary(ctx context.Context, node string) ([]byte, error) {
	if a.Kubelet == nil {
		return nil, errNoKubelet
	}
	return a.Kubelet.Summary(ctx, node)
}

// readStream reads an answer of at most maxStatsAnswer bytes.
func readStream(stream io.ReadCloser, err error) ([]byte, error) {
	if err != nil {
		return nil, err
	}
	defer func() { _ = stream.Close() }()
	return readAtMost(stream, maxStatsAnswer)
}

func (a *APITargetStats) PodMetrics(ctx context.Context, namespace string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return readStream(a.Clientset.CoreV1().RESTClient().Get().AbsPath("/apis/metrics.k8s.io/v1beta1/namespaces", namespace, "pods").Stream(ctx))
}

var ErrKubeletNoContainers = errors.New("the kubelet reports no target container yet")

// Target metrics sources a manager may be told to use (--target-metrics).
const (
	// TargetMetricsAuto prefers the kubelet summary (RSS, exact cumulative CPU) and falls back
	// to metrics.k8s.io when the summary cannot be read, e.g. the kubelet's port is not
	// reachable or its serving certificate cannot be verified.
	TargetMetricsAuto       = "auto"
	TargetMetricsKubelet    = "kubelet"
	TargetMetricsMetricsAPI = "metrics-api"
)
