package decide

import (
	"fleetbench.dev/fleetbench/pkg/measure/targetstats"
)

// SampleInput is what a target sample reads, copied out of the scope for the call off the
// worker (the cache's pods must not be read after the reconcile).
type SampleInput struct {
	Source string
	Nodes  []string
	Pods   targetstats.Pods
	Ns     string
}

func (s *Scope) SampleInput() SampleInput {
	in := SampleInput{Pods: s.measuredPods(), Ns: s.TargetNS}
	if t := s.Target(); t != nil {
		in.Source = t.Source
	}
	seen := map[string]bool{}
	for _, p := range s.TargetPods {
		if n := p.Spec.NodeName; n != "" && !seen[n] {
			seen[n] = true
			in.Nodes = append(in.Nodes, n)
		}
	}
	return in
}

// measuredPods are the pods a target sample sums: every pod of a namespace of the run's own,
// the run's own pods of a shared one.
func (s *Scope) measuredPods() targetstats.Pods {
	pods := targetstats.Pods{Namespace: s.TargetNS}
	if s.SharedTarget {
		pods.Names = map[string]bool{}
		for i := range s.TargetPods {
			pods.Names[s.TargetPods[i].Name] = true
		}
	}
	return pods
}
