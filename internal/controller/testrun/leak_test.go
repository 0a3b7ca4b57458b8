package testrun

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
)

// TestLeakVerdictFromTheTrend: a stability run with spec.stability.leak.failOn: leak whose
// target grows 10 MiB at every sample ends FAILED naming the slope, with status.target.memory.trend
// leak; the same run with memory that only wobbles PASSES with the trend insufficient (a fit of
// seconds has no power to call memory stable). The trend is fitted to the points the results
// ConfigMap keeps, after the given warm-up.
func TestLeakVerdictFromTheTrend(t *testing.T) {
	for _, tc := range []struct {
		name    string
		step    func(i int) uint64 // RSS MiB at the i-th sample
		trend   string
		verdict v1alpha1.Verdict
	}{
		{"leaking", func(i int) uint64 { return 44 + 10*uint64(i) }, "leak", v1alpha1.VerdictFailed},
		{"wobbling", func(i int) uint64 { return 44 + 2*uint64(i%2) }, "insufficient", v1alpha1.VerdictPassed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := setup(t)
			run := tw.MakeTestRun("leak-"+tc.name, ns).Type(v1alpha1.TestTypeStability).Devices(1000, "200s").Duration("60s").
				Stability(&v1alpha1.StabilitySpec{SampleInterval: "1s",
					Leak: &v1alpha1.LeakSpec{WarmUp: "1s", Horizon: "24h", FailOn: "leak"}}).Obj()
			create(t, run)
			k := newKubelet(t, run)
			stats.set(k.targetNS(), tc.step(0), 10)
			k.targetReady()
			pods := k.runnersReady(1)
			waitPhase(t, run, v1alpha1.PhaseRunning, "")
			// Each sample the controller takes sees the next value: wait for it, then change it.
			got := &v1alpha1.TestRun{}
			seen := int32(0)
			eventually(t, "14 target samples", func() error {
				if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(run), got); err != nil {
					return err
				}
				if tu := got.Status.Target; tu != nil && tu.Samples > seen {
					seen = tu.Samples
					stats.set(k.targetNS(), tc.step(int(seen)), 10)
				}
				if seen < 14 {
					return fmt.Errorf("%d samples", seen)
				}
				return nil
			})
			logs.set(pods[0], load(pods[0], time.Now()), nil)
			k.Finish(pods[0], 0, "Completed")
			got = waitPhase(t, run, v1alpha1.PhaseSucceeded, "")

			tr := got.Status.Target.Memory.Trend
			if tr == nil {
				t.Fatalf("no trend: %+v", got.Status.Target.Memory)
			}
			t.Logf("trend %+v; verdict %s: %s", *tr, got.Status.Verdict, got.Status.Message)
			if tr.Verdict != tc.trend || tr.Samples < 10 || tr.WarmUpSeconds != 1 || tr.Horizon != "24h0m0s" {
				t.Errorf("trend %+v, want %s over at least 10 samples after the 1s warm-up", *tr, tc.trend)
			}
			if got.Status.Verdict != tc.verdict {
				t.Errorf("verdict %s, want %s: %s", got.Status.Verdict, tc.verdict, got.Status.Message)
			}
			if tc.trend == "leak" && (!strings.Contains(got.Status.Message, "target memory leaks "+tr.SlopeMiBPerHour+" MiB/h") || tr.ProjectedFullIn == "") {
				t.Errorf("the failure does not name the slope %s or the projection %q: %s", tr.SlopeMiBPerHour, tr.ProjectedFullIn, got.Status.Message)
			}
		})
	}
}
