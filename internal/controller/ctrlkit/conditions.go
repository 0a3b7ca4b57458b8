package ctrlkit

import (
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// SetCondition sets one condition, recording the generation it describes.
func SetCondition(conds *[]metav1.Condition, generation int64, typ string, status metav1.ConditionStatus, reason, message string) {
	meta.SetStatusCondition(conds, metav1.Condition{
		Type: typ, Status: status, Reason: reason, Message: Truncate(message, MaxConditionMessage), ObservedGeneration: generation,
	})
}

// Limits of the API: a condition's message (metav1.Condition) and our CRDs' status.message.
const (
	MaxConditionMessage = 32768
	MaxStatusMessage    = 4096
)

// Truncate cuts a message to at most limit bytes on a character boundary, saying so: the API
// server refuses a whole status patch with one message too long.
func Truncate(message string, limit int) string {
	if len(message) <= limit {
		return message
	}
	const cut = " … (cut)"
	end := limit - len(cut)
	for end > 0 && !utf8.RuneStart(message[end]) {
		end--
	}
	return message[:end] + cut
}

// Standing is where a run stands, as its summary conditions tell it.
type Standing struct {
	// Ended: the run reached a terminal phase.
	Ended bool
	// Failed: it ended in the Failed phase (it could not run to the end).
	Failed bool
	// Verdict of an ended run; empty while in progress.
	Verdict v1alpha1.Verdict
	// Phase, Reason and Message are the run's own (status.phase, .reason, .message).
	Phase, Reason, Message string
}

// message is what the conditions say: while in progress, the phase leads, so a tool that
// shows only Reconciling's message still tells where the run is.
func (s Standing) message() string {
	if !s.Ended && s.Phase != "" {
		return s.Phase + ": " + s.Message
	}
	return s.Message
}

// Passed is true only for a run that ended, did not fail, and PASSED.
func (s Standing) Passed() bool {
	return s.Ended && !s.Failed && s.Verdict == v1alpha1.VerdictPassed
}

// SetSummaryConditions sets Ready, Reconciling, Stalled and Complete after Kubernetes'
// conventions, so that kstatus computes InProgress while the run runs, Current once it PASSED
// and Failed once it ended any other way; `kubectl wait --for=condition=Ready` passes only a
// passed run, `--for=condition=Complete` any ended one.
func SetSummaryConditions(conds *[]metav1.Condition, generation int64, s Standing) {
	set := func(typ string, status metav1.ConditionStatus, reason string) {
		SetCondition(conds, generation, typ, status, reason, s.message())
	}
	if !s.Ended {
		set(v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonInProgress)
		set(v1alpha1.ConditionReconciling, metav1.ConditionTrue, s.Reason)
		set(v1alpha1.ConditionStalled, metav1.ConditionFalse, v1alpha1.ReasonInProgress)
		set(v1alpha1.ConditionComplete, metav1.ConditionFalse, v1alpha1.ReasonInProgress)
		return
	}
	set(v1alpha1.ConditionReconciling, metav1.ConditionFalse, s.Reason)
	set(v1alpha1.ConditionComplete, metav1.ConditionTrue, s.Reason)
	if s.Passed() {
		set(v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonPassed)
		set(v1alpha1.ConditionStalled, metav1.ConditionFalse, v1alpha1.ReasonPassed)
		return
	}
	ready, stalled := v1alpha1.ReasonFailed, s.Reason
	switch {
	case s.Failed:
	case s.Verdict == v1alpha1.VerdictInconclusive:
		ready, stalled = v1alpha1.ReasonInconclusive, v1alpha1.ReasonVerdictInconclusive
	case s.Verdict == v1alpha1.VerdictRegressed:
		ready, stalled = v1alpha1.ReasonRegressed, v1alpha1.ReasonVerdictRegressed
	default:
		stalled = v1alpha1.ReasonVerdictFailed
	}
	set(v1alpha1.ConditionReady, metav1.ConditionFalse, ready)
	set(v1alpha1.ConditionStalled, metav1.ConditionTrue, stalled)
}
