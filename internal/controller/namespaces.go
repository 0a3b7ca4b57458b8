package controller

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/naming"
)

// Namespaces are where a manager works: --watch-namespaces and --target-namespace.
type Namespaces struct {
	// Watch are the namespaces whose TestRuns and CapacityPlans the manager sees; empty: all.
	// Those of other namespaces are never reconciled, not even given a status.
	Watch []string
	// Target is the namespace an admin made for every target (shared by the runs); empty: the
	// manager makes a namespace per TestRun.
	Target string
}

// ParseNamespaces reads the flags: watch is a comma-separated list.
func ParseNamespaces(watch, target string) (Namespaces, error) {
	n := Namespaces{Target: strings.TrimSpace(target)}
	for _, ns := range strings.Split(watch, ",") {
		if ns = strings.TrimSpace(ns); ns != "" && !slices.Contains(n.Watch, ns) {
			n.Watch = append(n.Watch, ns)
		}
	}
	for _, ns := range append(slices.Clone(n.Watch), n.Target) {
		if errs := validation.IsDNS1123Label(ns); ns != "" && len(errs) > 0 {
			return Namespaces{}, fmt.Errorf("namespace %q: %s", ns, strings.Join(errs, "; "))
		}
	}
	return n, nil
}

// cached are the namespaces the manager's cache holds, nil for all: the watched ones, and the
// target namespace, where the targets' Deployments and pods are.
func (n Namespaces) cached() []string {
	if len(n.Watch) == 0 {
		return nil
	}
	if n.Target == "" || slices.Contains(n.Watch, n.Target) {
		return n.Watch
	}
	return append(slices.Clone(n.Watch), n.Target)
}

// TargetHome is where run's target is, or goes. Once provisioned, status.targetNamespace says
// it, so a manager restarted with other flags still finds and removes it; before, the shared
// namespace of --target-namespace, else the run's own. shared: the namespace holds other runs'
// targets too, so the run's objects are told apart by name and label.
func (n Namespaces) TargetHome(run *v1alpha1.TestRun) (ns string, shared bool) {
	own := naming.TargetNamespace(run.Namespace, run.Name)
	switch st := run.Status.TargetNamespace; {
	case st != "":
		// A run started by an operator before the hashed names has its own namespace under the
		// legacy name.
		return st, st == n.Target || (st != own && st != naming.LegacyTargetNamespace(run.Namespace, run.Name))
	case n.Target != "":
		return n.Target, true
	}
	return own, false
}
