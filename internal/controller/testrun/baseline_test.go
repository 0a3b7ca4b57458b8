package testrun

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/controller/testrun/admit"
	"fleetbench.dev/fleetbench/internal/controller/testrun/runenv"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/judge/compare"
	"fleetbench.dev/fleetbench/pkg/naming"
)

// compared is a one-runner TestRun with labels and a baseline.
func compared(name, ns string, labels map[string]string, baseline *v1alpha1.BaselineSpec) *v1alpha1.TestRun {
	run := tw.MakeTestRun(name, ns).Parallelism(1).Devices(10, "10s").Duration("10s").Obj()
	run.Labels, run.Spec.Baseline = labels, baseline
	return run
}

// runThrough plays a run to its end: its one runner measured requests spread evenly over 300 s
// (30 windows of 10 s, the same every window: clear-cut for any test of noise).
func runThrough(t *testing.T, run *v1alpha1.TestRun, requests int) *v1alpha1.TestRun {
	t.Helper()
	k, pods := startRunning(t, run, 1)
	start := time.Now().Add(-300 * time.Second)
	logs.set(pods[0], tw.EnvelopeLog(tw.RunnerLoad{Runner: pods[0].Name, Requests: requests, Start: start, Duration: 300 * time.Second, CPUSeconds: 0.5}), nil)
	k.Finish(pods[0], 0, "Completed")
	return waitPhase(t, run, v1alpha1.PhaseSucceeded, v1alpha1.ReasonCompleted)
}

// TestBaselineByNameRegressed: a run with half its baseline's throughput is REGRESSED, Ready
// False, Stalled True VerdictRegressed, with an event naming the metric; its comparison is
// written once and not again on later reconciles; a run like its baseline PASSED.
func TestBaselineByNameRegressed(t *testing.T) {
	ns := setup(t)
	base := runThrough(t, compared("base", ns, nil, nil), 3000)
	if base.Status.Verdict != v1alpha1.VerdictPassed || base.Status.Comparison != nil {
		t.Fatalf("baseline: verdict %s comparison %+v", base.Status.Verdict, base.Status.Comparison)
	}
	// The same load: its even windows leave a row the test cannot judge (latency's percentile,
	// constant but for rounding, reads as autocorrelated), which passes only as a stated policy.
	same := runThrough(t, compared("same", ns, nil, &v1alpha1.BaselineSpec{Name: "base", OnUndecided: v1alpha1.BaselineUndecidedPass}), 3000)
	if c := same.Status.Comparison; same.Status.Verdict != v1alpha1.VerdictPassed || c == nil || c.Decision == v1alpha1.ComparisonRegressed ||
		c.Baseline == nil || c.Baseline.Name != "base" || c.Baseline.UID != string(base.UID) || c.Baseline.Source != "TestRun" {
		t.Fatalf("same load: verdict %s comparison %+v", same.Status.Verdict, same.Status.Comparison)
	}
	if undecided := compare.Undecided(*same.Status.Comparison); len(undecided) > 0 && !strings.Contains(same.Status.Message, "onUndecided: Pass") {
		t.Errorf("same load with %v not judged: message %q does not say the policy passed it", undecided, same.Status.Message)
	}

	slow := runThrough(t, compared("slow", ns, nil, &v1alpha1.BaselineSpec{Name: "base"}), 1500)
	c := slow.Status.Comparison
	if slow.Status.Verdict != v1alpha1.VerdictRegressed || c == nil || c.Decision != v1alpha1.ComparisonRegressed || !strings.Contains(c.Worst, "throughput") {
		t.Fatalf("half the throughput: verdict %s comparison %+v", slow.Status.Verdict, c)
	}
	ready, stalled := meta.FindStatusCondition(slow.Status.Conditions, v1alpha1.ConditionReady), meta.FindStatusCondition(slow.Status.Conditions, v1alpha1.ConditionStalled)
	if ready.Status != metav1.ConditionFalse || ready.Reason != v1alpha1.ReasonRegressed || stalled.Status != metav1.ConditionTrue || stalled.Reason != v1alpha1.ReasonVerdictRegressed {
		t.Errorf("Ready %s/%s Stalled %s/%s", ready.Status, ready.Reason, stalled.Status, stalled.Reason)
	}
	waitEvent(t, ns, "Regressed", "base", "throughput")

	// Later reconciles (an annotation wakes the run) leave the comparison as written.
	for i := 0; i < 3; i++ {
		patch := client.MergeFrom(slow.DeepCopy())
		if slow.Annotations == nil {
			slow.Annotations = map[string]string{}
		}
		slow.Annotations["test.fleetbench.dev/poke"] = fmt.Sprint(i)
		if err := env.Client.Patch(ctx, slow, patch); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(2 * time.Second) // the reconciles the pokes woke are done (nothing to wait on: none writes)
	var after v1alpha1.TestRun
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(slow), &after); err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(after.Status.Comparison, c) || after.Status.Verdict != v1alpha1.VerdictRegressed {
		t.Errorf("comparison rewritten:\nbefore %+v\nafter  %+v", c, after.Status.Comparison)
	}
}

