package testrun

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	rc "fleetbench.dev/fleetbench/internal/controller/reconcile"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
)

// composed is what a test reads of a composed status: the standing and the summary
// conditions as "Status/Reason".
type composed struct {
	Phase           v1alpha1.TestRunPhase
	Reason, Message string
	Verdict         v1alpha1.Verdict
	Completed       bool
	Partial         bool
	Conditions      map[string]string
}

func composedOf(st v1alpha1.TestRunStatus) composed {
	c := composed{Phase: st.Phase, Reason: st.Reason, Message: st.Message, Verdict: st.Verdict,
		Completed: st.CompletionTime != nil, Partial: st.Results != nil && st.Results.Partial, Conditions: map[string]string{}}
	for _, cond := range st.Conditions {
		c.Conditions[cond.Type] = string(cond.Status) + "/" + cond.Reason
	}
	return c
}

func inProgress(reason string) map[string]string {
	return map[string]string{
		v1alpha1.ConditionReady: "False/" + v1alpha1.ReasonInProgress, v1alpha1.ConditionReconciling: "True/" + reason,
		v1alpha1.ConditionStalled: "False/" + v1alpha1.ReasonInProgress, v1alpha1.ConditionComplete: "False/" + v1alpha1.ReasonInProgress,
	}
}

// TestComposeStatusInEveryPhase: one row per phase a run goes through, and per way it ends:
// the phase, reason and message the decision recorded, the verdict and completion of an
// ending, and the summary conditions GitOps reads, all composed from the scope alone.
func TestComposeStatusInEveryPhase(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ended := func(verdict v1alpha1.Verdict, ready, stalled string) map[string]string {
		return map[string]string{
			v1alpha1.ConditionReady: ready, v1alpha1.ConditionReconciling: "False/" + v1alpha1.ReasonCompleted,
			v1alpha1.ConditionStalled: stalled, v1alpha1.ConditionComplete: "True/" + v1alpha1.ReasonCompleted,
		}
	}
	rows := []struct {
		name string
		d    decision
		want composed
	}{
		{"new", decision{}, composed{Phase: v1alpha1.PhasePending, Reason: v1alpha1.ReasonAccepted, Message: v1alpha1.MessageAccepted,
			Conditions: inProgress(v1alpha1.ReasonAccepted)}},
	}
	for _, p := range []struct {
		phase  v1alpha1.TestRunPhase
		reason string
	}{
		{v1alpha1.PhasePending, v1alpha1.ReasonProfileNotFound},
		{v1alpha1.PhaseProvisioning, v1alpha1.ReasonWaitingForTarget},
		{v1alpha1.PhaseStarting, v1alpha1.ReasonWaitingForRunners},
		{v1alpha1.PhaseRunning, v1alpha1.ReasonRunning},
		{v1alpha1.PhaseCollecting, v1alpha1.ReasonCollecting},
	} {
		msg := "at " + string(p.phase)
		rows = append(rows, struct {
			name string
			d    decision
			want composed
		}{string(p.phase), decision{standings: []standingChange{{v1alpha1.PhasePending, v1alpha1.ReasonAccepted, "first"}, {p.phase, p.reason, msg}}},
			composed{Phase: p.phase, Reason: p.reason, Message: msg, Conditions: inProgress(p.reason)}})
	}
	for _, v := range []struct {
		verdict        v1alpha1.Verdict
		ready, stalled string
	}{
		{v1alpha1.VerdictPassed, "True/" + v1alpha1.ReasonPassed, "False/" + v1alpha1.ReasonPassed},
		{v1alpha1.VerdictFailed, "False/" + v1alpha1.ReasonFailed, "True/" + v1alpha1.ReasonVerdictFailed},
		{v1alpha1.VerdictInconclusive, "False/" + v1alpha1.ReasonInconclusive, "True/" + v1alpha1.ReasonVerdictInconclusive},
	} {
		e := ending{phase: v1alpha1.PhaseSucceeded, reason: v1alpha1.ReasonCompleted, message: "verdict " + string(v.verdict), verdict: v.verdict}
		rows = append(rows, struct {
			name string
			d    decision
			want composed
		}{"Succeeded " + string(v.verdict), decision{ending: &e}, composed{Phase: v1alpha1.PhaseSucceeded, Reason: v1alpha1.ReasonCompleted,
			Message: e.message, Verdict: v.verdict, Completed: true, Conditions: ended(v.verdict, v.ready, v.stalled)}})
	}
	for _, reason := range v1alpha1.FailureReasons {
		e := failedEnding(failure{reason, "what went wrong; what to do"})
		rows = append(rows, struct {
			name string
			d    decision
			want composed
		}{"Failed " + reason, decision{standings: []standingChange{{v1alpha1.PhaseRunning, v1alpha1.ReasonRunning, "ran"}}, ending: &e},
			composed{Phase: v1alpha1.PhaseFailed, Reason: reason, Message: e.message, Verdict: v1alpha1.VerdictFailed, Completed: true, Partial: true,
				Conditions: map[string]string{
					v1alpha1.ConditionReady: "False/" + v1alpha1.ReasonFailed, v1alpha1.ConditionReconciling: "False/" + reason,
					v1alpha1.ConditionStalled: "True/" + reason, v1alpha1.ConditionComplete: "True/" + reason,
				}}})
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			run := tw.MakeTestRun("r", "ns").Generation(4).Obj()
			run.UID = "0123456789abcdef"
			if row.want.Partial { // failed after the start, with results so far
				run.Status.Results = &v1alpha1.Results{}
				rc.SetCondition(&run.Status.Conditions, run.Generation, v1alpha1.ConditionStarted, metav1.ConditionTrue, v1alpha1.ReasonStarted, "started")
				row.want.Conditions[v1alpha1.ConditionStarted] = "True/" + v1alpha1.ReasonStarted
			}
			s := &scope{run: run, now: now, d: row.d}
			st := composeStatus(s)
			if diff := cmp.Diff(row.want, composedOf(st)); diff != "" {
				t.Errorf("composed status (-want +got):\n%s", diff)
			}
			if st.TestID == "" || st.ObservedGeneration != 4 || (row.want.Completed && !st.CompletionTime.Time.Equal(now)) {
				t.Errorf("testID %q observedGeneration %d completion %v", st.TestID, st.ObservedGeneration, st.CompletionTime)
			}
			if diff := cmp.Diff(v1alpha1.TestRunStatus{}, run.Status, cmpopts.IgnoreFields(v1alpha1.TestRunStatus{}, "Conditions", "Results")); diff != "" {
				t.Errorf("composing wrote the run's status (-want +got):\n%s", diff)
			}
		})
	}
}

