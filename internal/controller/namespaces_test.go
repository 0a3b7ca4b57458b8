package controller

import (
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/naming"
)

func TestParseNamespaces(t *testing.T) {
	for _, tc := range []struct {
		watch, target string
		want          Namespaces
		err           string
	}{
		{"", "", Namespaces{}, ""},
		{" team-a, team-b ,team-a,", "fb-targets", Namespaces{Watch: []string{"team-a", "team-b"}, Target: "fb-targets"}, ""},
		{"", "fb-targets", Namespaces{Target: "fb-targets"}, ""},
		{"Team_A", "", Namespaces{}, `namespace "Team_A"`},
		{"team-a", "fb.targets", Namespaces{}, `namespace "fb.targets"`},
	} {
		got, err := ParseNamespaces(tc.watch, tc.target)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q %q: err %v, want %q", tc.watch, tc.target, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got.Watch, tc.want.Watch) || got.Target != tc.want.Target {
			t.Errorf("%q %q: %+v %v, want %+v", tc.watch, tc.target, got, err, tc.want)
		}
	}
}

func TestTargetHome(t *testing.T) {
	run := func(status string) *v1alpha1.TestRun {
		return &v1alpha1.TestRun{ObjectMeta: metav1.ObjectMeta{Name: "load", Namespace: "team-a"}, Status: v1alpha1.TestRunStatus{TargetNamespace: status}}
	}
	own := naming.TargetNamespace("team-a", "load")
	for _, tc := range []struct {
		name   string
		ns     Namespaces
		run    *v1alpha1.TestRun
		want   string
		shared bool
	}{
		{"fresh, before provisioning", Namespaces{}, run(""), own, false},
		{"shared, before provisioning", Namespaces{Target: "fb-targets"}, run(""), "fb-targets", true},
		{"provisioned fresh, manager now shared", Namespaces{Target: "fb-targets"}, run(own), own, false},
		{"provisioned shared, manager now fresh", Namespaces{}, run("fb-targets"), "fb-targets", true},
	} {
		if ns, shared := tc.ns.TargetHome(tc.run); ns != tc.want || shared != tc.shared {
			t.Errorf("%s: %s shared=%v, want %s shared=%v", tc.name, ns, shared, tc.want, tc.shared)
		}
	}
}
