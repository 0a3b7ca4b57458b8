package drive

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
)

// TestExpectedResume: a replacement's remaining load starts where it will resume. Its lost pod
// on a lost node is held until its deletion grace (30 s here) plus lostPodGrace, so the
// replacement made now resumes 35 s later (the chaos row "runner's node lost" ran 35 s past the
// fleet's end before this); any other lost pod ends within moments.
func TestExpectedResume(t *testing.T) {
	now := time.Date(2026, 11, 26, 10, 24, 1, 0, time.UTC)
	deleting := func(reason string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &metav1.Time{Time: now.Add(30 * time.Second)}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
				{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: reason}}},
		}
	}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want time.Duration
	}{
		{"node lost: after the deletion grace", deleting("DeletionByTaintManager"), 30*time.Second + lostPodGrace},
		{"evicted by a drain: at once", deleting("EvictionByEvictionAPI"), 0},
		{"deleted: at once", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &metav1.Time{Time: now.Add(30 * time.Second)}}}, 0},
		{"gone: at once", nil, 0},
	} {
		v := decide.RunnerView{RunnerState: decide.RunnerState{Pod: tc.pod}}
		if got := expectedResume(v, now).Sub(now); got != tc.want {
			t.Errorf("%s: resumes after %s, want %s", tc.name, got, tc.want)
		}
	}
}
