package runners

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
)

// TestAdmittedFlavorReachesRunnersAndPreflight: the node labels and tolerations of the Kueue
// flavors a pod set was admitted on are on the pods built with it (runners, replacements and
// the pre-flight), beside the run's own, which are not changed.
func TestAdmittedFlavorReachesRunnersAndPreflight(t *testing.T) {
	tr := tw.MakeTestRun("q", "ns").Obj()
	tr.Spec.Runner = &v1alpha1.RunnerSpec{NodeSelector: map[string]string{"zone": "a"},
		Tolerations: []corev1.Toleration{{Key: "load", Operator: corev1.TolerationOpExists}}}
	spot := &v1alpha1.AdmittedPodSet{Name: "runners", NodeSelector: map[string]string{"pool": "spot"},
		Tolerations: []v1alpha1.SnapshotToleration{{Key: "spot", Operator: "Exists", Effect: "NoSchedule"}}}
	opts := JobOptions{Admitted: spot}
	for name, pod := range map[string]corev1.PodSpec{
		"runner":      Job(tr, 1, 2, opts).Spec.Template.Spec,
		"replacement": ReplacementJob(tr, 1, 2, 1, "remaining", opts).Spec.Template.Spec,
		"pre-flight":  PreflightJob(tr, opts).Spec.Template.Spec,
	} {
		if pod.NodeSelector["pool"] != "spot" || pod.NodeSelector["zone"] != "a" {
			t.Errorf("%s: nodeSelector %v, want the run's zone=a and the flavor's pool=spot", name, pod.NodeSelector)
		}
		if len(pod.Tolerations) != 2 || pod.Tolerations[0].Key != "load" || pod.Tolerations[1].Key != "spot" ||
			pod.Tolerations[1].Effect != corev1.TaintEffectNoSchedule {
			t.Errorf("%s: tolerations %+v, want the run's and the flavor's", name, pod.Tolerations)
		}
	}
	if len(tr.Spec.Runner.NodeSelector) != 1 || len(tr.Spec.Runner.Tolerations) != 1 {
		t.Errorf("building the Jobs changed the TestRun's runner placement: %+v", tr.Spec.Runner)
	}
	if pod := Job(tr, 0, 2, JobOptions{}).Spec.Template.Spec; len(pod.NodeSelector) != 1 || len(pod.Tolerations) != 1 {
		t.Errorf("without an admission the runner has %v %+v, want only the run's own", pod.NodeSelector, pod.Tolerations)
	}
}
