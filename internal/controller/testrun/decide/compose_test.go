package decide

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	rc "fleetbench.dev/fleetbench/internal/controller/ctrlkit"
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
	ended := func(ready, stalled string) map[string]string {
		return map[string]string{
			v1alpha1.ConditionReady: ready, v1alpha1.ConditionReconciling: "False/" + v1alpha1.ReasonCompleted,
			v1alpha1.ConditionStalled: stalled, v1alpha1.ConditionComplete: "True/" + v1alpha1.ReasonCompleted,
		}
	}
	rows := []struct {
		name string
		d    Decision
		want composed
	}{
		{"new", Decision{}, composed{Phase: v1alpha1.PhasePending, Reason: v1alpha1.ReasonAccepted, Message: v1alpha1.MessageAccepted,
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
			d    Decision
			want composed
		}{string(p.phase), Decision{standings: []standingChange{{v1alpha1.PhasePending, v1alpha1.ReasonAccepted, "first"}, {p.phase, p.reason, msg}}},
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
		e := Ending{Phase: v1alpha1.PhaseSucceeded, Reason: v1alpha1.ReasonCompleted, Message: "verdict " + string(v.verdict), Verdict: v.verdict}
		rows = append(rows, struct {
			name string
			d    Decision
			want composed
		}{"Succeeded " + string(v.verdict), Decision{Ending: &e}, composed{Phase: v1alpha1.PhaseSucceeded, Reason: v1alpha1.ReasonCompleted,
			Message: e.Message, Verdict: v.verdict, Completed: true, Conditions: ended(v.ready, v.stalled)}})
	}
	for _, reason := range v1alpha1.FailureReasons {
		e := FailedEnding(Failure{Reason: reason, Message: "what went wrong; what to do"})
		rows = append(rows, struct {
			name string
			d    Decision
			want composed
		}{"Failed " + reason, Decision{standings: []standingChange{{v1alpha1.PhaseRunning, v1alpha1.ReasonRunning, "ran"}}, Ending: &e},
			composed{Phase: v1alpha1.PhaseFailed, Reason: reason, Message: e.Message, Verdict: v1alpha1.VerdictFailed, Completed: true, Partial: true,
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
			s := &Scope{Run: run, Now: now, Decided: row.d}
			st := ComposeStatus(s)
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
	st := ComposeStatus(&Scope{Run: run, Decided: Decision{Profile: snap}, Summary: Classify(make([]RunnerState, 2))})
	if st.Profile == nil || st.Profile.Generation != 2 || st.TargetNamespace != "fb-old" || st.Runners.StartSkew != "3ms" || st.TestID != "r-1" {
		t.Errorf("profile %+v targetNamespace %q runners %+v testID %q", st.Profile, st.TargetNamespace, st.Runners, st.TestID)
	}
	st = ComposeStatus(&Scope{Run: run, Decided: Decision{TargetNamespace: "fb-new", StartSkew: "1ms"}, Summary: Classify(make([]RunnerState, 2))})
	if st.TargetNamespace != "fb-new" || st.Runners.StartSkew != "1ms" || st.Phase != v1alpha1.PhaseRunning {
		t.Errorf("targetNamespace %q runners %+v phase %s", st.TargetNamespace, st.Runners, st.Phase)
	}
}

// TestAnnouncedChanges: every change of phase or reason in a reconcile is one event, in
// order, the ending last; a repeat is none; a failure and a verdict other than PASSED warn.
func TestAnnouncedChanges(t *testing.T) {
	before := &v1alpha1.TestRunStatus{Phase: v1alpha1.PhaseRunning, Reason: v1alpha1.ReasonRunning}
	e := Ending{Phase: v1alpha1.PhaseSucceeded, Reason: v1alpha1.ReasonCompleted, Message: "done", Verdict: v1alpha1.VerdictFailed}
	d := &Decision{standings: []standingChange{{v1alpha1.PhaseRunning, v1alpha1.ReasonRunning, "still"},
		{v1alpha1.PhaseCollecting, v1alpha1.ReasonCollecting, "reading"}}, Ending: &e}
	got := fmt.Sprint(Announced(before, d, &v1alpha1.TestRunStatus{Verdict: v1alpha1.VerdictFailed}))
	want := "[{Normal {Collecting Collecting reading}} {Warning {Succeeded Completed done}}]"
	if got != want {
		t.Errorf("announced %s, want %s", got, want)
	}
}

// TestComposeDecidedFields: one row per status field a phase decides; it goes into status as
// decided, the rest stays as loaded, and the loaded status is not written.
func TestComposeDecidedFields(t *testing.T) {
	start := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	loaded := v1alpha1.TestRunStatus{Phase: v1alpha1.PhaseRunning, Reason: v1alpha1.ReasonRunning, TestID: "r-1",
		Results: &v1alpha1.Results{Warnings: []string{"kept"}}, Capacity: &v1alpha1.CapacityResult{SafeMaxDevices: 7}}
	rows := []struct {
		name string
		d    Decision
		want func(st *v1alpha1.TestRunStatus)
	}{
		{"startTime", Decision{StartTime: &start}, func(st *v1alpha1.TestRunStatus) { st.StartTime = &start }},
		{"results", Decision{Results: &v1alpha1.Results{Partial: true}}, func(st *v1alpha1.TestRunStatus) { st.Results = &v1alpha1.Results{Partial: true} }},
		{"generatorBound", Decision{GeneratorBound: &GeneratorBound{true, "runners at 95% CPU"}}, func(st *v1alpha1.TestRunStatus) {
			st.GeneratorBound, st.GeneratorBoundReason = true, "runners at 95% CPU"
		}},
		{"progress", Decision{Progress: &v1alpha1.Progress{Summary: "40s/1m0s 66%"}}, func(st *v1alpha1.TestRunStatus) { st.Progress = &v1alpha1.Progress{Summary: "40s/1m0s 66%"} }},
		{"capacity", Decision{Capacity: &v1alpha1.CapacityResult{BreakingPointDevices: 300}}, func(st *v1alpha1.TestRunStatus) {
			st.Capacity = &v1alpha1.CapacityResult{BreakingPointDevices: 300}
		}},
		{"peak", Decision{Peak: &v1alpha1.PeakResult{LastHeldDevices: 300}}, func(st *v1alpha1.TestRunStatus) { st.Peak = &v1alpha1.PeakResult{LastHeldDevices: 300} }},
		{"target", Decision{Target: &v1alpha1.TargetUsage{Samples: 3}}, func(st *v1alpha1.TestRunStatus) { st.Target = &v1alpha1.TargetUsage{Samples: 3} }},
		{"abortOnFail", Decision{AbortOnFail: &v1alpha1.AbortWatch{Aborted: "http_req_failed rate<0.01"}}, func(st *v1alpha1.TestRunStatus) {
			st.AbortOnFail = &v1alpha1.AbortWatch{Aborted: "http_req_failed rate<0.01"}
		}},
		{"admission", Decision{Admission: &v1alpha1.QueueAdmission{ClusterQueue: "cq", PodSets: []v1alpha1.AdmittedPodSet{{Name: "runners", Flavors: []string{"spot"}}}}},
			func(st *v1alpha1.TestRunStatus) {
				st.Admission = &v1alpha1.QueueAdmission{ClusterQueue: "cq", PodSets: []v1alpha1.AdmittedPodSet{{Name: "runners", Flavors: []string{"spot"}}}}
			}},
		{"gaps", Decision{Gaps: &[]v1alpha1.RunnerGap{{Runner: 1, Replacement: 1, Cause: "Deleted", EstimatedUnobserved: 9}}}, func(st *v1alpha1.TestRunStatus) {
			st.Gaps = []v1alpha1.RunnerGap{{Runner: 1, Replacement: 1, Cause: "Deleted", EstimatedUnobserved: 9}}
		}},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			run := tw.MakeTestRun("r", "ns").Obj()
			run.Status = *loaded.DeepCopy()
			got := ComposeStatus(&Scope{Run: run, Decided: row.d})
			want := *loaded.DeepCopy()
			row.want(&want)
			if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(v1alpha1.TestRunStatus{}, "Conditions", "ObservedGeneration")); diff != "" {
				t.Errorf("composed (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(loaded, run.Status); diff != "" {
				t.Errorf("composing wrote the loaded status (-loaded +now):\n%s", diff)
			}
		})
	}
}

// TestComposeDecidedConditions: the conditions recorded in a reconcile are set in order (a
// later one of a type replaces an earlier), a condition whose status did not change keeps its
// transition time, and a later phase of the same reconcile reads them as decided.
func TestComposeDecidedConditions(t *testing.T) {
	run := tw.MakeTestRun("r", "ns").Generation(3).Obj()
	long := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	run.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionTargetReady, Status: metav1.ConditionTrue,
		Reason: v1alpha1.ReasonReady, LastTransitionTime: long}}
	s := &Scope{Run: run}
	if s.Started() {
		t.Fatal("started before any decision")
	}
	s.RecordCondition(v1alpha1.ConditionStarted, metav1.ConditionFalse, v1alpha1.ReasonResumeFailed, "runner 1: refused")
	s.RecordCondition(v1alpha1.ConditionStarted, metav1.ConditionTrue, v1alpha1.ReasonStarted, "started")
	s.RecordCondition(v1alpha1.ConditionTargetReady, metav1.ConditionTrue, v1alpha1.ReasonReady, "still ready")
	if !s.Started() || !s.ConditionTrue(v1alpha1.ConditionTargetReady) || !s.Condition(v1alpha1.ConditionTargetReady).LastTransitionTime.Equal(&long) {
		t.Errorf("read in the reconcile: started %v targetReady %+v", s.Started(), s.Condition(v1alpha1.ConditionTargetReady))
	}
	st := ComposeStatus(s)
	got := map[string]string{}
	for _, c := range st.Conditions {
		got[c.Type] = string(c.Status) + "/" + c.Reason + "/" + c.Message
		if c.ObservedGeneration != 3 {
			t.Errorf("%s at generation %d", c.Type, c.ObservedGeneration)
		}
	}
	want := map[string]string{v1alpha1.ConditionStarted: "True/" + v1alpha1.ReasonStarted + "/started",
		v1alpha1.ConditionTargetReady: "True/" + v1alpha1.ReasonReady + "/still ready"}
	for typ, w := range want {
		if got[typ] != w {
			t.Errorf("%s = %q, want %q", typ, got[typ], w)
		}
	}
	if c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionTargetReady); !c.LastTransitionTime.Equal(&long) {
		t.Errorf("TargetReady's transition time moved to %v though it stayed True", c.LastTransitionTime)
	}
	if len(run.Status.Conditions) != 1 || run.Status.Conditions[0].Message != "" {
		t.Errorf("recording wrote the loaded conditions: %+v", run.Status.Conditions)
	}
}

// TestReadersGiveTheDecidedValue: a later phase of the same reconcile reads what an earlier
// one decided (the start time behind the run deadline), else what was loaded.
func TestReadersGiveTheDecidedValue(t *testing.T) {
	run := tw.MakeTestRun("r", "ns").Obj()
	s := &Scope{Run: run, Timeouts: Timeouts{RunUnknown: time.Hour}}
	if !s.RunDeadline().IsZero() || s.Results() != nil {
		t.Fatalf("deadline %v results %+v before any decision", s.RunDeadline(), s.Results())
	}
	start := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	s.Decided.StartTime = &start
	AddWarnings(s, []string{"w"})
	if s.RunDeadline().IsZero() || s.Results() == nil || run.Status.Results != nil || run.Status.StartTime != nil {
		t.Errorf("deadline %v results %+v loaded %+v", s.RunDeadline(), s.Results(), run.Status)
	}
}
