package target

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/naming"
)

func resources(kv ...string) *corev1.ResourceRequirements {
	list := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		list[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return &corev1.ResourceRequirements{Limits: list}
}

func perComponent(comps ...v1alpha1.Component) *v1alpha1.TestRun {
	return tw.MakeTestRun("r", "team").Sizing(v1alpha1.SizingPerComponent).Components(comps...).Obj()
}

func custom(name string, res *corev1.ResourceRequirements, share int32) v1alpha1.Component {
	c := v1alpha1.Component{Name: name, Kind: v1alpha1.ComponentCustom, Image: "app:dev", Ports: []corev1.ContainerPort{{ContainerPort: 8080}}, Resources: res}
	if share > 0 {
		c.Share = ptr.To(share)
	}
	return c
}

// TestQuotaCoversTheProfile: the target namespace's quota holds requests and limits of cpu,
// memory and ephemeral storage at the Profile's (2Gi of disk when it names none), and the
// extended resources it grants, by request; nothing else.
func TestQuotaCoversTheProfile(t *testing.T) {
	gpu := &v1alpha1.ProfileSpec{CPU: resource.MustParse("4"), Memory: resource.MustParse("8Gi"), EphemeralStorage: ptr.To(resource.MustParse("20Gi")),
		ExtendedResources: map[corev1.ResourceName]resource.Quantity{"nvidia.com/gpu": resource.MustParse("1"), "hugepages-2Mi": resource.MustParse("256Mi")}}
	for _, tc := range []struct {
		name    string
		profile *v1alpha1.ProfileSpec
		want    map[corev1.ResourceName]string
	}{
		{"c1, default disk", c1, map[corev1.ResourceName]string{
			"requests.cpu": "1", "limits.cpu": "1", "requests.memory": "512Mi", "limits.memory": "512Mi",
			"requests.ephemeral-storage": "2Gi", "limits.ephemeral-storage": "2Gi"}},
		{"gpu profile", gpu, map[corev1.ResourceName]string{
			"requests.cpu": "4", "limits.cpu": "4", "requests.memory": "8Gi", "limits.memory": "8Gi",
			"requests.ephemeral-storage": "20Gi", "limits.ephemeral-storage": "20Gi",
			"requests.nvidia.com/gpu": "1", "requests.hugepages-2Mi": "256Mi"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := Build(tw.MakeTestRun("r", "team").Obj(), tc.profile, "fb-team-r", Options{})
			if err != nil {
				t.Fatal(err)
			}
			hard := objs.Quota.Spec.Hard
			if len(hard) != len(tc.want) {
				t.Errorf("quota %v, want exactly %v", hard, tc.want)
			}
			for name, want := range tc.want {
				if q, ok := hard[name]; !ok || q.Cmp(resource.MustParse(want)) != 0 {
					t.Errorf("quota %s = %v, want %s", name, hard[name], want)
				}
			}
		})
	}
}

// TestTargetContainersFitTheProfile: in every sizing, every container is bounded in cpu, memory
// and ephemeral storage (itself or by its pod), the totals stay within the Profile, a component
// leaving a resource out shares what the others leave, and a target asking more than the Profile
// is refused before anything is made, in a namespace of its own or a shared one (no quota there).
func TestTargetContainersFitTheProfile(t *testing.T) {
	h1 := &v1alpha1.ProfileSpec{CPU: resource.MustParse("2"), Memory: resource.MustParse("4Gi"), EphemeralStorage: ptr.To(resource.MustParse("10Gi"))}
	web := v1alpha1.Component{Name: "web", Kind: v1alpha1.ComponentWebServer}
	db := v1alpha1.Component{Name: "db", Kind: v1alpha1.ComponentDatabase}
	for _, tc := range []struct {
		name   string
		tr     *v1alpha1.TestRun
		opts   Options
		limits map[string]map[corev1.ResourceName]string // container → resource → limit; nil = not checked
		err    string
	}{
		{"one machine, split", tw.MakeTestRun("r", "team").Components(web, db).Obj(), Options{}, map[string]map[corev1.ResourceName]string{
			"web": {"cpu": "1", "memory": "2Gi", "ephemeral-storage": "5Gi"}, "db": {"cpu": "1", "memory": "2Gi", "ephemeral-storage": "5Gi"}}, ""},
		{"one machine, pod-level", tw.MakeTestRun("r", "team").Components(web, db).Obj(), Options{PodLevelResources: true}, map[string]map[corev1.ResourceName]string{
			"web": {"ephemeral-storage": "5Gi"}, "db": {"ephemeral-storage": "5Gi"}}, ""},
		{"shares", perComponent(custom("a", nil, 25), custom("b", nil, 75)), Options{}, map[string]map[corev1.ResourceName]string{
			"a": {"cpu": "500m", "memory": "1Gi", "ephemeral-storage": "2560Mi"}, "b": {"cpu": "1500m", "memory": "3Gi", "ephemeral-storage": "7680Mi"}}, ""},
		{"resources leave cpu and disk out", perComponent(custom("a", nil, 50), custom("b", resources("memory", "1Gi"), 0), custom("c", resources("memory", "1Gi"), 0)), Options{},
			map[string]map[corev1.ResourceName]string{"b": {"cpu": "500m", "memory": "1Gi", "ephemeral-storage": "2560Mi"}, "c": {"cpu": "500m", "memory": "1Gi", "ephemeral-storage": "2560Mi"}}, ""},
		{"more cpu than the profile", perComponent(custom("a", resources("cpu", "2", "memory", "1Gi"), 0), custom("b", resources("cpu", "500m"), 0)), Options{}, nil,
			"asks for 2500m of cpu (component \"a\" 2, component \"b\" 500m), more than the profile's 2"},
		{"more cpu than the profile, shared", perComponent(custom("a", resources("cpu", "3"), 0)), Options{SharedNamespace: true}, nil,
			"asks for 3 of cpu"},
		{"more memory requested than the profile, shared", perComponent(custom("a", &corev1.ResourceRequirements{Requests: corev1.ResourceList{"memory": resource.MustParse("5Gi")}}, 0)),
			Options{SharedNamespace: true}, nil, "asks for 5Gi of memory"},
		{"more disk than the profile", perComponent(custom("a", resources("ephemeral-storage", "11Gi"), 0)), Options{}, nil, "asks for 11Gi of ephemeral-storage"},
		{"nothing left for an unstated resource", perComponent(custom("a", nil, 100), custom("b", resources("memory", "1Gi"), 0)), Options{}, nil,
			"component \"b\" states no cpu, and the other components take all of the profile's 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := Build(tc.tr, h1, "ns", tc.opts)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || IsNotPermitted(err) {
					t.Fatalf("got %v, want InvalidTarget saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			total := corev1.ResourceList{}
			for _, d := range objs.Deployments {
				pod := d.Spec.Template.Spec
				for _, c := range pod.Containers {
					for _, name := range standard {
						q, own := c.Resources.Limits[name]
						if r, ok := c.Resources.Requests[name]; own && (!ok || r.Cmp(q) > 0) {
							t.Errorf("container %s: %s request %v, limit %v", c.Name, name, r, q)
						}
						if !own && (pod.Resources == nil || name == corev1.ResourceEphemeralStorage) {
							t.Errorf("container %s has no %s bound: %+v", c.Name, name, c.Resources)
						}
						sum := total[name]
						sum.Add(q)
						total[name] = sum
					}
					for name, want := range tc.limits[c.Name] {
						if got := c.Resources.Limits[name]; got.Cmp(resource.MustParse(want)) != 0 {
							t.Errorf("container %s: %s limit %s, want %s", c.Name, name, got.String(), want)
						}
					}
				}
			}
			for _, name := range standard {
				q := total[name]
				if limit := profileAmount(h1, name); q.Cmp(limit) > 0 {
					t.Errorf("containers ask %s of %s, more than the profile's %s", q.String(), name, limit.String())
				}
			}
		})
	}
}

// TestExtendedResourcesOnlyAsGranted: a GPU or hugepages a component asks for are refused
// NotPermitted unless the Profile grants them, and then only up to the grant.
func TestExtendedResourcesOnlyAsGranted(t *testing.T) {
	plain := &v1alpha1.ProfileSpec{CPU: resource.MustParse("4"), Memory: resource.MustParse("8Gi")}
	gpu := plain.DeepCopy()
	gpu.ExtendedResources = map[corev1.ResourceName]resource.Quantity{"nvidia.com/gpu": resource.MustParse("1")}
	for _, tc := range []struct {
		name          string
		profile       *v1alpha1.ProfileSpec
		res           *corev1.ResourceRequirements
		opts          Options
		notPermitted  string
		invalidTarget string
	}{
		{"gpu not granted", plain, resources("cpu", "1", "nvidia.com/gpu", "1"), Options{}, `component "app" asks for nvidia.com/gpu, which the profile does not grant`, ""},
		{"gpu not granted, shared", plain, resources("nvidia.com/gpu", "1"), Options{SharedNamespace: true}, "nvidia.com/gpu", ""},
		{"hugepages not granted", plain, resources("memory", "1Gi", "hugepages-2Mi", "64Mi"), Options{}, "hugepages-2Mi", ""},
		{"gpu requested, not limited", plain, &corev1.ResourceRequirements{Requests: corev1.ResourceList{"example.com/fpga": resource.MustParse("1")}}, Options{}, "example.com/fpga", ""},
		{"gpu granted", gpu, resources("cpu", "1", "nvidia.com/gpu", "1"), Options{}, "", ""},
		{"more gpus than granted", gpu, resources("nvidia.com/gpu", "2"), Options{}, "", "asks for 2 of nvidia.com/gpu"},
		{"another extended resource than granted", gpu, resources("amd.com/gpu", "1"), Options{}, "amd.com/gpu", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Build(perComponent(custom("app", tc.res, 0)), tc.profile, "ns", tc.opts)
			switch {
			case tc.notPermitted != "":
				if !IsNotPermitted(err) || !strings.Contains(err.Error(), tc.notPermitted) || !strings.Contains(err.Error(), "extendedResources") {
					t.Errorf("got %v, want NotPermitted naming %s and the Profile's extendedResources", err, tc.notPermitted)
				}
			case tc.invalidTarget != "":
				if err == nil || IsNotPermitted(err) || !strings.Contains(err.Error(), tc.invalidTarget) {
					t.Errorf("got %v, want InvalidTarget saying %q", err, tc.invalidTarget)
				}
			case err != nil:
				t.Errorf("refused: %v", err)
			}
		})
	}
}

