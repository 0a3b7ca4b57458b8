package stash

import v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"

// scope keeps a pointer it was given in one stage and writes through it in another.
type scope struct{ cmp *v1alpha1.Comparison }

func load(s *scope, run *v1alpha1.TestRun) { s.cmp = run.Status.Comparison }

func stage(s *scope) { s.cmp.Message = "" }
