package testwrappers

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// WantConditions checks conditions as "Status/Reason" by type; every one carries the
// generation it describes.
func WantConditions(t *testing.T, run *v1alpha1.TestRun, want map[string]string) {
	t.Helper()
	for typ, w := range want {
		c := meta.FindStatusCondition(run.Status.Conditions, typ)
		if c == nil {
			t.Errorf("no condition %s (want %s)", typ, w)
			continue
		}
		if got := string(c.Status) + "/" + c.Reason; got != w {
			t.Errorf("condition %s = %s (%s), want %s", typ, got, c.Message, w)
		}
	}
	for _, c := range run.Status.Conditions {
		if c.ObservedGeneration != run.Generation {
			t.Errorf("condition %s observedGeneration %d, generation %d", c.Type, c.ObservedGeneration, run.Generation)
		}
	}
}

// KstatusOf is what kstatus (Flux, cli-utils, kpt) computes for the TestRun.
func KstatusOf(t *testing.T, run *v1alpha1.TestRun) status.Status {
	t.Helper()
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(run)
	if err != nil {
		t.Fatal(err)
	}
	res, err := status.Compute(&unstructured.Unstructured{Object: obj})
	if err != nil {
		t.Fatal(err)
	}
	return res.Status
}
