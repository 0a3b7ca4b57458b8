package testrun

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/measure"
)

// abortInterval is how often the runners' merged live data is judged against the script's
// abortOnFail thresholds (k6 judges its own every 2 s).
const abortInterval = 5 * time.Second

// evaluateAbort reads the runners' live results, learns the script's abortOnFail thresholds
// from them once, and judges those on the merged data; it returns why the fleet must stop when
// one failed, and when to judge again.
func (r *Reconciler) evaluateAbort(ctx context.Context, s *scope) (stop string, next time.Duration) {
	run := s.run
	w := s.abortOnFail()
	switch {
	case s.startTime() == nil:
		return "", 0
	case w != nil && w.Aborted != "":
		return abortMessage(w), 0
	case w != nil && len(w.Thresholds) == 0:
		return "", 0 // the script marks none: nothing to watch
	}
	envs, err := r.liveEnvelopes(ctx, s, s.now.Add(-abortInterval))
	if errors.Is(err, errPending) {
		return "", liveLimit // its end wakes the run
	}
	if err != nil {
		logf.FromContext(ctx).Info("reading the runners' live results for abortOnFail failed; trying again", "error", err.Error())
		return "", abortInterval
	}
	watched := abortThresholds(envs)
	if w == nil {
		w = &v1alpha1.AbortWatch{}
		for _, t := range watched {
			w.Thresholds = append(w.Thresholds, t.Metric+" "+t.Expression)
		}
		s.d.abortOnFail = w
		if len(watched) == 0 {
			return "", 0
		}
	}
	summary, err := measure.Merge(envs...)
	if err != nil {
		logf.FromContext(ctx).Info("merging the runners' live results failed", "error", err.Error())
		return "", abortInterval
	}
	// Merge judged every script threshold (abortOnFail ones among them) on the merged data.
	judged := map[string]measure.ThresholdResult{}
	for _, res := range summary.Thresholds {
		judged[res.Metric+" "+res.Expression] = res
	}
	ran := s.now.Sub(s.startTime().Time)
	for _, t := range watched {
		if ran < time.Duration(t.DelayNanos) {
			continue // delayAbortEval
		}
		res, ok := judged[t.Metric+" "+t.Expression]
		if ok && !res.Passed && !res.Skipped {
			at := metav1.NewTime(s.now)
			w = w.DeepCopy() // the loaded status is not written: the abort is decided
			w.Aborted, w.AbortTime = fmt.Sprintf("%s %s (was %g)", t.Metric, t.Expression, res.Value), &at
			s.d.abortOnFail = w
			r.recorder.Eventf(run, nil, corev1.EventTypeWarning, "ThresholdAbort", "Abort", "%s", abortMessage(w))
			return abortMessage(w), 0
		}
	}
	return "", abortInterval
}

func abortMessage(w *v1alpha1.AbortWatch) string {
	return "the abortOnFail threshold " + w.Aborted + " failed on the merged data of all runners; stopping the test"
}

// abortThresholds are the abortOnFail thresholds the runners report, each once.
func abortThresholds(envs []measure.Envelope) []measure.AbortThreshold {
	seen := map[measure.AbortThreshold]bool{}
	var out []measure.AbortThreshold
	for _, e := range envs {
		for _, t := range e.AbortOnFail {
			if !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
		}
	}
	return out
}
