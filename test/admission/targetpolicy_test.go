package admission

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/testenv"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
)

// readTargetPolicy reads config/admission as shipped: the policy, its binding and its parameters.
func readTargetPolicy(t *testing.T) (*admissionv1.ValidatingAdmissionPolicy, *admissionv1.ValidatingAdmissionPolicyBinding, *corev1.ConfigMap) {
	t.Helper()
	read := func(file string, into ...any) {
		b, err := os.ReadFile("../../config/admission/" + file)
		if err != nil {
			t.Fatal(err)
		}
		docs := strings.Split(string(b), "\n---\n")
		if len(docs) != len(into) {
			t.Fatalf("%s: %d documents, want %d", file, len(docs), len(into))
		}
		for i, doc := range docs {
			if err := yaml.UnmarshalStrict([]byte(doc), into[i]); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
		}
	}
	policy, binding, params := &admissionv1.ValidatingAdmissionPolicy{}, &admissionv1.ValidatingAdmissionPolicyBinding{}, &corev1.ConfigMap{}
	read("policy.yaml", policy, binding)
	read("params.yaml", params)
	return policy, binding, params
}

// TestTargetPolicyRefusesWhatTheAdminDidNotAllow installs config/admission's policy on a real
// API server: a TestRun's or a CapacityPlan's egress outside the ConfigMap's allow-list, or a
// keepFor beyond its maxKeptTarget, is refused at apply naming the field, the list and the fix;
// what lies inside is admitted; a changed ConfigMap takes effect without touching the policy,
// and an empty list allows no egress.
func TestTargetPolicyRefusesWhatTheAdminDidNotAllow(t *testing.T) {
	ctx := context.Background()
	policy, binding, params := readTargetPolicy(t)
	if params.Data["egressAllowList"] != "" || params.Data["maxKeptTarget"] != "24h" {
		t.Errorf("shipped parameters %v, want no egress and 24h", params.Data)
	}
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: params.Namespace}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	params.Data = map[string]string{"egressAllowList": "10.20.0.0/16, 2001:db8::/32", "maxKeptTarget": "6h"}
	for _, o := range []client.Object{params, policy, binding} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { removeTargetPolicy(t, policy, binding, params) })

	run := func(egress []string, keepFor v1alpha1.Duration) *v1alpha1.TestRun {
		r := tw.MakeTestRun("policed", ns).Obj()
		for _, c := range egress {
			r.Spec.Target.Egress = append(r.Spec.Target.Egress, v1alpha1.TargetEgress{CIDR: c})
		}
		if keepFor != "" {
			r.Spec.Cleanup = &v1alpha1.CleanupSpec{Target: v1alpha1.TargetKeepUntilDeleted, KeepFor: keepFor}
		}
		return r
	}
	plan := func(template *v1alpha1.TestRun) *v1alpha1.CapacityPlan {
		return tw.MakeCapacityPlan("policed", ns, template, "c1").Parallel(2).Obj() // a kept target needs Parallel
	}
	refusal := func(o client.Object) error {
		return env.Client.Create(ctx, o.DeepCopyObject().(client.Object), client.DryRunAll)
	}
	// The policy and its binding reach the API server's admission a moment after they are made.
	testenv.Eventually(t, "the policy in effect", func() error {
		if err := refusal(run([]string{"0.0.0.0/0"}, "")); err == nil {
			return fmt.Errorf("egress 0.0.0.0/0 admitted")
		}
		return nil
	})
	for _, tc := range []struct {
		name string
		obj  client.Object
		want []string // nil: admitted
	}{
		{name: "no egress, no keepFor", obj: run(nil, "")},
		{name: "inside the list", obj: run([]string{"10.20.3.0/24", "10.20.0.0/16", "2001:db8:1::/48"}, "")},
		{name: "everything", obj: run([]string{"10.20.0.0/16", "0.0.0.0/0"}, ""),
			want: []string{"spec.target.egress[].cidr 0.0.0.0/0 is outside the blocks the admin lets targets reach (10.20.0.0/16, 2001:db8::/32; ConfigMap fleetbench-system/fleetbench-targets egressAllowList)", "narrow it"}},
		{name: "wider than allowed", obj: run([]string{"10.0.0.0/8", "::/0"}, ""), want: []string{"cidr 10.0.0.0/8, ::/0 is outside"}},
		{name: "beside", obj: run([]string{"10.21.0.0/16"}, ""), want: []string{"cidr 10.21.0.0/16 is outside"}},
		{name: "kept less than the most", obj: run(nil, "2h")},
		{name: "kept the most", obj: run(nil, "6h")},
		{name: "kept longer", obj: run(nil, "6h30m"),
			want: []string{"spec.cleanup.keepFor 6h30m is more than the 6h a target is kept at most here (ConfigMap fleetbench-system/fleetbench-targets maxKeptTarget)", "ask for less"}},
		{name: "plan inside", obj: plan(run([]string{"10.20.1.0/24"}, "1h"))},
		{name: "plan egress", obj: plan(run([]string{"192.168.0.0/16"}, "")), want: []string{"spec.template.target.egress[].cidr 192.168.0.0/16 is outside"}},
		{name: "plan kept longer", obj: plan(run(nil, "12h")), want: []string{"spec.template.cleanup.keepFor 12h is more than the 6h"}},
	} {
		err := refusal(tc.obj)
		switch {
		case tc.want == nil && err != nil:
			t.Errorf("%s: refused: %v", tc.name, err)
		case tc.want != nil && err == nil:
			t.Errorf("%s: admitted, want refused saying %q", tc.name, tc.want)
		case tc.want != nil && !apierrors.IsForbidden(err):
			t.Errorf("%s: %v, want Forbidden", tc.name, err)
		case tc.want != nil:
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s: %v, want it to say %q", tc.name, err, w)
				}
			}
		}
	}

	// The admin empties the list: no egress at all, the next create already.
	params.Data = map[string]string{"egressAllowList": ""}
	if err := env.Client.Update(ctx, params); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "the emptied list in effect", func() error {
		err := refusal(run([]string{"10.20.3.0/24"}, ""))
		if err == nil {
			return fmt.Errorf("egress inside the old list admitted")
		}
		if !strings.Contains(err.Error(), "(none: targets reach only DNS and their own pods;") {
			return fmt.Errorf("egress inside the old list: %w", err)
		}
		return nil
	})
	// Without maxKeptTarget the policy holds keepFor to nothing (the manager's maximum applies).
	if err := refusal(run(nil, "100h")); err != nil {
		t.Errorf("keepFor without a maxKeptTarget: %v", err)
	}
}

// removeTargetPolicy deletes what TestTargetPolicyRefusesWhatTheAdminDidNotAllow made, the
// binding first (a policy bound to a missing ConfigMap refuses everything), and waits until the
// API server admits what the policy refused, so no later test meets it.
func removeTargetPolicy(t *testing.T, objs ...client.Object) {
	ctx := context.Background()
	for _, o := range objs {
		if err := env.Client.Delete(ctx, o); client.IgnoreNotFound(err) != nil {
			t.Error(err)
		}
	}
	open := tw.MakeTestRun("unpoliced", ns).Obj()
	open.Spec.Target.Egress = []v1alpha1.TargetEgress{{CIDR: "0.0.0.0/0"}}
	deadline := time.Now().Add(30 * time.Second)
	for env.Client.Create(ctx, open.DeepCopy(), client.DryRunAll) != nil {
		if time.Now().After(deadline) {
			t.Error("the policy still refuses 30 s after its removal")
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}
