package target

import (
	"maps"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/naming"
)

func TestParsePropagatedLabels(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		err  string
	}{
		{in: ""},
		{in: "team, cost-center,example.com/tier", want: []string{"team", "cost-center", "example.com/tier"}},
		{in: "team,,", want: []string{"team"}},
		{in: "pod-security.kubernetes.io/enforce", err: "set by the operator"},
		{in: "fleetbench.dev/testrun-uid", err: "set by the operator"},
		{in: "kubernetes.io/metadata.name", err: "set by the API server"},
		{in: "team a", err: "not a label key"},
		{in: "-team", err: "not a label key"},
	} {
		got, err := ParsePropagatedLabels(tc.in)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%q: err %v, want one saying %q", tc.in, err, tc.err)
		case tc.err == "" && (err != nil || strings.Join(got, ",") != strings.Join(tc.want, ",")):
			t.Errorf("%q: %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

// TestTargetNamespaceCopiesTheChosenTenantLabels: the chosen keys the tenant carries are copied,
// no other label is, and none of the operator's own labels is replaced.
func TestTargetNamespaceCopiesTheChosenTenantLabels(t *testing.T) {
	tr := tw.MakeTestRun("labels", "team-a").Obj()
	tr.UID = "uid-1"
	objs, err := Build(tr, c1, "fb-team-a-labels", Options{})
	if err != nil {
		t.Fatal(err)
	}
	own := maps.Clone(objs.Namespace.Labels)
	tenant := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a", Labels: map[string]string{
		"team": "a", "cost-center": "cc-7", "secret-policy": "loose", naming.LabelRole: "forged",
	}}}
	// The admin's keys, with one the tenant lacks and one the operator sets (refused at the flag,
	// and left alone here all the same).
	CopyTenantLabels(objs.Namespace, tenant, []string{"team", "cost-center", "tier", naming.LabelRole})
	want := maps.Clone(own)
	want["team"], want["cost-center"] = "a", "cc-7"
	if !maps.Equal(objs.Namespace.Labels, want) {
		t.Errorf("labels %v, want %v", objs.Namespace.Labels, want)
	}
	if objs.Namespace.Labels["pod-security.kubernetes.io/enforce"] != string(v1alpha1.PodSecurityRestricted) {
		t.Errorf("the target's Pod Security level changed: %v", objs.Namespace.Labels)
	}
}