// TestComposeKeepsWhatWasDecidedOnly: the Profile snapshot, the target namespace and the start
// skew go into status as decided; what was not decided stays as it was.
func TestComposeKeepsWhatWasDecidedOnly(t *testing.T) {
	run := tw.MakeTestRun("r", "ns").Obj()
	run.Status = v1alpha1.TestRunStatus{Phase: v1alpha1.PhaseRunning, Reason: v1alpha1.ReasonRunning, TestID: "r-1",
		TargetNamespace: "fb-old", Runners: &v1alpha1.RunnerCounts{Desired: 2, StartSkew: "3ms"}}
	snap := &v1alpha1.ProfileSnapshot{Name: "c1", Generation: 2}
	st := composeStatus(&scope{run: run, d: decision{profile: snap}, summary: classify(make([]runnerState, 2))})
	if st.Profile == nil || st.Profile.Generation != 2 || st.TargetNamespace != "fb-old" || st.Runners.StartSkew != "3ms" || st.TestID != "r-1" {
		t.Errorf("profile %+v targetNamespace %q runners %+v testID %q", st.Profile, st.TargetNamespace, st.Runners, st.TestID)
	}
	st = composeStatus(&scope{run: run, d: decision{targetNamespace: "fb-new", startSkew: "1ms"}, summary: classify(make([]runnerState, 2))})
	if st.TargetNamespace != "fb-new" || st.Runners.StartSkew != "1ms" || st.Phase != v1alpha1.PhaseRunning {
		t.Errorf("targetNamespace %q runners %+v phase %s", st.TargetNamespace, st.Runners, st.Phase)
	}
}

// TestAnnouncedChanges: every change of phase or reason in a reconcile is one event, in
// order, the ending last; a repeat is none; a failure and a verdict other than PASSED warn.
func TestAnnouncedChanges(t *testing.T) {
	before := &v1alpha1.TestRunStatus{Phase: v1alpha1.PhaseRunning, Reason: v1alpha1.ReasonRunning}
	e := ending{phase: v1alpha1.PhaseSucceeded, reason: v1alpha1.ReasonCompleted, message: "done", verdict: v1alpha1.VerdictFailed}
	d := &decision{standings: []standingChange{{v1alpha1.PhaseRunning, v1alpha1.ReasonRunning, "still"},
		{v1alpha1.PhaseCollecting, v1alpha1.ReasonCollecting, "reading"}}, ending: &e}
	got := fmt.Sprint(announced(before, d, &v1alpha1.TestRunStatus{Verdict: v1alpha1.VerdictFailed}))
	want := "[{Normal {Collecting Collecting reading}} {Warning {Succeeded Completed done}}]"
	if got != want {
		t.Errorf("announced %s, want %s", got, want)
	}
}