// TestSharedNamespaceRefusesSecretReads: in a shared target namespace a component may read no
// Secret (the other runs' copied pull Secrets are there by computable names); in a namespace of
// its own the only Secrets are its own.
func TestSharedNamespaceRefusesSecretReads(t *testing.T) {
	reader := custom("app", nil, 0)
	reader.Env = []corev1.EnvVar{{Name: "PLAIN", Value: "x"}, {Name: "TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: naming.SharedTargetObject("team-b", "load", "pull-registry")}, Key: ".dockerconfigjson"}}}}
	configReader := custom("app", nil, 0)
	configReader.Env = []corev1.EnvVar{{Name: "FIELD", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}
	for _, tc := range []struct {
		name   string
		comp   v1alpha1.Component
		shared bool
		says   []string // none = built
	}{
		{"secretKeyRef, shared", reader, true, []string{"spec.target.components[0].env[1]", "TOKEN", `reads Secret "fb-`, "env[].value", "--target-namespace"}},
		{"secretKeyRef, own namespace", reader, false, nil},
		{"fieldRef, shared", configReader, true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Build(tw.MakeTestRun("load", "team-a").Components(tc.comp).Obj(), c1, "fb-targets", Options{SharedNamespace: tc.shared})
			if (err != nil) != (len(tc.says) > 0) {
				t.Fatalf("got %v, want refused: %v", err, len(tc.says) > 0)
			}
			if err != nil && !IsNotPermitted(err) {
				t.Errorf("%v: want NotPermitted", err)
			}
			for _, s := range tc.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("%q lacks %q", err, s)
				}
			}
		})
	}
}

