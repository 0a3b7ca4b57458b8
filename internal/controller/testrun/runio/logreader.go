package runio

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"fleetbench.dev/fleetbench/pkg/measure"
)

// LogReader reads the end of a container's log: a runner's, where k6 printed the result
// envelope, or a target's, for log findings. previous reads the instance before the last
// restart, where a crashed container left its last words.
type LogReader interface {
	Tail(ctx context.Context, pod *corev1.Pod, container string, lines int64, previous bool) ([]byte, error)
}

// APILogReader reads logs through the API server, so no network path to pods is needed.
type APILogReader struct {
	Clientset kubernetes.Interface
}

func (a *APILogReader) Tail(ctx context.Context, pod *corev1.Pod, container string, lines int64, previous bool) ([]byte, error) {
	// The pod writes its log: the kubelet stops at LimitBytes, and so does the read.
	stream, err := a.Clientset.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{
		Container:  container,
		TailLines:  ptr.To(lines),
		Previous:   previous,
		LimitBytes: ptr.To(LogLimit(lines)),
	}).Stream(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the log of %s: %w", pod.Name, err)
	}
	defer func() { _ = stream.Close() }()
	b, err := readAtMost(stream, LogLimit(lines))
	if err != nil {
		return nil, fmt.Errorf("reading the log of %s: %w", pod.Name, err)
	}
	return b, nil
}

// maxLogBytes bounds one log read: the largest envelope the operator accepts, and as much
// again of other lines around it.
const maxLogBytes = 2 * measure.MaxWireBytes

// LogLimit is what a read of a log's last lines may take: 512 bytes a line, at most maxLogBytes
// (a tail cut short misses the envelope at its end; the longer read that follows finds it).
func LogLimit(lines int64) int64 { return min(maxLogBytes, max(lines*512, maxSmallAnswer)) }
