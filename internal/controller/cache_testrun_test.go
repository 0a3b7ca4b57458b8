package controller

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// TestSlimTestRunKeepsWhatListsRead: what a tenant sizes is dropped; what the cache's readers
// use (profile, type, load, parallelism, external target, baseline, status, labels) is kept;
// annotations become a hash that changes with them.
func TestSlimTestRunKeepsWhatListsRead(t *testing.T) {
	big := strings.Repeat("x", 64<<10)
	run := func() *v1alpha1.TestRun {
		return &v1alpha1.TestRun{
			Spec: v1alpha1.TestRunSpec{
				Type: v1alpha1.TestTypeStability, Profile: "c1", Parallelism: ptr.To(intstr.FromInt32(3)),
				Load:       &v1alpha1.LoadSpec{Devices: ptr.To[int32](100)},
				Script:     v1alpha1.ScriptSpec{Inline: big},
				Args:       []string{big},
				Runner:     &v1alpha1.RunnerSpec{Image: big},
				Target:     v1alpha1.TargetSpec{External: &v1alpha1.ExternalTarget{}, Components: []v1alpha1.Component{{Name: big}}},
				Baseline:   &v1alpha1.BaselineSpec{Name: "base"},
				Stability:  &v1alpha1.StabilitySpec{LogPatterns: []v1alpha1.LogPattern{{Name: "p", Regex: big}}},
				Thresholds: map[string]v1alpha1.ThresholdList{big: nil},
			},
			Status: v1alpha1.TestRunStatus{Phase: v1alpha1.PhaseRunning},
		}
	}
	hashes := map[string]bool{}
	for _, note := range []string{"a", "b"} {
		r := run()
		r.Labels = map[string]string{"team": "a"}
		r.Annotations = map[string]string{"note": note + big}
		out, err := SlimTestRun(r)
		if err != nil {
			t.Fatal(err)
		}
		got := out.(*v1alpha1.TestRun)
		s := got.Spec
		if s.Script.Inline != "" || s.Args != nil || s.Runner != nil || s.Target.Components != nil || s.Thresholds != nil || len(s.Stability.LogPatterns) != 0 {
			t.Errorf("tenant-sized fields kept: %+v", s)
		}
		if s.Type != v1alpha1.TestTypeStability || s.Profile != "c1" || s.Parallelism.IntValue() != 3 || *s.Load.Devices != 100 ||
			s.Target.External == nil || s.Baseline.Name != "base" || got.Status.Phase != v1alpha1.PhaseRunning || got.Labels["team"] != "a" {
			t.Errorf("a field the lists read was dropped: %+v", got)
		}
		if len(got.Annotations) != 1 || len(got.Annotations[annotationsHash]) != 64 {
			t.Errorf("annotations %v, want one hash", got.Annotations)
		}
		hashes[got.Annotations[annotationsHash]] = true
	}
	if len(hashes) != 2 {
		t.Error("different annotations hash alike: a change would not wake the run")
	}
}
