package testrun

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
)

// TestConditionsTellGitOpsTheTruth: a run whose threshold fails is Complete but not Ready and
// Stalled, which kstatus reads as Failed; a passing one is Ready and Complete (kstatus Current);
// one in progress is Reconciling (kstatus InProgress).
func TestConditionsTellGitOpsTheTruth(t *testing.T) {
	for _, tc := range []struct {
		name, threshold string
		verdict         v1alpha1.Verdict
		want            map[string]string
		kstatus         status.Status
	}{
		{name: "passes", threshold: "p(95)<200", verdict: v1alpha1.VerdictPassed, kstatus: status.CurrentStatus,
			want: map[string]string{
				v1alpha1.ConditionReady: "True/" + v1alpha1.ReasonPassed, v1alpha1.ConditionComplete: "True/" + v1alpha1.ReasonCompleted,
				v1alpha1.ConditionStalled: "False/" + v1alpha1.ReasonPassed, v1alpha1.ConditionReconciling: "False/" + v1alpha1.ReasonCompleted,
			}},
		// The runners measured 10–14 ms: p(95)<5 fails on the merged data.
		{name: "fails", threshold: "p(95)<5", verdict: v1alpha1.VerdictFailed, kstatus: status.FailedStatus,
			want: map[string]string{
				v1alpha1.ConditionReady: "False/" + v1alpha1.ReasonFailed, v1alpha1.ConditionComplete: "True/" + v1alpha1.ReasonCompleted,
				v1alpha1.ConditionStalled: "True/" + v1alpha1.ReasonVerdictFailed, v1alpha1.ConditionReconciling: "False/" + v1alpha1.ReasonCompleted,
				v1alpha1.ConditionThresholdsPassed: "False/ThresholdsFailed",
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := setup(t)
			run := tw.MakeTestRun("gitops-"+tc.name, ns).Parallelism(2).Devices(20, "1s").Duration("5s").
				Threshold("http_req_duration", v1alpha1.ThresholdExpression(tc.threshold)).Obj()
			k, pods := startRunning(t, run, 2)
			got := &v1alpha1.TestRun{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(run), got); err != nil {
				t.Fatal(err)
			}
			tw.WantConditions(t, got, map[string]string{
				v1alpha1.ConditionReady: "False/" + v1alpha1.ReasonInProgress, v1alpha1.ConditionReconciling: "True/" + v1alpha1.ReasonRunning,
				v1alpha1.ConditionComplete: "False/" + v1alpha1.ReasonInProgress, v1alpha1.ConditionStalled: "False/" + v1alpha1.ReasonInProgress,
			})
			if s := tw.KstatusOf(t, got); s != status.InProgressStatus {
				t.Errorf("kstatus while running = %s, want InProgress", s)
			}

			start := time.Now()
			for _, pod := range pods {
				logs.set(pod, load(pod, start), nil)
				k.Finish(pod, 0, "Completed")
			}
			got = waitPhase(t, run, v1alpha1.PhaseSucceeded, v1alpha1.ReasonCompleted)
			if got.Status.Verdict != tc.verdict {
				t.Fatalf("verdict %s, want %s: %s", got.Status.Verdict, tc.verdict, got.Status.Message)
			}
			tw.WantConditions(t, got, tc.want)
			if s := tw.KstatusOf(t, got); s != tc.kstatus {
				t.Errorf("kstatus = %s, want %s", s, tc.kstatus)
			}
		})
	}
}

// TestRunnerExit99DoesNotStopItsSiblings: k6 exits 99 when the share one runner measured
// failed a threshold. That is no runner failure: the others run on, and the verdict comes from
// the merged data (here it passes).
func TestRunnerExit99DoesNotStopItsSiblings(t *testing.T) {
	ns := setup(t)
	run := tw.MakeTestRun("exit99", ns).Parallelism(3).Devices(30, "1s").Duration("1m").
		Threshold("http_req_duration", "p(95)<200").Obj()
	k, pods := startRunning(t, run, 3)

	start := time.Now()
	logs.set(pods[0], load(pods[0], start), nil)
	k.Finish(pods[0], decide.ExitThresholdsFailed, "Error")
	eventually(t, "the run to count the runner that exited 99 as succeeded", func() error {
		got := &v1alpha1.TestRun{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(run), got); err != nil {
			return err
		}
		if r := got.Status.Runners; r == nil || r.Succeeded != 1 || r.Running != 2 {
			return fmt.Errorf("runners %+v", got.Status.Runners)
		}
		if got.Status.Phase != v1alpha1.PhaseRunning || got.Status.Reason != v1alpha1.ReasonRunning {
			return fmt.Errorf("phase %s reason %s: %s", got.Status.Phase, got.Status.Reason, got.Status.Message)
		}
		return nil
	})
	for _, pod := range pods[1:] {
		if n := runner.stops(pod); n != 0 {
			t.Fatalf("runner %s was stopped %d times after its sibling exited 99", pod.Name, n)
		}
	}
	for _, pod := range pods[1:] {
		logs.set(pod, load(pod, start), nil)
		k.Finish(pod, 0, "Completed")
	}
	got := waitPhase(t, run, v1alpha1.PhaseSucceeded, v1alpha1.ReasonCompleted)
	if got.Status.Verdict != v1alpha1.VerdictPassed || got.Status.Results.Requests.Total != 300 || got.Status.Results.Partial {
		t.Errorf("verdict %s, results %+v partial %v: %s", got.Status.Verdict, got.Status.Results.Requests, got.Status.Results.Partial, got.Status.Message)
	}
	if !strings.Contains(got.Status.Message, "verdict PASSED") {
		t.Errorf("message %q", got.Status.Message)
	}
	tw.WantConditions(t, got, map[string]string{v1alpha1.ConditionReady: "True/" + v1alpha1.ReasonPassed})
}
