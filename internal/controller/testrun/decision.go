package testrun

import (
	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// decision is what one reconcile decided about its TestRun. The phases and finish record it
// here instead of writing status; composeStatus turns it, with the scope, into the status.
type decision struct {
	// standings are the phases, reasons and messages the run moved through, in order; the
	// last is where it stands (none: it stays where it was). Each is announced by an event.
	standings []standingChange
	// ending is how the run ended in this reconcile (finish, collection); nil while it goes on.
	ending *ending
	// startSkew is the spread of the runners' start acknowledgements, once they were started.
	startSkew string
	// profile is the Profile's snapshot, fixed in this reconcile (reconcileProfile).
	profile *v1alpha1.ProfileSnapshot
	// targetNamespace is the target's namespace, once proven the run's (or the admin's shared one).
	targetNamespace string
}

// standingChange is a phase, its reason (a constant of api/v1alpha1) and a message.
type standingChange struct {
	phase           v1alpha1.TestRunPhase
	reason, message string
}

// enter records that the run is in phase for reason, saying message.
func (s *scope) enter(phase v1alpha1.TestRunPhase, reason, message string) {
	s.d.standings = append(s.d.standings, standingChange{phase, reason, message})
}

// standing is where the run stands as decided in this reconcile; nil: unchanged.
func (d *decision) standing() *standingChange {
	if len(d.standings) == 0 {
		return nil
	}
	return &d.standings[len(d.standings)-1]
}

// phase is the run's phase as decided so far in this reconcile.
func (s *scope) phase() v1alpha1.TestRunPhase {
	switch {
	case s.d.ending != nil:
		return s.d.ending.phase
	case s.d.standing() != nil:
		return s.d.standing().phase
	case s.run.Status.Phase == "":
		return v1alpha1.PhasePending
	}
	return s.run.Status.Phase
}