// TestBaselineBySelectorNewestNeverItself: the newest run that PASSED among those whose labels
// match, not the run itself (which matches too), nor a newer one that is not PASSED.
func TestBaselineBySelectorNewestNeverItself(t *testing.T) {
	ns := setup(t)
	labels := map[string]string{"test": "ingest", "release": "v1"}
	runThrough(t, compared("older", ns, labels, nil), 3000)
	time.Sleep(1100 * time.Millisecond) // completion times are kept to the second: newer ends in a later one
	newer := runThrough(t, compared("newer", ns, labels, nil), 3000)
	runThrough(t, compared("other", ns, map[string]string{"test": "other"}, nil), 3000)
	sel := &v1alpha1.BaselineSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"test": "ingest"}}}
	got := runThrough(t, compared("current", ns, labels, sel), 3000)
	if b := got.Status.Comparison.Baseline; b == nil || b.Name != "newer" || b.UID != string(newer.UID) {
		t.Fatalf("baseline %+v, want newer", got.Status.Comparison)
	}
}

// TestBaselineMissingFailsBeforeProvisioning: onMissing Fail (the default) ends the run Failed
// BaselineNotFound, saying what to do, and no target namespace was made.
func TestBaselineMissingFailsBeforeProvisioning(t *testing.T) {
	ns := setup(t)
	run := compared("orphan", ns, nil, &v1alpha1.BaselineSpec{Name: "nothing-here"})
	create(t, run)
	got := waitPhase(t, run, v1alpha1.PhaseFailed, v1alpha1.ReasonBaselineNotFound)
	if !strings.Contains(got.Status.Message, "nothing-here") || !strings.Contains(got.Status.Message, "onMissing: Warn") {
		t.Errorf("message %q", got.Status.Message)
	}
	if got.Status.TargetNamespace != "" {
		t.Errorf("target namespace %q recorded", got.Status.TargetNamespace)
	}
	err := env.Client.Get(ctx, client.ObjectKey{Name: naming.TargetNamespace(ns, run.Name)}, &corev1.Namespace{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("target namespace: %v, want not found", err)
	}
}

// TestBaselineMissingWarnRuns: onMissing Warn runs without a comparison and says so in
// status.comparison and in a Warning event.
func TestBaselineMissingWarnRuns(t *testing.T) {
	ns := setup(t)
	sel := &v1alpha1.BaselineSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"release": "none"}}, OnMissing: v1alpha1.BaselineMissingWarn}
	got := runThrough(t, compared("warned", ns, nil, sel), 3000)
	if c := got.Status.Comparison; got.Status.Verdict != v1alpha1.VerdictPassed || c == nil || c.Baseline != nil || !strings.Contains(c.Message, "no baseline") {
		t.Fatalf("verdict %s comparison %+v", got.Status.Verdict, got.Status.Comparison)
	}
	waitEvent(t, ns, v1alpha1.ReasonBaselineNotFound, "release=none")
}

// TestBaselineInAnotherNamespaceRefused: a baseline is never read from another namespace; the
// API server refuses a name with a namespace prefix, saying so.
func TestBaselineInAnotherNamespaceRefused(t *testing.T) {
	ns := setup(t)
	err := env.Client.Create(ctx, compared("cross", ns, nil, &v1alpha1.BaselineSpec{Name: "other-team/base"}))
	if err == nil || !strings.Contains(err.Error(), "no namespace prefix") {
		t.Fatalf("create: %v, want refused for the namespace prefix", err)
	}
}

// TestBaselineKeptAfterDelete: a baseline deleted before the next run (its TTL, a prune) is
// still compared with, from its kept record.
func TestBaselineKeptAfterDelete(t *testing.T) {
	ns := setup(t)
	base := runThrough(t, compared("gone", ns, nil, nil), 3000)
	if err := env.Client.Delete(ctx, base); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the baseline TestRun gone", func() error {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(base), &v1alpha1.TestRun{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there: %w", err)
	})
	got := runThrough(t, compared("later", ns, nil, &v1alpha1.BaselineSpec{Name: "gone"}), 1500)
	c := got.Status.Comparison
	if c == nil || c.Baseline == nil || c.Baseline.Source != "Kept" || c.Baseline.UID != string(base.UID) || c.Decision != v1alpha1.ComparisonRegressed {
		t.Fatalf("comparison %+v", c)
	}
}

