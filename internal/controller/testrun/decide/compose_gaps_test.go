package decide

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/statusbound"
)

func composedGap(runner int32, at time.Time) v1alpha1.RunnerGap {
	lost, seen, replaced := metav1.NewTime(at), metav1.NewTime(at.Add(-10*time.Second)), metav1.NewTime(at.Add(15*time.Second))
	return v1alpha1.RunnerGap{Runner: runner, Replacement: 1, LostPod: fmt.Sprintf("r-runner-%d-abcde", runner), Cause: "Deleted",
		LostAt: lost, ObservedUntil: &seen, ReplacedAt: &replaced, Job: fmt.Sprintf("r-runner-%d-r1", runner), Remaining: "1h0m0s",
		EstimatedUnobserved: 250}
}

// TestComposeGapsAndGapless: status.gaps and the Gapless condition are composed from the
// decision alone (the loaded status is not written, and the decision's list is not shared),
// kept as they are by a later reconcile that decides nothing of them (Gapless keeps its
// transition time, and the same gaps record no new condition), and bounded: the list is cut to
// the CRD's 20 when written, saying so, and the condition names at most maxNamedRunners gaps.
func TestComposeGapsAndGapless(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	run := tw.MakeTestRun("r", "ns").Generation(2).Obj()
	run.Status = v1alpha1.TestRunStatus{Phase: v1alpha1.PhaseRunning, Reason: v1alpha1.ReasonRunning, TestID: "r-1"}
	loaded := *run.Status.DeepCopy()

	// The first reconcile of a Replace run: no runner lost yet.
	s := &Scope{Run: run, Now: now}
	s.RecordGapless(nil)
	st := ComposeStatus(s)
	if c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionGapless); c == nil || c.Status != metav1.ConditionTrue || c.Reason != v1alpha1.ReasonNoGaps {
		t.Fatalf("Gapless before any loss: %+v", c)
	}
	if st.Gaps != nil {
		t.Errorf("gaps %+v before any loss", st.Gaps)
	}
	if diff := cmp.Diff(loaded, run.Status); diff != "" {
		t.Errorf("composing wrote the loaded status (-loaded +now):\n%s", diff)
	}

	// Runner 1 is lost and replaced.
	run.Status = st
	loaded = *run.Status.DeepCopy()
	gaps := []v1alpha1.RunnerGap{composedGap(1, now)}
	s = &Scope{Run: run, Now: now}
	s.Decided.Gaps = &gaps
	s.RecordGapless(gaps)
	st = ComposeStatus(s)
	if diff := cmp.Diff(gaps, st.Gaps); diff != "" {
		t.Errorf("status.gaps (-decided +composed):\n%s", diff)
	}
	c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionGapless)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != v1alpha1.ReasonRunnerReplaced || c.Message != GapsSummary(gaps) ||
		!strings.Contains(c.Message, "about 250 requests not made or not observed: runner 1 (Deleted)") {
		t.Fatalf("Gapless after a replacement: %+v", c)
	}
	if diff := cmp.Diff(loaded, run.Status); diff != "" {
		t.Errorf("composing wrote the loaded status (-loaded +now):\n%s", diff)
	}
	gaps[0].Cause = "changed after compose"
	if st.Gaps[0].Cause != "Deleted" {
		t.Errorf("the composed status shares the decision's list: cause %q", st.Gaps[0].Cause)
	}
	transition := c.LastTransitionTime

	// Later reconciles decide nothing new: gaps and Gapless stay as they were.
	run.Status = st
	gaps = st.Gaps
	for i := range 3 {
		s = &Scope{Run: run, Now: now.Add(time.Duration(i+1) * time.Minute)}
		s.RecordGapless(gaps)
		if len(s.Decided.conditions) != 0 {
			t.Errorf("reconcile %d recorded %+v for the same gaps", i, s.Decided.conditions)
		}
		next := ComposeStatus(s)
		if diff := cmp.Diff(st.Gaps, next.Gaps); diff != "" {
			t.Errorf("reconcile %d: status.gaps (-before +after):\n%s", i, diff)
		}
		if c := meta.FindStatusCondition(next.Conditions, v1alpha1.ConditionGapless); c == nil || c.Status != metav1.ConditionFalse ||
			c.Message != GapsSummary(gaps) || !c.LastTransitionTime.Equal(&transition) {
			t.Errorf("reconcile %d: Gapless %+v, want kept (transition %v)", i, c, transition)
		}
		run.Status = next
	}

	// A second loss: the condition stays False (transition time kept) and says both.
	gaps = append(gaps[:len(gaps):len(gaps)], composedGap(0, now.Add(time.Hour)))
	s = &Scope{Run: run, Now: now.Add(time.Hour)}
	s.Decided.Gaps = &gaps
	s.RecordGapless(gaps)
	st = ComposeStatus(s)
	if c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionGapless); len(st.Gaps) != 2 || c == nil ||
		!strings.Contains(c.Message, "2 gaps, about 500 requests") || !c.LastTransitionTime.Equal(&transition) {
		t.Errorf("after a second loss: %d gaps, Gapless %+v", len(st.Gaps), c)
	}

	// Bounded: more gaps than the CRD holds (a controller bug, or a status edited by hand).
	gaps = nil
	for i := range 3 * v1alpha1.MaxReplacementsLimit {
		gaps = append(gaps, composedGap(int32(i), now))
	}
	s = &Scope{Run: run, Now: now}
	s.Decided.Gaps = &gaps
	s.RecordGapless(gaps)
	st = ComposeStatus(s)
	notes := statusbound.TestRun(&st) // as writeStatus does before every write
	if len(st.Gaps) != v1alpha1.MaxReplacementsLimit || !strings.Contains(strings.Join(notes, "; "), "40 of 60 gaps not listed") {
		t.Errorf("%d gaps written, notes %v; want %d and a note", len(st.Gaps), notes, v1alpha1.MaxReplacementsLimit)
	}
	if c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionGapless); c == nil || strings.Count(c.Message, "unobserved from") != maxNamedRunners ||
		!strings.Contains(c.Message, "60 gaps, about 15000 requests") {
		t.Errorf("Gapless with 60 gaps names %d of them: %+v", strings.Count(c.Message, "unobserved from"), c)
	}
}