// TestTargetEgressIsDeniedButDNSAndItsOwn: the target's policy covers egress too: out only to
// the cluster DNS (port 53 of kube-system, UDP and TCP), the run's own target pods (every pod
// of its namespace, or in a shared one the run's) and the blocks spec.target.egress opts into.
// Ingress is unchanged.
func TestTargetEgressIsDeniedButDNSAndItsOwn(t *testing.T) {
	optIn := []v1alpha1.TargetEgress{{CIDR: "10.20.0.0/16", Ports: []v1alpha1.EgressPort{{Port: 443}, {Port: 5353, Protocol: corev1.ProtocolUDP}}}, {CIDR: "203.0.113.7/32"}}
	for _, tc := range []struct {
		name   string
		egress []v1alpha1.TargetEgress
		shared bool
	}{
		{"own namespace", nil, false},
		{"shared namespace", nil, true},
		{"opt-in", optIn, false},
		{"opt-in, shared", optIn, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := tw.MakeTestRun("load", "team-a").Obj()
			tr.Spec.Target.Egress = tc.egress
			objs, err := Build(tr, c1, "ns", Options{SharedNamespace: tc.shared})
			if err != nil {
				t.Fatal(err)
			}
			spec := objs.NetworkPolicy.Spec
			if len(spec.PolicyTypes) != 2 || spec.PolicyTypes[1] != networkingv1.PolicyTypeEgress || len(spec.Ingress) != 1 || len(spec.Ingress[0].From) != 2 {
				t.Fatalf("policy types %v, ingress %+v", spec.PolicyTypes, spec.Ingress)
			}
			if len(spec.Egress) != 2+len(tc.egress) {
				t.Fatalf("%d egress rules, want DNS, own pods and %d opted in: %+v", len(spec.Egress), len(tc.egress), spec.Egress)
			}
			dns := spec.Egress[0]
			if len(dns.To) != 1 || dns.To[0].NamespaceSelector.MatchLabels[corev1.LabelMetadataName] != "kube-system" || dns.To[0].PodSelector != nil || dns.To[0].IPBlock != nil ||
				len(dns.Ports) != 2 || *dns.Ports[0].Protocol != corev1.ProtocolUDP || dns.Ports[0].Port.IntVal != 53 || *dns.Ports[1].Protocol != corev1.ProtocolTCP || dns.Ports[1].Port.IntVal != 53 {
				t.Errorf("DNS rule %+v", dns)
			}
			own := spec.Egress[1]
			if len(own.To) != 1 || own.To[0].NamespaceSelector != nil || own.To[0].PodSelector == nil || len(own.Ports) != 0 {
				t.Fatalf("own rule %+v", own)
			}
			if sel := own.To[0].PodSelector.MatchLabels; tc.shared != (sel[naming.LabelTestRunNS] == "team-a" && sel[naming.LabelTestRun] == "load") || (!tc.shared && len(sel) != 0) {
				t.Errorf("own pods selected by %v (shared %v): every pod of its own namespace, or the run's in a shared one", sel, tc.shared)
			}
			for i, e := range tc.egress {
				rule := spec.Egress[2+i]
				if len(rule.To) != 1 || rule.To[0].IPBlock == nil || rule.To[0].IPBlock.CIDR != e.CIDR || len(rule.Ports) != len(e.Ports) {
					t.Fatalf("opt-in %d: %+v", i, rule)
				}
				for j, p := range e.Ports {
					want := p.Protocol
					if want == "" {
						want = corev1.ProtocolTCP
					}
					if rule.Ports[j].Port.IntVal != p.Port || *rule.Ports[j].Protocol != want {
						t.Errorf("opt-in %d port %d: %+v", i, j, rule.Ports[j])
					}
				}
			}
		})
	}

	// A block admission lets by but the API server's NetworkPolicy validation refuses.
	tr := tw.MakeTestRun("load", "team-a").Obj()
	tr.Spec.Target.Egress = []v1alpha1.TargetEgress{{CIDR: "::ffff:10.0.0.0/104"}}
	if _, err := Build(tr, c1, "ns", Options{}); err == nil || IsNotPermitted(err) || !strings.Contains(err.Error(), "spec.target.egress[0].cidr") {
		t.Errorf("an IPv4-mapped block: %v, want InvalidTarget naming the field", err)
	}
}
