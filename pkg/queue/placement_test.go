package queue

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/queue/place"
)

func flavor(name string, labels map[string]string, tolerations ...corev1.Toleration) *kueue.ResourceFlavor {
	return &kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: kueue.ResourceFlavorSpec{NodeLabels: labels, Tolerations: tolerations}}
}

// admittedWorkload is a run's Workload (runners selecting own, and the target) admitted with
// the flavors given per pod set and resource.
func admittedWorkload(own map[string]string, assigned map[string]map[corev1.ResourceName]string) *kueue.Workload {
	wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Name: "testrun-load"}, Spec: kueue.WorkloadSpec{PodSets: []kueue.PodSet{
		{Name: PodSetTarget, Count: 1},
		{Name: PodSetRunners, Count: 3, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{NodeSelector: own}}},
	}}}
	adm := &kueue.Admission{ClusterQueue: "cq"}
	for _, ps := range []string{PodSetTarget, PodSetRunners} {
		if assigned[ps] == nil {
			continue
		}
		a := kueue.PodSetAssignment{Name: kueue.PodSetReference(ps), Flavors: map[corev1.ResourceName]kueue.ResourceFlavorReference{}}
		for res, f := range assigned[ps] {
			a.Flavors[res] = kueue.ResourceFlavorReference(f)
		}
		adm.PodSetAssignments = append(adm.PodSetAssignments, a)
	}
	wl.Status.Admission = adm
	return wl
}

var noSchedule = corev1.Toleration{Key: "spot", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}

// TestAdmission: each pod set gets the node labels and tolerations of the flavors Kueue
// assigned it, merged once in name order, as Kueue's job framework puts them on a Job; what
// cannot be put on the pods is refused with a reason naming the flavor and the field.
func TestAdmission(t *testing.T) {
	spot := flavor("spot", map[string]string{"pool": "spot"}, noSchedule)
	gpu := flavor("gpu", map[string]string{"accel": "a100"}, noSchedule,
		corev1.Toleration{Key: "gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](30)})
	other := flavor("zz-other", map[string]string{"pool": "on-demand"})
	all := map[string]*kueue.ResourceFlavor{"spot": spot, "gpu": gpu, "zz-other": other}
	both := map[corev1.ResourceName]string{corev1.ResourceCPU: "spot", corev1.ResourceMemory: "spot", "nvidia.com/gpu": "gpu"}

	wl := admittedWorkload(map[string]string{"pool": "spot"}, map[string]map[corev1.ResourceName]string{
		PodSetTarget: {corev1.ResourceCPU: "zz-other"}, PodSetRunners: both})
	if got := Flavors(wl); !reflect.DeepEqual(got, []string{"gpu", "spot", "zz-other"}) {
		t.Errorf("Flavors = %v, want each once, sorted", got)
	}
	adm, err := Admission(wl, all)
	if err != nil {
		t.Fatal(err)
	}
	want := &v1alpha1.QueueAdmission{ClusterQueue: "cq", PodSets: []v1alpha1.AdmittedPodSet{
		{Name: PodSetTarget, Flavors: []string{"zz-other"}, NodeSelector: map[string]string{"pool": "on-demand"}},
		{Name: PodSetRunners, Flavors: []string{"gpu", "spot"}, NodeSelector: map[string]string{"accel": "a100", "pool": "spot"},
			Tolerations: []v1alpha1.SnapshotToleration{
				{Key: "spot", Operator: "Exists", Effect: "NoSchedule"},
				{Key: "gpu", Operator: "Exists", Effect: "NoExecute", TolerationSeconds: ptr.To[int64](30)},
			}},
	}}
	if !reflect.DeepEqual(adm, want) {
		t.Errorf("Admission =\n%+v\nwant\n%+v", adm, want)
	}
	if got := place.PodSet(adm, PodSetPreflight); got != nil {
		t.Errorf("a pod set Kueue assigned nothing has placement %+v", got)
	}

	many := map[string]string{}
	for i := range MaxNodeLabels + 1 {
		many["k"+strings.Repeat("x", i)] = "v"
	}
	for _, tc := range []struct {
		name    string
		wl      *kueue.Workload
		flavors map[string]*kueue.ResourceFlavor
		says    []string
	}{
		{"the runners' own nodeSelector contradicts the flavor",
			admittedWorkload(map[string]string{"pool": "reserved"}, map[string]map[corev1.ResourceName]string{PodSetRunners: both}), all,
			[]string{"ResourceFlavor spot", "pool=spot", "pool=reserved", "spec.runner.nodeSelector"}},
		{"the run's own value is printed safely",
			admittedWorkload(map[string]string{"pool": "\x1b]0;owned\a" + strings.Repeat("x", 100)}, map[string]map[corev1.ResourceName]string{PodSetRunners: both}), all,
			[]string{`pool=\x1b]0;owned\x07xxx`, "…"}},
		{"two flavors contradict each other",
			admittedWorkload(nil, map[string]map[corev1.ResourceName]string{PodSetRunners: {corev1.ResourceCPU: "spot", corev1.ResourceMemory: "zz-other"}}), all,
			[]string{"spot and zz-other", "node label pool"}},
		{"a flavor is gone",
			admittedWorkload(nil, map[string]map[corev1.ResourceName]string{PodSetRunners: both}), map[string]*kueue.ResourceFlavor{"spot": spot},
			[]string{"ResourceFlavor gpu", "not found"}},
		{"more node labels than a run keeps",
			admittedWorkload(nil, map[string]map[corev1.ResourceName]string{PodSetRunners: {corev1.ResourceCPU: "big"}}),
			map[string]*kueue.ResourceFlavor{"big": flavor("big", many)}, []string{"33 node labels"}},
		{"a pod set the Workload does not have",
			func() *kueue.Workload {
				wl := admittedWorkload(nil, map[string]map[corev1.ResourceName]string{PodSetRunners: both})
				wl.Status.Admission.PodSetAssignments[0].Name = "extra"
				return wl
			}(), all, []string{`pod set "extra"`}},
	} {
		if _, err := Admission(tc.wl, tc.flavors); err == nil {
			t.Errorf("%s: admitted", tc.name)
		} else {
			for _, s := range tc.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("%s: %q does not say %q", tc.name, err, s)
				}
			}
		}
	}
}
