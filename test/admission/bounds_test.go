package admission

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
)

// TestHotLoopsAndUnwritableStatusAreRefused: a sample interval below 1s (each sample reads the
// kubelet and writes a ConfigMap and status) and a threshold key longer than status holds are
// refused at admission, naming the field; 1s and 256 characters are accepted.
func TestHotLoopsAndUnwritableStatusAreRefused(t *testing.T) {
	stability := func(interval v1alpha1.Duration) *v1alpha1.TestRun {
		return tw.MakeTestRun("sampled", ns).Type(v1alpha1.TestTypeStability).Devices(10, "1s").Duration("1h").
			Stability(&v1alpha1.StabilitySpec{SampleInterval: interval}).Obj()
	}
	key := func(n int) *v1alpha1.TestRun {
		return tw.MakeTestRun("keyed", ns).Threshold("m"+strings.Repeat("x", n-1), "count>0").Obj()
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		obj  *v1alpha1.TestRun
		want []string // empty: accepted
	}{
		{"sampleInterval 1ms", stability("1ms"), []string{"spec.stability.sampleInterval", "at least 1s"}},
		{"sampleInterval 999ms", stability("999ms"), []string{"spec.stability.sampleInterval", "at least 1s"}},
		{"sampleInterval 0.5s", stability("0.5s"), []string{"spec.stability.sampleInterval", "at least 1s"}},
		{"sampleInterval 1s", stability("1s"), nil},
		{"sampleInterval 1m", stability("1m"), nil},
		{"threshold key of 257 characters", key(257), []string{"spec.thresholds", "at most 256 characters"}},
		{"threshold key of 256 characters", key(256), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := env.Client.Create(ctx, tc.obj)
			if err == nil {
				_ = env.Client.Delete(ctx, tc.obj)
			}
			switch {
			case len(tc.want) == 0 && err != nil:
				t.Fatalf("refused: %v", err)
			case len(tc.want) == 0:
			case err == nil:
				t.Fatalf("accepted, want a refusal naming %q", tc.want)
			case !apierrors.IsInvalid(err):
				t.Fatalf("want an Invalid (422) refusal, got %v", err)
			default:
				for _, w := range tc.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("refusal does not contain %q:\n%v", w, err)
					}
				}
			}
		})
	}
}
