package target

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/naming"
)

// sum adds up one side (requests or limits) of every container's resources, and of the pod's.
func sum(pods []*corev1.PodSpec, pick func(*corev1.ResourceRequirements) corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	add := func(l corev1.ResourceList) {
		for name, q := range l {
			s := out[name]
			s.Add(q)
			out[name] = s
		}
	}
	for _, p := range pods {
		if p.Resources != nil {
			add(pick(p.Resources))
		}
		for i := range p.Containers {
			add(pick(&p.Containers[i].Resources))
		}
	}
	return out
}

func requests(r *corev1.ResourceRequirements) corev1.ResourceList { return r.Requests }
func limits(r *corev1.ResourceRequirements) corev1.ResourceList   { return r.Limits }

func equalLists(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for name, q := range a {
		if other, ok := b[name]; !ok || q.Cmp(other) != 0 {
			return false
		}
	}
	return true
}

// TestChargeCarriesTheTargetsTotal: the charge pod asks, in requests and in limits, exactly
// what the target's pods ask, pod-level budgets included (split among the containers, to the
// last millicore and byte), with one container per target container.
func TestChargeCarriesTheTargetsTotal(t *testing.T) {
	web := v1alpha1.Component{Name: "web", Kind: v1alpha1.ComponentWebServer}
	db := v1alpha1.Component{Name: "db", Kind: v1alpha1.ComponentDatabase}
	halfWeb := v1alpha1.Component{Name: "web", Kind: v1alpha1.ComponentWebServer, Share: ptr.To[int32](50)}
	app := v1alpha1.Component{Name: "app", Kind: v1alpha1.ComponentCustom, Image: "app:dev", Ports: []corev1.ContainerPort{{ContainerPort: 8080}},
		Resources: &corev1.ResourceRequirements{Limits: corev1.ResourceList{"cpu": resource.MustParse("1"), "example.com/gpu": resource.MustParse("1")}}}
	gpu := &v1alpha1.ProfileSpec{CPU: resource.MustParse("2"), Memory: resource.MustParse("1Gi"),
		ExtendedResources: map[corev1.ResourceName]resource.Quantity{"example.com/gpu": resource.MustParse("1")}}
	odd := &v1alpha1.ProfileSpec{CPU: resource.MustParse("2"), Memory: resource.MustParse("1000001")}
	for _, tc := range []struct {
		name       string
		run        *v1alpha1.TestRun
		profile    *v1alpha1.ProfileSpec
		podLevel   bool
		containers int
		wantCPU    string
	}{
		{"one machine, pod-level budget split unevenly", tw.MakeTestRun("a", "team-a").Components(web, db, app).Obj(), odd, true, 3, "2"},
		{"one machine, the profile split among containers", tw.MakeTestRun("b", "team-a").Components(web, db).Obj(), odd, false, 2, "2"},
		{"a pod per component, a GPU granted", tw.MakeTestRun("c", "team-a").Sizing(v1alpha1.SizingPerComponent).Components(halfWeb, app).Obj(), gpu, false, 2, "2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := Build(tc.run, tc.profile, "fb-x", Options{PodLevelResources: tc.podLevel})
			if err != nil {
				t.Fatal(err)
			}
			var target []*corev1.PodSpec
			for _, d := range objs.Deployments {
				target = append(target, &d.Spec.Template.Spec)
			}
			pod := Charge(tc.run, objs, "fleetbench/runner:test")
			if len(pod.Spec.Containers) != tc.containers {
				t.Fatalf("%d containers, want one per target container (%d)", len(pod.Spec.Containers), tc.containers)
			}
			if pod.Spec.Resources != nil {
				t.Errorf("the charge has pod-level resources %v: a cluster that drops them would charge nothing", pod.Spec.Resources)
			}
			for side, pick := range map[string]func(*corev1.ResourceRequirements) corev1.ResourceList{"requests": requests, "limits": limits} {
				got, want := sum([]*corev1.PodSpec{&pod.Spec}, pick), sum(target, pick)
				if !equalLists(got, want) {
					t.Errorf("%s: charge %v, target %v", side, got, want)
				}
			}
			if cpu := sum([]*corev1.PodSpec{&pod.Spec}, limits)[corev1.ResourceCPU]; cpu.Cmp(resource.MustParse(tc.wantCPU)) != 0 {
				t.Errorf("cpu limits add up to %s, want the profile's %s", cpu.String(), tc.wantCPU)
			}
		})
	}
}

// TestChargeIsNeverScheduledAndRestricted: the charge pod lives in the TestRun's namespace under
// its name and labels, is gated for good, gets no token, and keeps to the restricted Pod Security
// level in the runner's image; its total reads as the quota counts it.
func TestChargeIsNeverScheduledAndRestricted(t *testing.T) {
	run := tw.MakeTestRun("load", "team-a").Obj()
	objs, err := Build(run, c1, "fb-x", Options{PodLevelResources: true})
	if err != nil {
		t.Fatal(err)
	}
	pod := Charge(run, objs, "fleetbench/runner:test")
	if pod.Namespace != "team-a" || pod.Name != naming.TargetChargePod("load") || pod.Labels[naming.LabelRole] != naming.RoleTargetCharge ||
		pod.Labels[naming.LabelTestRun] != "load" || pod.Labels[naming.LabelTestRunNS] != "team-a" {
		t.Errorf("pod %s/%s labels %v", pod.Namespace, pod.Name, pod.Labels)
	}
	if g := pod.Spec.SchedulingGates; len(g) != 1 || g[0].Name != ChargeGate {
		t.Errorf("scheduling gates %v, want only %s", g, ChargeGate)
	}
	if pod.Spec.ActiveDeadlineSeconds != nil {
		t.Error("a deadline puts the pod in the Terminating quota scope, where the target's pods are not")
	}
	sc := pod.Spec.SecurityContext
	if !ptr.Deref(sc.RunAsNonRoot, false) || sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault ||
		ptr.Deref(pod.Spec.AutomountServiceAccountToken, true) {
		t.Errorf("pod security %+v, token %v", sc, pod.Spec.AutomountServiceAccountToken)
	}
	for _, c := range pod.Spec.Containers {
		csc := c.SecurityContext
		if c.Image != "fleetbench/runner:test" || ptr.Deref(csc.AllowPrivilegeEscalation, true) || len(csc.Capabilities.Drop) != 1 ||
			csc.Capabilities.Drop[0] != "ALL" || len(csc.Capabilities.Add) != 0 {
			t.Errorf("container %s: image %s, security %+v", c.Name, c.Image, csc)
		}
	}
	if got, want := ChargeTotal(pod), "requests cpu 1, ephemeral-storage 2Gi, memory 512Mi; limits cpu 1, ephemeral-storage 2Gi, memory 512Mi"; got != want {
		t.Errorf("ChargeTotal = %q, want %q", got, want)
	}
}
