package target

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
)

func TestNotPermitted(t *testing.T) {
	ns := func(labels map[string]string) *corev1.Namespace {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a", Labels: labels}}
	}
	run := func(level v1alpha1.PodSecurityLevel) *v1alpha1.TestRun {
		tr := tw.MakeTestRun("r", "team-a").Obj()
		tr.Spec.Target.PodSecurity = level
		return tr
	}
	external := tw.MakeTestRun("x", "team-a").External("http://api.team-a:8080").Obj()
	external.Spec.Target.PodSecurity = v1alpha1.PodSecurityBaseline
	forTeamA := tw.MakeProfile("p", "1", "1Gi").ForNamespaces(map[string]string{"team": "a"}).Obj()
	// A built-in Profile the chart offers only to labelled namespaces.
	h3 := tw.MakeProfile("h3", "12", "32Gi").ForNamespaces(map[string]string{"fleetbench.dev/large-profiles": "true"}).Obj()
	h3.Labels = map[string]string{BuiltinLabel: "true"}
	for _, tc := range []struct {
		name           string
		tr             *v1alpha1.TestRun
		ns             *corev1.Namespace
		profile        *v1alpha1.Profile
		clusterDefault string
		says           string // "" = permitted
	}{
		{"restricted, no label", run(v1alpha1.PodSecurityRestricted), ns(nil), nil, "restricted", ""},
		{"baseline, no label, strict default", run(v1alpha1.PodSecurityBaseline), ns(nil), nil, "restricted", "cluster default restricted"},
		{"baseline, no label, baseline default", run(v1alpha1.PodSecurityBaseline), ns(nil), nil, "baseline", ""},
		{"baseline, restricted label", run(v1alpha1.PodSecurityBaseline), ns(map[string]string{EnforceLabel: "restricted"}), nil, "privileged", "enforce=restricted"},
		{"baseline, baseline label", run(v1alpha1.PodSecurityBaseline), ns(map[string]string{EnforceLabel: "baseline"}), nil, "restricted", ""},
		{"baseline, unknown label", run(v1alpha1.PodSecurityBaseline), ns(map[string]string{EnforceLabel: "loose"}), nil, "privileged", "read as restricted"},
		{"external target: nothing provisioned", external, ns(nil), nil, "restricted", ""},
		{"profile for team a, team a", run(""), ns(map[string]string{"team": "a"}), forTeamA, "restricted", ""},
		{"profile for team a, team b", run(""), ns(map[string]string{"team": "b"}), forTeamA, "restricted", "Profile p may be used only from namespaces matching team=a"},
		{"profile for team a, no labels", run(""), ns(nil), forTeamA, "restricted", "namespace team-a does not"},
		{"profile for everyone", run(""), ns(nil), tw.MakeProfile("c1", "1", "1Gi").Obj(), "restricted", ""},
		{"built-in not offered here", run(""), ns(map[string]string{"team": "a"}), h3, "restricted", "ask an admin to offer it here (the chart's builtinProfiles.offeredTo"},
		{"built-in offered here", run(""), ns(map[string]string{"fleetbench.dev/large-profiles": "true"}), h3, "restricted", ""},
	} {
		got := NotPermitted(tc.tr, tc.ns, tc.profile, tc.clusterDefault)
		if (got == "") != (tc.says == "") || !strings.Contains(got, tc.says) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.says)
		}
	}
}

// TestSharedNamespaceRefuses: the operator never labels a shared target namespace, so a target
// asking for more than it enforces is refused, naming that namespace's label.
func TestSharedNamespaceRefuses(t *testing.T) {
	shared := func(labels map[string]string) *corev1.Namespace {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "fb-targets", Labels: labels}}
	}
	run := func(level v1alpha1.PodSecurityLevel) *v1alpha1.TestRun {
		tr := tw.MakeTestRun("r", "team-a").Obj()
		tr.Spec.Target.PodSecurity = level
		return tr
	}
	for _, tc := range []struct {
		name           string
		tr             *v1alpha1.TestRun
		ns             *corev1.Namespace
		clusterDefault string
		says           []string // none = accepted
	}{
		{"restricted in a restricted namespace", run(""), shared(map[string]string{EnforceLabel: "restricted"}), "restricted", nil},
		{"baseline in a baseline namespace", run(v1alpha1.PodSecurityBaseline), shared(map[string]string{EnforceLabel: "baseline"}), "restricted", nil},
		{"baseline in a restricted namespace", run(v1alpha1.PodSecurityBaseline), shared(map[string]string{EnforceLabel: "restricted"}), "privileged",
			[]string{"shared target namespace fb-targets", "enforce=restricted", "label namespace fb-targets pod-security.kubernetes.io/enforce=baseline"}},
		{"baseline, no label, strict default", run(v1alpha1.PodSecurityBaseline), shared(nil), "restricted", []string{"cluster default restricted"}},
		{"baseline, no label, privileged default", run(v1alpha1.PodSecurityBaseline), shared(nil), "privileged", nil},
		{"external", tw.MakeTestRun("x", "team-a").External("http://x").Obj(), shared(map[string]string{EnforceLabel: "restricted"}), "restricted", nil},
	} {
		got := SharedNamespaceRefuses(tc.tr, tc.ns, tc.clusterDefault)
		if (got == "") != (len(tc.says) == 0) {
			t.Errorf("%s: %q, want refused: %v", tc.name, got, len(tc.says) > 0)
		}
		for _, s := range tc.says {
			if !strings.Contains(got, s) {
				t.Errorf("%s: %q lacks %q", tc.name, got, s)
			}
		}
	}
}
