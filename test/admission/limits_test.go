package admission

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
)

// TestTargetLimitFieldsAreValidated: spec.target.egress and the Profile's ephemeralStorage and
// extendedResources are checked where they are written, with the field and the fix in the
// refusal; what is well formed is admitted, egress ports defaulting to TCP.
func TestTargetLimitFieldsAreValidated(t *testing.T) {
	ctx := context.Background()
	egress := func(e ...v1alpha1.TargetEgress) *v1alpha1.TestRun {
		tr := tw.MakeTestRun("egress", ns).Obj()
		tr.Spec.Target.Egress = e
		return tr
	}
	profile := func(edit func(p *v1alpha1.ProfileSpec)) *v1alpha1.Profile {
		p := tw.MakeProfile("limits", "1", "1Gi").Obj()
		edit(&p.Spec)
		return p
	}
	extended := func(name, q string) *v1alpha1.Profile {
		return profile(func(p *v1alpha1.ProfileSpec) {
			p.ExtendedResources = map[corev1.ResourceName]resource.Quantity{corev1.ResourceName(name): resource.MustParse(q)}
		})
	}
	for _, tc := range []struct {
		name string
		obj  client.Object
		edit func(map[string]any)
		want []string // none = admitted
	}{
		{"egress to a block", egress(v1alpha1.TargetEgress{CIDR: "10.20.0.0/16", Ports: []v1alpha1.EgressPort{{Port: 443}}}), nil, nil},
		{"egress to an IPv6 block, every port", egress(v1alpha1.TargetEgress{CIDR: "2001:db8::/32"}), nil, nil},
		{"egress to a host name", egress(v1alpha1.TargetEgress{CIDR: "api.example.com"}), nil,
			[]string{"spec.target.egress[0].cidr", "must be a CIDR in canonical form", "10.20.0.0/16"}},
		{"egress with bits beyond the prefix", egress(v1alpha1.TargetEgress{CIDR: "10.20.1.0/16"}), nil,
			[]string{"spec.target.egress[0].cidr", "no bits set beyond the prefix"}},
		{"egress IPv6 not canonical", egress(v1alpha1.TargetEgress{CIDR: "2001:DB8::/32"}), nil, []string{"spec.target.egress[0].cidr"}},
		{"egress port zero", egress(v1alpha1.TargetEgress{CIDR: "10.0.0.0/8"}), set([]string{"spec", "target", "egress"}, []any{map[string]any{"cidr": "10.0.0.0/8", "ports": []any{map[string]any{"port": int64(0)}}}}),
			[]string{"spec.target.egress[0].ports[0].port", "greater than or equal to 1"}},
		{"egress unknown protocol", egress(v1alpha1.TargetEgress{CIDR: "10.0.0.0/8", Ports: []v1alpha1.EgressPort{{Port: 53, Protocol: "ICMP"}}}), nil,
			[]string{"spec.target.egress[0].ports[0].protocol", `supported values: "TCP", "UDP", "SCTP"`}},
		{"egress of an external target", func() *v1alpha1.TestRun {
			tr := tw.MakeTestRun("egress", ns).External("http://api.example.svc").Obj()
			tr.Spec.Target.Egress = []v1alpha1.TargetEgress{{CIDR: "10.0.0.0/8"}}
			return tr
		}(), nil, []string{"spec.target", "spec.target.egress applies to components"}},
		{"profile disk", profile(func(p *v1alpha1.ProfileSpec) { p.EphemeralStorage = ptr.To(resource.MustParse("20Gi")) }), nil, nil},
		{"profile disk zero", profile(func(p *v1alpha1.ProfileSpec) { p.EphemeralStorage = ptr.To(resource.MustParse("0")) }), nil,
			[]string{"spec.ephemeralStorage", "positive quantity"}},
		{"profile grants a GPU and hugepages", profile(func(p *v1alpha1.ProfileSpec) {
			p.ExtendedResources = map[corev1.ResourceName]resource.Quantity{"nvidia.com/gpu": resource.MustParse("2"), "hugepages-2Mi": resource.MustParse("256Mi")}
		}), nil, nil},
		{"profile grants cpu as extended", extended("cpu", "1"), nil, []string{"spec.extendedResources", "keys must be hugepages-<size> or an extended resource"}},
		{"profile grants ephemeral-storage as extended", extended("ephemeral-storage", "1Gi"), nil, []string{"spec.extendedResources"}},
		{"profile grants a kubernetes.io resource", extended("kubernetes.io/batteries", "1"), nil, []string{"spec.extendedResources"}},
		{"profile grants a quota name", extended("requests.nvidia.com/gpu", "1"), nil, []string{"spec.extendedResources"}},
		{"profile grants zero", extended("nvidia.com/gpu", "0"), nil, []string{"spec.extendedResources", "positive quantities"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(tc.obj)
			if err != nil {
				t.Fatal(err)
			}
			if tc.edit != nil {
				tc.edit(raw)
			}
			u := &unstructured.Unstructured{Object: raw}
			err = env.Client.Create(ctx, u, client.DryRunAll)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if ports, _, _ := unstructured.NestedSlice(u.Object, "spec", "target", "egress"); len(ports) > 0 {
					if p, _, _ := unstructured.NestedSlice(ports[0].(map[string]any), "ports"); len(p) > 0 && p[0].(map[string]any)["protocol"] != "TCP" {
						t.Errorf("egress port protocol defaults to TCP: %v", p[0])
					}
				}
				return
			}
			if !apierrors.IsInvalid(err) {
				t.Fatalf("want an Invalid (422) refusal naming %q, got %v", tc.want, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("refusal does not contain %q:\n%v", w, err)
				}
			}
		})
	}
}
