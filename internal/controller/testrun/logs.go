package testrun

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"fleetbench.dev/fleetbench/pkg/measure"
	"fleetbench.dev/fleetbench/pkg/runners"
)

// LogReader reads the end of a container's log: a runner's, where k6 printed the result
// envelope, or a target's, for log findings. previous reads the instance before the last
// restart, where a crashed container left its last words.
type LogReader interface {
	Tail(ctx context.Context, pod *corev1.Pod, container string, lines int64, previous bool) ([]byte, error)
}

// runnerLogLines is generous: the envelope is one compressed block behind a marker line, and
// k6 may log after it (a slow teardown, warnings).
const runnerLogLines = 2000

// runnerLogLinesAll is the second read when the envelope is not in the tail (a long checkpoint
// history, k6 warnings after it): enough for any envelope a ConfigMap could hold.
const runnerLogLinesAll = 100000

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
		LimitBytes: ptr.To(logLimit(lines)),
	}).Stream(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the log of %s: %w", pod.Name, err)
	}
	defer func() { _ = stream.Close() }()
	b, err := readAtMost(stream, logLimit(lines))
	if err != nil {
		return nil, fmt.Errorf("reading the log of %s: %w", pod.Name, err)
	}
	return b, nil
}

// maxLogBytes bounds one log read: the largest envelope the operator accepts, and as much
// again of other lines around it.
const maxLogBytes = 2 * measure.MaxWireBytes

// logLimit is what a read of a log's last lines may take: 512 bytes a line, at most maxLogBytes
// (a tail cut short misses the envelope at its end; the longer read that follows finds it).
func logLimit(lines int64) int64 { return min(maxLogBytes, max(lines*512, maxSmallAnswer)) }

// logRead is one runner's result envelope as read from its log, or why it could not be.
type logRead struct {
	env *measure.Envelope
	err error
}

// readEnvelopes reads each runner's result envelope from the end of its log, all at once, off
// the worker (callLogs; errPending while in flight, its end waking the run). A read that found
// every envelope is kept until the run ends, so collection's other waits do not read the logs
// again; one with problems is dropped, so the next look reads again (logs can lag the exit).
func (r *Reconciler) readEnvelopes(ctx context.Context, s *scope) ([]measure.Envelope, []string, error) {
	res, ok := r.calls.peek(s.run.UID, callLogs)
	if !ok {
		r.startLogs(s)
		r.startAfter(s) // the target's after-sample comes back with the logs
		return nil, nil, errPending
	}
	read, _ := res.val.(map[types.UID]logRead)
	var out []measure.Envelope
	var problems []string
	for _, rs := range s.runners {
		got, ok := logRead{}, false
		if rs.pod != nil {
			got, ok = read[rs.pod.UID]
		}
		switch {
		case rs.pod == nil:
			problems = append(problems, fmt.Sprintf("runner %d has no pod to read", rs.index))
		case rs.final != nil:
			out = append(out, *rs.final) // handed over already: no log to read
		case !ok:
			problems = append(problems, fmt.Sprintf("runner %s: its log is not read yet", rs.pod.Name))
		case got.env != nil:
			out = append(out, *got.env)
		case errors.Is(got.err, measure.ErrRejected):
			s.rejectResult(rs.pod, got.err)
			problems = append(problems, fmt.Sprintf("runner %s: its result envelope was refused", rs.pod.Name))
		default:
			problems = append(problems, fmt.Sprintf("runner %s: %v", rs.pod.Name, got.err))
		}
	}
	if len(problems) > 0 {
		r.calls.discard(s.run.UID, callLogs)
	}
	// The lost runners' results until their last live read, kept when they were replaced.
	kept, keptProblems := r.keptEnvelopes(ctx, s)
	return append(out, kept...), append(problems, keptProblems...), nil
}

// startLogs reads the logs of the runners that handed over no final envelope, off the worker.
func (r *Reconciler) startLogs(s *scope) {
	var pods []*corev1.Pod
	for _, rs := range s.runners {
		if rs.pod != nil && rs.final == nil {
			pods = append(pods, rs.pod.DeepCopy()) // the cache's pods must not be read after this reconcile
		}
	}
	limits := envelopeLimits(len(s.runners))
	r.calls.start(s.run, callLogs, logsLimit, false, func(ctx context.Context) (any, error) {
		reads := make([]logRead, len(pods))
		onRunners(pods, func(i int, pod *corev1.Pod) { reads[i] = r.readEnvelope(ctx, pod, limits) })
		out := make(map[types.UID]logRead, len(pods))
		for i, pod := range pods {
			out[pod.UID] = reads[i]
		}
		return out, nil
	})
}

// readEnvelope reads one runner's envelope from the end of its log: it ends the log, unless k6
// logged much after it, and then much more is read.
func (r *Reconciler) readEnvelope(ctx context.Context, pod *corev1.Pod, limits measure.Limits) logRead {
	var err error
	for _, lines := range []int64{runnerLogLines, runnerLogLinesAll} {
		// The log and the envelope decoded from it are held within wireMemory: a fleet of
		// runners with long logs is read a few at a time, not all at once.
		waitCtx, cancel := context.WithTimeout(ctx, callTimeout)
		release, aerr := wireMemory.Acquire(waitCtx, logLimit(lines))
		cancel()
		if aerr != nil {
			return logRead{err: fmt.Errorf("no memory free to read its log yet: %w", aerr)}
		}
		var tail []byte
		tail, err = r.Logs.Tail(ctx, pod, runners.ContainerName, lines, false)
		if err == nil {
			var env measure.Envelope
			if env, err = measure.ExtractEnvelopeWithin(tail, limits); err == nil {
				release()
				return logRead{env: &env}
			}
		}
		release()
		if errors.Is(err, measure.ErrRejected) {
			return logRead{err: err}
		}
	}
	return logRead{err: err}
}
