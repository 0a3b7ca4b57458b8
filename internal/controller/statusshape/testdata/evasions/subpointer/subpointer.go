package subpointer

import v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"

type scope struct{ run *v1alpha1.TestRun }

func (s *scope) comparison() *v1alpha1.Comparison { return s.run.Status.Comparison }

func stage(s *scope) {
	if c := s.comparison(); c != nil {
		c.Decision = v1alpha1.ComparisonNoData
	}
}