// TestBaselineRecordGoneIsInconclusive: the pinned baseline's kept record deleted (retention, a
// prune) before this run's results are merged leaves nothing to compare with. The run that
// passed its thresholds ends INCONCLUSIVE (spec.baseline.onUndecided's default), saying the
// record is gone and what to do, not PASSED as before issue 39; with onUndecided Pass it
// passes and still says so.
func TestBaselineRecordGoneIsInconclusive(t *testing.T) {
	ns := setup(t)
	for _, tc := range []struct {
		name    string
		policy  v1alpha1.BaselineOnUndecided
		verdict v1alpha1.Verdict
	}{
		{"default", "", v1alpha1.VerdictInconclusive},
		{"pass", v1alpha1.BaselineUndecidedPass, v1alpha1.VerdictPassed},
	} {
		// A baseline each: resolving one needs its kept record, which the case deletes once pinned.
		base := runThrough(t, compared("pinned-"+tc.name, ns, nil, nil), 3000)
		run := compared("after-"+tc.name, ns, nil, &v1alpha1.BaselineSpec{Name: base.Name, OnUndecided: tc.policy})
		k, pods := startRunning(t, run, 1)
		kept := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: naming.KeptResults(base.Name, string(base.UID)), Namespace: ns}}
		if err := env.Client.Delete(ctx, kept); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		start := time.Now().Add(-300 * time.Second)
		logs.set(pods[0], tw.EnvelopeLog(tw.RunnerLoad{Runner: pods[0].Name, Requests: 3000, Start: start, Duration: 300 * time.Second, CPUSeconds: 0.5}), nil)
		k.Finish(pods[0], 0, "Completed")
		got := waitPhase(t, run, v1alpha1.PhaseSucceeded, v1alpha1.ReasonCompleted)
		c := got.Status.Comparison
		if got.Status.Verdict != tc.verdict || c == nil || c.Decision != v1alpha1.ComparisonNoData ||
			!strings.Contains(got.Status.Message, "could not judge") || !strings.Contains(got.Status.Message, "is gone") {
			t.Errorf("onUndecided %q: verdict %s, message %q, comparison %+v; want %s naming the record gone", tc.policy, got.Status.Verdict, got.Status.Message, c, tc.verdict)
		}
	}
}

// keptCM is a kept record's metadata as the controller writes it, completed at.
func keptCM(ns, run, uid string, at time.Time) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: naming.KeptResults(run, uid), Namespace: ns,
		Labels: map[string]string{naming.LabelKeptResults: "true", naming.LabelKeptRun: run},
		Annotations: map[string]string{naming.AnnotationKeptName: run, naming.AnnotationKeptUID: uid,
			naming.AnnotationKeptCompletion: at.UTC().Format(time.RFC3339), naming.AnnotationKeptVerdict: "PASSED"}}}
}

// TestKeptRetentionDeletesOnlyTheOldestRecords: beyond the count, the oldest kept records go;
// a look-alike (the label, but a name that is not that of its recorded run and UID) stays,
// however old, and so does a record a run pinned as its fixed reference.
func TestKeptRetentionDeletesOnlyTheOldestRecords(t *testing.T) {
	ns := setup(t)
	now := time.Now()
	var names []string
	for i := 0; i < 4; i++ {
		cm := keptCM(ns, fmt.Sprintf("run-%d", i), fmt.Sprintf("uid0000%d-x", i), now.Add(time.Duration(i)*time.Minute))
		if i == 0 {
			cm.Annotations[naming.AnnotationKeptReference] = "true"
		}
		names = append(names, cm.Name)
		if err := env.Client.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}
	fake := keptCM(ns, "tenant-config", "aaaaaaaa-x", now.Add(-time.Hour))
	fake.Annotations[naming.AnnotationKeptUID] = "bbbbbbbb-y" // its name says aaaaaaaa
	if err := env.Client.Create(ctx, fake); err != nil {
		t.Fatal(err)
	}
	r := admit.New(&runenv.Env{Client: env.Client, APIReader: env.Client, Options: runenv.Options{KeptRecords: 2}})
	r.PruneKept(ctx, ns)
	var left corev1.ConfigMapList
	if err := env.Client.List(ctx, &left, client.InNamespace(ns), client.MatchingLabels{naming.LabelKeptResults: "true"}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, cm := range left.Items {
		got = append(got, cm.Name)
	}
	want := map[string]bool{names[0]: true, names[2]: true, names[3]: true, fake.Name: true}
	if len(got) != len(want) {
		t.Fatalf("left %v, want the reference, the two newest and the look-alike", got)
	}
	for _, n := range got {
		if !want[n] {
			t.Errorf("left %v, want the reference, the two newest and the look-alike", got)
		}
	}
}
