// Package plan turns a CapacityPlan into its cells and child TestRuns, decides which child
// runs next, and builds the sizing table from the children's status. It makes no client
// calls: the CapacityPlan controller loads the world and acts on what this package decides.
package plan

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/naming"
)

// Cell is one child of the plan: a profile, one value of every sweep dimension, a repetition.
type Cell struct {
	Index      int
	Profile    string
	Values     []string // Values[i] is the value of sweep dimension i
	Repetition int32
}

// Name is the child TestRun's name.
func (c Cell) Name(plan string) string { return naming.PlanChild(plan, c.Profile, c.Index) }

// ValueMap keys the cell's values by dimension name, as the table shows them.
func (c Cell) ValueMap(sweep []v1alpha1.SweepDimension) map[string]string {
	if len(sweep) == 0 {
		return nil
	}
	m := make(map[string]string, len(sweep))
	for i, d := range sweep {
		m[d.Name()] = c.Values[i]
	}
	return m
}

// Cells expands the plan in a fixed order: profile, then each sweep dimension (the first
// varying slowest), then repetition.
func Cells(spec *v1alpha1.CapacityPlanSpec) []Cell {
	reps := max(spec.Repetitions, 1)
	combos := [][]string{{}}
	for _, d := range spec.Sweep {
		var next [][]string
		for _, c := range combos {
			for _, v := range d.Values {
				next = append(next, append(append([]string{}, c...), v))
			}
		}
		combos = next
	}
	var cells []Cell
	for _, p := range spec.Profiles {
		for _, combo := range combos {
			for r := int32(1); r <= reps; r++ {
				cells = append(cells, Cell{Index: len(cells), Profile: p, Values: combo, Repetition: r})
			}
		}
	}
	return cells
}

// ChildSpec is the template with the cell applied: its profile, each sweep value, and the
// plan's capacity assumptions where the template has none.
func ChildSpec(spec *v1alpha1.CapacityPlanSpec, c Cell) (v1alpha1.TestRunSpec, error) {
	child := *spec.Template.DeepCopy()
	child.Profile = c.Profile
	if child.Capacity == nil && spec.Capacity != nil {
		child.Capacity = spec.Capacity.DeepCopy()
	}
	for i, d := range spec.Sweep {
		v := c.Values[i]
		switch {
		case d.Component != "":
			comp := findComponent(child.Target.Components, d.Component)
			if comp == nil {
				return child, fmt.Errorf("spec.sweep[%d]: no component %q in the template", i, d.Component)
			}
			if d.Field == v1alpha1.SweepFieldTLS {
				comp.TLS = ptr.To(v == "true")
				continue
			}
			comp.Env = setEnv(comp.Env, d.Env, v)
		case d.ScriptEnv != "":
			// k6 passes the runner's environment to the script as __ENV.
			if child.Runner == nil {
				child.Runner = &v1alpha1.RunnerSpec{}
			}
			child.Runner.Env = setEnv(child.Runner.Env, d.ScriptEnv, v)
		case d.Field != "":
			n, err := strconv.ParseInt(v, 10, 32)
			if err != nil {
				return child, fmt.Errorf("spec.sweep[%d]: %s value %q is not a whole number", i, d.Field, v)
			}
			switch d.Field {
			case v1alpha1.SweepFieldDevices:
				if child.Load == nil {
					child.Load = &v1alpha1.LoadSpec{}
				}
				child.Load.Devices = ptr.To(int32(n))
			case v1alpha1.SweepFieldParallelism:
				child.Parallelism = v1alpha1.FixedParallelism(int32(n))
			}
		}
	}
	return child, nil
}

func findComponent(cs []v1alpha1.Component, name string) *v1alpha1.Component {
	for i := range cs {
		if cs[i].Name == name {
			return &cs[i]
		}
	}
	return nil
}

// setEnv sets name to value, replacing an earlier definition so the sweep's value is the one seen.
func setEnv(env []corev1.EnvVar, name, value string) []corev1.EnvVar {
	out := make([]corev1.EnvVar, 0, len(env)+1)
	for _, e := range env {
		if e.Name != name {
			out = append(out, e)
		}
	}
	return append(out, corev1.EnvVar{Name: name, Value: value})
}
