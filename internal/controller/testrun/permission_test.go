package testrun

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/target"
)

// A TestRun gets no more through the operator than its namespace may have: a baseline target
// only where the namespace enforces baseline (or looser), a Profile only where its
// namespaceSelector matches. Refused runs end Failed NotPermitted before anything is made.
func TestTargetGetsNoMoreThanItsNamespace(t *testing.T) {
	setup(t) // the c1 profile the other runs use
	teamOnly := tw.MakeProfile("team-only", "1", "512Mi").ForNamespaces(map[string]string{"team": "a"}).Obj()
	if err := env.Client.Create(ctx, teamOnly); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	baseline := func(run *v1alpha1.TestRun) *v1alpha1.TestRun {
		run.Spec.Target.PodSecurity = v1alpha1.PodSecurityBaseline
		return run
	}
	for _, tc := range []struct {
		name      string
		nsLabels  map[string]string
		run       func(ns string) *v1alpha1.TestRun
		permitted bool
		says      []string
	}{
		{name: "baseline in a baseline namespace", nsLabels: map[string]string{target.EnforceLabel: "baseline"}, permitted: true,
			run: func(ns string) *v1alpha1.TestRun { return baseline(tw.MakeTestRun("b", ns).Obj()) }},
		{name: "baseline in a privileged namespace", nsLabels: map[string]string{target.EnforceLabel: "privileged"}, permitted: true,
			run: func(ns string) *v1alpha1.TestRun { return baseline(tw.MakeTestRun("b", ns).Obj()) }},
		{name: "baseline in a restricted namespace", nsLabels: map[string]string{target.EnforceLabel: "restricted"},
			run:  func(ns string) *v1alpha1.TestRun { return baseline(tw.MakeTestRun("b", ns).Obj()) },
			says: []string{"spec.target.podSecurity baseline", "pod-security.kubernetes.io/enforce=restricted", "use podSecurity restricted"}},
		{name: "baseline in an unlabelled namespace", nsLabels: nil,
			run:  func(ns string) *v1alpha1.TestRun { return baseline(tw.MakeTestRun("b", ns).Obj()) },
			says: []string{"cluster default restricted", "label the namespace pod-security.kubernetes.io/enforce=baseline"}},
		{name: "restricted anywhere", nsLabels: nil, permitted: true,
			run: func(ns string) *v1alpha1.TestRun { return tw.MakeTestRun("r", ns).Obj() }},
		{name: "a profile for another team", nsLabels: map[string]string{"team": "b"},
			run:  func(ns string) *v1alpha1.TestRun { return tw.MakeTestRun("p", ns).Profile("team-only").Obj() },
			says: []string{"Profile team-only may be used only from namespaces matching team=a", "spec.namespaceSelector"}},
		{name: "a profile for this team", nsLabels: map[string]string{"team": "a"}, permitted: true,
			run: func(ns string) *v1alpha1.TestRun { return tw.MakeTestRun("p", ns).Profile("team-only").Obj() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "perm-", Labels: tc.nsLabels}}
			if err := env.Client.Create(ctx, ns); err != nil {
				t.Fatal(err)
			}
			run := tc.run(ns.Name)
			create(t, run)
			if tc.permitted {
				waitPhase(t, run, v1alpha1.PhaseProvisioning, "")
				newKubelet(t, run).targetDeployments()
				return
			}
			got := waitPhase(t, run, v1alpha1.PhaseFailed, v1alpha1.ReasonNotPermitted)
			for _, s := range tc.says {
				if !strings.Contains(got.Status.Message, s) {
					t.Errorf("message %q lacks %q", got.Status.Message, s)
				}
			}
			if got.Status.TargetNamespace != "" {
				t.Errorf("status.targetNamespace %q: nothing may be provisioned for a refused run", got.Status.TargetNamespace)
			}
		})
	}
}
