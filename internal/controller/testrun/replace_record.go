package testrun

import (
	"context"
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
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
func (r *Reconciler) recordedGap(ctx context.Context, run *v1alpha1.TestRun, name string, i, k int) (g v1alpha1.RunnerGap, found, foreign bool, err error) {
	cm := &corev1.ConfigMap{}
	if err := r.apiReader.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: name}, cm); err != nil {
		if apierrors.IsNotFound(err) {
			return g, false, false, nil
		}
		return g, false, false, err
	}
	if !controlledBy(cm, run.UID) {
		return g, false, true, nil
	}
	g = v1alpha1.RunnerGap{Runner: int32(i), Replacement: int32(k), Cause: "Unknown", LostAt: cm.CreationTimestamp}
	if _, replaced := cm.Data[runners.ConfigKey]; replaced {
		g.Job = name
	}
	raw := cm.Data[gapRecordKey]
	var rec v1alpha1.RunnerGap
	if len(raw) > maxGapRecord || json.Unmarshal([]byte(raw), &rec) != nil || int(rec.Runner) != i || int(rec.Replacement) != k {
		return g, true, false, nil
	}
	if _, kept := cm.Data[lostEnvelopeKey]; !kept {
		rec.ObservedUntil = nil
	}
	rec.ReplacedAt = nil
	return rec, true, false, nil
}
