package runio

import (
	"context"
	"errors"
	"io"
	"time"

	"k8s.io/client-go/kubernetes"
)

// TargetStats fetches what the target's containers use: one node's kubelet summary
// (/stats/summary), or a namespace's pod metrics from metrics.k8s.io.
type TargetStats interface {
	NodeSummary(ctx context.Context, node string) ([]byte, error)
	PodMetrics(ctx context.Context, namespace string) ([]byte, error)
}

// APITargetStats reads both through the API server, so it works wherever the manager runs:
// the summary through the node proxy (nodes/proxy), pod metrics from the aggregated API.
type APITargetStats struct {
	Clientset kubernetes.Interface
}

func (a *APITargetStats) NodeSummary(ctx context.Context, node string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return readStream(a.Clientset.CoreV1().RESTClient().Get().Resource("nodes").Name(node).
		SubResource("proxy").Suffix("stats/summary").Stream(ctx))
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
	// to metrics.k8s.io when the summary cannot be read, e.g. nodes/proxy is not allowed.
	TargetMetricsAuto       = "auto"
	TargetMetricsKubelet    = "kubelet"
	TargetMetricsMetricsAPI = "metrics-api"
)
