package drive

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	"fleetbench.dev/fleetbench/internal/controller/testrun/runenv"
	"fleetbench.dev/fleetbench/pkg/measure"
	"fleetbench.dev/fleetbench/pkg/naming"
	"fleetbench.dev/fleetbench/pkg/runners"
)

// The replacement's ConfigMap is the record of a loss: written before anything else acts on
// it (the lost runner's Job deleted, its kept envelope dropped from memory, the replacement
// created, the gap written to status), it holds the gap as decided and the lost runner's kept
// envelope. A reconcile that retries after any of those steps failed, or a manager restarted
// in between, finds the record and goes on from it instead of deciding again from a memory
// that no longer holds the envelope: the lost runner's results are kept exactly once.

// gapRecordKey holds the gap as decided, JSON; maxGapRecord bounds what is read of it (a gap
// is a few hundred bytes; the ConfigMap is in the tenant's namespace).
const (
	gapRecordKey = "gap"
	maxGapRecord = 4 << 10
)

func encodeGapRecord(g v1alpha1.RunnerGap) string {
	b, _ := json.Marshal(g) // a RunnerGap always encodes
	return string(b)
}

// recordedGap reads the record of runner i's k-th replacement, named name, from the API
// server (the cache holds no ConfigMap data). found is false when there is none; foreign
// when a ConfigMap of that name is not this run's. A record that does not decode, or names
// another runner, is found with what its ConfigMap says of nothing: the decision stands, the
// gap keeps no results.
func (r *Stage) recordedGap(ctx context.Context, run *v1alpha1.TestRun, name string, i, k int) (g v1alpha1.RunnerGap, found, foreign bool, err error) {
	cm := &corev1.ConfigMap{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: name}, cm); err != nil {
		if apierrors.IsNotFound(err) {
			return g, false, false, nil
		}
		return g, false, false, err
	}
	if !decide.ControlledBy(cm, run.UID) {
		return g, false, true, nil
	}
	g = v1alpha1.RunnerGap{Runner: int32(i), Replacement: int32(k), Cause: "Unknown", LostAt: cm.CreationTimestamp}
	if r.Unseal(cm) != nil {
		return g, true, false, nil // what a tenant wrote says nothing: the gap keeps no results
	}
	if _, replaced := cm.Data[runners.ConfigKey]; replaced {
		g.Job = name
	}
	raw := cm.Data[gapRecordKey]
	var rec v1alpha1.RunnerGap
	if len(raw) > maxGapRecord || json.Unmarshal([]byte(raw), &rec) != nil || int(rec.Runner) != i || int(rec.Replacement) != k {
		return g, true, false, nil
	}
	if _, kept := cm.Data[LostEnvelopeKey]; !kept {
		rec.ObservedUntil = nil
	}
	rec.ReplacedAt = nil
	return rec, true, false, nil
}

// recordLoss decides the gap of a lost runner not recorded yet and writes its record, the
// ConfigMap name: the kept results (peeked, not taken: memory drops them only once this
// write succeeded), the gap, and the remaining config when it is replaced. A loss too late to
// replace with nothing kept needs no record: deciding it again decides the same.
func (r *Stage) recordLoss(ctx context.Context, s *decide.Scope, v decide.RunnerView, replaced int, name string) (v1alpha1.RunnerGap, error) {
	run, i := s.Run, v.Index
	if maxR := runners.MaxReplacements(&run.Spec); replaced >= maxR {
		s.Fail(v1alpha1.ReasonRunnerLost, fmt.Sprintf("%s; not replaced: the run replaced %d runners already (spec.runnerLoss.maxReplacements %d); "+
			"find why runners are lost (kubectl get events), or raise maxReplacements", v.Why, replaced, maxR))
		return v1alpha1.RunnerGap{}, nil
	}
	elapsed := expectedResume(v, s.Now).Sub(s.StartTime().Time)
	cfg, remaining, err := runners.RemainingConfig(&run.Spec, run.Name, len(s.Runners), elapsed)
	if err != nil {
		reason := v1alpha1.ReasonRunnerNotReplaceable
		s.Fail(reason, fmt.Sprintf("%s; not replaced: %v; set spec.runnerLoss.policy Fail, or drive the load with spec.load.duration", v.Why, err))
		return v1alpha1.RunnerGap{}, nil
	}
	g := v1alpha1.RunnerGap{Runner: int32(i), Replacement: int32(v.Replacement + 1), Cause: lossCause(v), LostAt: metav1.NewTime(s.Now)}
	if v.Pod != nil {
		g.LostPod = v.Pod.Name
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: run.Namespace,
		Labels: map[string]string{naming.LabelTestRun: run.Name, naming.LabelRole: roleReplacement, naming.LabelRunnerIndex: strconv.Itoa(i)}},
		Data: map[string]string{}}
	// Found by runner index, not pod: a loss seen once the pod is gone still finds its results.
	if kept, at, ok := r.Seen.Peek(run.UID, i, v.Replacement); ok {
		// Its last word: merged as a runner that ended (a checkpoint, not partial results).
		kept.Final = true
		var b bytes.Buffer
		if err := measure.Encode(&b, &kept); err == nil && b.Len() < runenv.MaxResultBytes {
			cm.Data[LostEnvelopeKey] = b.String()
			g.ObservedUntil = &metav1.Time{Time: at}
		}
	}
	from := s.StartTime().Time
	if g.ObservedUntil != nil {
		from = g.ObservedUntil.Time
	}
	rate := runners.SegmentRate(&run.Spec, i, len(s.Runners))
	if remaining < minRemaining {
		g.EstimatedUnobserved = runners.EstimateUnobserved(rate, from, s.StartTime().Add(runners.RunLength(&run.Spec)))
	} else {
		cm.Data[runners.ConfigKey] = string(cfg)
		g.Job, g.Remaining = name, remaining.String()
		g.EstimatedUnobserved = runners.EstimateUnobserved(rate, from, s.Now)
	}
	if g.Job == "" && g.ObservedUntil == nil {
		return g, nil
	}
	cm.Data[gapRecordKey] = encodeGapRecord(g)
	if _, err := r.CreateConfigMap(ctx, run, cm); err != nil {
		return g, err
	}
	if ok, err := r.Controls(ctx, run, cm); err != nil || !ok {
		if err == nil {
			s.Fail(v1alpha1.ReasonRunnerRejected, fmt.Sprintf("a ConfigMap named %s exists in namespace %s that this TestRun does not own; delete it", name, run.Namespace))
		}
		return g, err
	}
	return g, nil
}
