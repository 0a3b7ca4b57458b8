package method

import v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"

type scope struct{ run *v1alpha1.TestRun }

// target hands out a live pointer.
func (s *scope) target() *v1alpha1.TestRunStatus { return &s.run.Status }

func stage(s *scope) {
	s.target().Message = "set behind the composer's back"
}
