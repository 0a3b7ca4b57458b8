package runners

import "fleetbench.dev/fleetbench/pkg/measure"

// ScenariosFromCheckReport are the scenarios of the pre-flight's check report (k6 run's own
// plan, split into the fleet's segments), each with its VUs summed over the segments, in the
// order the report first names them; ok is false when the report has none. The report is the
// tenant's (its init code can print anything): at most maxScenarios are read, and each
// segment's counts are capped, so a forged report costs only a wrong warning about its own run.
// The controller's warnings and the fidelity harness both use it.
func ScenariosFromCheckReport(report measure.CheckReport) (out []ScenarioVUs, ok bool) {
	var order []string
	total := map[string]*ScenarioVUs{}
	for _, seg := range report.Segments {
		for _, sc := range seg.Scenarios {
			t := total[sc.Name]
			if t == nil {
				if len(order) == maxScenarios {
					continue
				}
				t = &ScenarioVUs{Name: sc.Name, Executor: sc.Executor}
				total[sc.Name] = t
				order = append(order, sc.Name)
			}
			t.VUs += int64(min(sc.VUs, 1<<40))
			t.MaxVUs += int64(min(sc.MaxVUs, 1<<40))
		}
	}
	out = make([]ScenarioVUs, 0, len(order))
	for _, name := range order {
		out = append(out, *total[name])
	}
	return out, len(out) > 0
}
