package drive

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	"fleetbench.dev/fleetbench/internal/controller/testrun/runio"
	"fleetbench.dev/fleetbench/pkg/measure"
	"fleetbench.dev/fleetbench/pkg/runners"
)

// runnerLogLines is generous: the envelope is one compressed block behind a marker line, and
// k6 may log after it (a slow teardown, warnings).
const runnerLogLines = 2000

// runnerLogLinesAll is the second read when the envelope is not in the tail (a long checkpoint
// history, k6 warnings after it): enough for any envelope a ConfigMap could hold.
const runnerLogLinesAll = 100000

// logRead is one runner's result envelope as read from its log, or why it could not be.
type logRead struct {
	env *measure.Envelope
	err error
	// release gives back what env holds of runio.HeldEnvelopes.
	release func()
}

// logReads are a collection's reads by pod; they hold their envelopes' part of
// runio.HeldEnvelopes until the call is forgotten (runio.Holding).
type logReads map[types.UID]logRead

func (l logReads) Release() {
	for _, r := range l {
		if r.release != nil {
			r.release()
		}
	}
}

// ReadEnvelopes reads each runner's result envelope from the end of its log, all at once, off
// the worker (callLogs; errPending while in flight, its end waking the run). A read that found
// every envelope is kept until the run ends, so collection's other waits do not read the logs
// again; one with problems is dropped, so the next look reads again (logs can lag the exit).
func (r *Stage) ReadEnvelopes(ctx context.Context, s *decide.Scope) ([]measure.Envelope, []string, error) {
	res, ok := r.Calls.Peek(s.Run.UID, runio.CallLogs)
	if !ok {
		r.startLogs(s)
		r.startAfter(s) // the target's after-sample comes back with the logs
		return nil, nil, runio.ErrPending
	}
	read, _ := res.Val.(logReads)
	for _, rs := range s.Runners {
		if _, ok := read[podUID(rs.Pod)]; rs.Pod != nil && rs.Final == nil && !ok {
			// Its final envelope was handed over when the logs were read, and dropped since (its
			// hold ends at the run's deadline plus the collection timeout, which a zoned run's
			// wait for its zones can reach): its log is read now.
			r.Calls.Discard(s.Run.UID, runio.CallLogs)
			r.startLogs(s)
			return nil, nil, runio.ErrPending
		}
	}
	var out []measure.Envelope
	var problems []string
	for _, rs := range s.Runners {
		var got logRead
		if rs.Pod != nil {
			got = read[rs.Pod.UID]
		}
		switch {
		case rs.Pod == nil:
			problems = append(problems, fmt.Sprintf("runner %d has no pod to read", rs.Index))
		case rs.Final != nil:
			out = append(out, *rs.Final) // handed over already: no log to read
		case got.env != nil:
			out = append(out, *got.env)
		case errors.Is(got.err, measure.ErrRejected):
			s.RejectResult(rs.Pod, got.err)
			problems = append(problems, fmt.Sprintf("runner %s: its result envelope was refused", rs.Pod.Name))
		default:
			problems = append(problems, fmt.Sprintf("runner %s: %v", rs.Pod.Name, got.err))
		}
	}
	if len(problems) > 0 {
		r.Calls.Discard(s.Run.UID, runio.CallLogs)
	}
	// The lost runners' results until their last live read, kept when they were replaced.
	kept, keptProblems := r.keptEnvelopes(ctx, s)
	return append(out, kept...), append(problems, keptProblems...), nil
}

// startLogs reads the logs of the runners that handed over no final envelope, off the worker.
func (r *Stage) startLogs(s *decide.Scope) {
	var pods []*corev1.Pod
	for _, rs := range s.Runners {
		if rs.Pod != nil && rs.Final == nil {
			pods = append(pods, rs.Pod.DeepCopy()) // the cache's pods must not be read after this reconcile
		}
	}
	limits := runio.EnvelopeLimits(len(s.Runners), s.Run.Namespace)
	r.Calls.Begin(s.Run, runio.CallLogs, runio.LogsLimit, false, func(ctx context.Context) (any, error) {
		reads := make([]logRead, len(pods))
		runio.OnRunners(pods, func(i int, pod *corev1.Pod) { reads[i] = r.readEnvelope(ctx, pod, limits) })
		out := make(logReads, len(pods))
		for i, pod := range pods {
			out[pod.UID] = reads[i]
		}
		return out, nil
	})
}

// readEnvelope reads one runner's envelope from the end of its log: it ends the log, unless k6
// logged much after it, and then much more is read.
func (r *Stage) readEnvelope(ctx context.Context, pod *corev1.Pod, limits measure.Limits) logRead {
	var err error
	for _, lines := range []int64{runnerLogLines, runnerLogLinesAll} {
		// The log and the envelope decoded from it are held within wireMemory: a fleet of
		// runners with long logs is read a few at a time, not all at once.
		waitCtx, cancel := context.WithTimeout(ctx, runio.CallTimeout)
		release, aerr := runio.WireMemory.Acquire(waitCtx, runio.LogLimit(lines))
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
				return holdEnvelope(ctx, env)
			}
		}
		release()
		if errors.Is(err, measure.ErrRejected) {
			return logRead{err: err}
		}
	}
	return logRead{err: err}
}

// holdEnvelope keeps a decoded envelope for collection within its namespace's share of
// runio.HeldEnvelopes, waiting for it at most callTimeout.
func holdEnvelope(ctx context.Context, env measure.Envelope) logRead {
	waitCtx, cancel := context.WithTimeout(ctx, runio.CallTimeout)
	defer cancel()
	release, err := runio.HeldEnvelopes.Acquire(waitCtx, measure.SizeOf(&env))
	if err != nil {
		return logRead{err: fmt.Errorf("no memory free to hold its envelope until collection yet (other runs of this namespace hold its share): %w", err)}
	}
	return logRead{env: &env, release: release}
}

func podUID(pod *corev1.Pod) types.UID {
	if pod == nil {
		return ""
	}
	return pod.UID
}
