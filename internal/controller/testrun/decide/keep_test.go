package decide

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
)

// TestKeptTargetIsBounded: an ended run keeps its target for spec.cleanup.keepFor, never more
// than the operator's maximum (cut, and TargetKept says so), the maximum when unset; once the
// time has passed TargetKept is False KeepExpired and the policy releases the target.
func TestKeptTargetIsBounded(t *testing.T) {
	end := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	const maxKept = 24 * time.Hour
	ended := func(keepFor v1alpha1.Duration, mutate ...func(*v1alpha1.TestRun)) *v1alpha1.TestRun {
		run := tw.MakeTestRun("kept", "team").Cleanup(v1alpha1.TargetKeepUntilDeleted).Obj()
		run.Spec.Cleanup.KeepFor = keepFor
		run.Status.Phase, run.Status.TargetNamespace = v1alpha1.PhaseSucceeded, "fb-team-kept"
		run.Status.StartTime, run.Status.CompletionTime = &metav1.Time{Time: end.Add(-time.Minute)}, &metav1.Time{Time: end}
		for _, m := range mutate {
			m(run)
		}
		return run
	}
	for _, tc := range []struct {
		name    string
		run     *v1alpha1.TestRun
		now     time.Time
		keeps   bool
		until   time.Time
		status  metav1.ConditionStatus
		reason  string
		message []string
	}{
		{name: "unset keeps the maximum", run: ended(""), now: end.Add(time.Hour), keeps: true, until: end.Add(maxKept),
			status: metav1.ConditionTrue, reason: v1alpha1.ReasonKept,
			message: []string{"kept until 2025-03-02T12:00:00Z", "--max-kept-target", "spec.cleanup.keepFor is unset", "delete the TestRun"}},
		{name: "less is kept as asked", run: ended("2h"), now: end.Add(time.Hour), keeps: true, until: end.Add(2 * time.Hour),
			status: metav1.ConditionTrue, reason: v1alpha1.ReasonKept, message: []string{"kept until 2025-03-01T14:00:00Z", "2h0m0s after the run ended: spec.cleanup.keepFor"}},
		{name: "more is cut to the maximum", run: ended("48h"), now: end.Add(time.Hour), keeps: true, until: end.Add(maxKept),
			status: metav1.ConditionTrue, reason: v1alpha1.ReasonKept, message: []string{"keepFor asked 48h0m0s, cut to the most", "--max-kept-target"}},
		{name: "released when the time has come", run: ended("2h"), now: end.Add(2 * time.Hour), keeps: true, until: end.Add(2 * time.Hour),
			status: metav1.ConditionFalse, reason: v1alpha1.ReasonKeepExpired, message: []string{"was kept until 2025-03-01T14:00:00Z", "released"}},
		{name: "a cut keep is released at the maximum", run: ended("48h"), now: end.Add(maxKept + time.Second), keeps: true, until: end.Add(maxKept),
			status: metav1.ConditionFalse, reason: v1alpha1.ReasonKeepExpired, message: []string{"asked 48h0m0s, cut"}},
		{name: "released already", run: ended("2h", func(r *v1alpha1.TestRun) {
			meta.SetStatusCondition(&r.Status.Conditions, metav1.Condition{Type: v1alpha1.ConditionTargetKept, Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonKeepExpired})
		}), now: end.Add(3 * time.Hour)},
		{name: "deleted after the run", run: ended("", func(r *v1alpha1.TestRun) { r.Spec.Cleanup.Target = v1alpha1.TargetDeleteAfterRun }), now: end},
		{name: "not ended", run: ended("", func(r *v1alpha1.TestRun) { r.Status.Phase = v1alpha1.PhaseRunning }), now: end},
		{name: "no target was made", run: ended("", func(r *v1alpha1.TestRun) { r.Status.TargetNamespace = "" }), now: end},
		{name: "an external target", run: ended("", func(r *v1alpha1.TestRun) {
			r.Spec.Target = v1alpha1.TargetSpec{External: &v1alpha1.ExternalTarget{URL: "http://sut"}}
		}), now: end},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, keeps := KeepOf(tc.run, maxKept, tc.now)
			if keeps != tc.keeps {
				t.Fatalf("keeps = %v, want %v", keeps, tc.keeps)
			}
			if !keeps {
				return
			}
			if !k.Until.Equal(tc.until) {
				t.Errorf("until %s, want %s", k.Until, tc.until)
			}
			st := ComposeFinished(tc.run, &k)
			c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionTargetKept)
			if c == nil || c.Status != tc.status || c.Reason != tc.reason {
				t.Fatalf("TargetKept = %+v, want %s %s", c, tc.status, tc.reason)
			}
			for _, want := range tc.message {
				if !strings.Contains(c.Message, want) {
					t.Errorf("message %q, want it to say %q", c.Message, want)
				}
			}
			// Once recorded released, the target goes as under DeleteAfterRun, and nothing is kept.
			tc.run.Status = st
			if k.Expired != (TargetPolicy(tc.run) == v1alpha1.TargetDeleteAfterRun) {
				t.Errorf("policy %s after TargetKept %s", TargetPolicy(tc.run), c.Status)
			}
			if _, still := KeepOf(tc.run, maxKept, tc.now); still == k.Expired {
				t.Errorf("still kept after recording %s: %v", c.Reason, still)
			}
		})
	}
}
