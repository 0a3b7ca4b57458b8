package testrun

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/controller/testrun/runenv"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/measure"
	"fleetbench.dev/fleetbench/pkg/naming"
)

// inspectLog is what `k6 inspect --execution-requirements` prints for the script: a
// constant-arrival-rate scenario with 2 pre-allocated VUs, after a line k6 logged first.
const inspectLog = `time="2026-01-01T00:00:00Z" level=warning msg="a warning k6 printed first"
{
  "scenarios": {
    "push": {"executor": "constant-arrival-rate", "rate": 3, "timeUnit": "1s", "duration": "10s", "preAllocatedVUs": 2, "maxVUs": 10}
  },
  "totalDuration": "40s",
  "maxVUs": 10
}
`

// Known before the run: the pre-flight's scenarios put runner 2 of 3 at 0 pre-allocated VUs,
// and the script reads __VU. Both are in the ScriptChecked condition, in Warning events and in
// status.results.warnings, where they stay once the merged results are written.
func TestPreflightWarnsWhereTheSplitDiffers(t *testing.T) {
	ns := setup(t)
	script := "import http from 'k6/http';\n// __ITER in a comment does not count\n" +
		"export default function () { http.get(`${__ENV.TARGET_WEB_URL}/?vu=${__VU}`); }\n"
	run := tw.MakeTestRun("split", ns).Parallelism(3).Inline(script).Annotation(manualPreflight, "true").Obj()
	create(t, run)
	k := newKubelet(t, run)
	job := k.preflightJob()
	logs.set(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: job.Name + "-pod"}}, []byte(inspectLog), nil)
	if err := preflightPod(ctx, env.Client, job, 0, ""); err != nil {
		t.Fatal(err)
	}
	zeroVUs := []string{`scenario "push"`, "runner 2 (split-runner-2)", "0 of its 2 pre-allocated VUs", "1,1,0", "preAllocatedVUs to at least 3"}
	numbering := []string{"the script reads __VU:", "exec.vu.idInTest"}
	got := &v1alpha1.TestRun{}
	eventually(t, "the pre-flight's warnings", func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(run), got); err != nil {
			return err
		}
		c := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionScriptChecked)
		if c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("ScriptChecked %+v", c)
		}
		return saysAll(c.Message, append(append([]string{"split over 3 runners"}, zeroVUs...), numbering...))
	})
	if r := got.Status.Results; r == nil || len(r.Warnings) != 2 || saysAll(r.Warnings[0], zeroVUs) != nil || saysAll(r.Warnings[1], numbering) != nil ||
		strings.Contains(strings.Join(r.Warnings, " "), "__ITER") {
		t.Fatalf("status.results before the run = %+v, want the two warnings", r)
	}
	waitEvent(t, ns, runenv.EventZeroVUSegment, zeroVUs...)
	waitEvent(t, ns, runenv.EventPerRunnerNumbering, numbering...)

	k.targetReady()
	pods := k.runnersReady(3)
	waitPhase(t, run, v1alpha1.PhaseRunning, "")
	start := time.Now()
	for _, pod := range pods {
		logs.set(pod, load(pod, start), nil)
		k.Finish(pod, 0, "Completed")
	}
	got = waitPhase(t, run, v1alpha1.PhaseSucceeded, v1alpha1.ReasonCompleted)
	if r := got.Status.Results; r.Requests == nil || r.Requests.Total != 300 || len(r.Warnings) != 2 || saysAll(r.Warnings[0], zeroVUs) != nil {
		t.Errorf("status.results after the merge = %+v, want the merged numbers and the pre-flight's warnings", r)
	}
}

// Without the pre-flight's output, spec.load's own config is split: 2 pre-allocated VUs over 3
// runners leave runner 2 without one. The same run on 2 runners says nothing.
func TestSpecLoadWarnsOfZeroVUSegments(t *testing.T) {
	ns := setup(t)
	for _, n := range []int32{3, 2} {
		run := tw.MakeTestRun(fmt.Sprintf("load-%d", n), ns).Parallelism(n).Devices(30, "10s").Duration("10s").PreAllocatedVUs(2).Obj()
		create(t, run)
		got := &v1alpha1.TestRun{}
		eventually(t, "the pre-flight's verdict", func() error {
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(run), got); err != nil {
				return err
			}
			if !meta.IsStatusConditionTrue(got.Status.Conditions, v1alpha1.ConditionScriptChecked) {
				return fmt.Errorf("ScriptChecked not True yet")
			}
			return nil
		})
		var warnings []string
		if got.Status.Results != nil {
			warnings = got.Status.Results.Warnings
		}
		switch {
		case n == 3 && (len(warnings) != 1 || saysAll(warnings[0], []string{`scenario "devices"`, "runner 2 (load-3-runner-2)", "0 of its 2 pre-allocated VUs"}) != nil):
			t.Errorf("3 runners: warnings %q, want runner 2 without a pre-allocated VU", warnings)
		case n == 2 && len(warnings) != 0:
			t.Errorf("2 runners: warnings %q, want none", warnings)
		}
	}
}

// A threshold on a sub-metric no request matched is named in status.results.warnings and an
// event; it passes as in k6, unless spec.thresholdsOnNoData is Fail, which fails the verdict.
func TestThresholdOnNoData(t *testing.T) {
	for _, policy := range []v1alpha1.ThresholdsOnNoData{"", v1alpha1.ThresholdsOnNoDataFail} {
		t.Run(string(policy), func(t *testing.T) {
			t.Parallel()
			ns := setup(t)
			w := tw.MakeTestRun("nodata", ns).Parallelism(2).Threshold("http_req_duration{name:push}", "p(95)<300").
				Threshold("http_req_duration", "p(95)<200")
			w.Spec.ThresholdsOnNoData = policy
			run := w.Obj()
			k, pods := startRunning(t, run, 2)
			start := time.Now()
			for _, pod := range pods {
				logs.set(pod, taggedLoad(pod, start, "name"), nil)
				k.Finish(pod, 0, "Completed")
			}
			got := waitPhase(t, run, v1alpha1.PhaseSucceeded, v1alpha1.ReasonCompleted)
			says := []string{"threshold http_req_duration{name:push} p(95)<300 was judged on no data", "no http_req_duration sample carried the tags name=push"}
			wantVerdict, thresholds := v1alpha1.VerdictPassed, metav1.ConditionTrue
			if policy == v1alpha1.ThresholdsOnNoDataFail {
				wantVerdict, thresholds = v1alpha1.VerdictFailed, metav1.ConditionFalse
				says = append(says, "it failed (spec.thresholdsOnNoData: Fail)")
			} else {
				says = append(says, "it passed, as k6 passes it on an empty metric")
			}
			r := got.Status.Results
			if got.Status.Verdict != wantVerdict || r == nil || len(r.Warnings) != 1 || saysAll(r.Warnings[0], says) != nil {
				t.Fatalf("verdict %s, results %+v; want %s and a warning saying %q", got.Status.Verdict, r, wantVerdict, says)
			}
			if c := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionThresholdsPassed); c == nil || c.Status != thresholds {
				t.Errorf("ThresholdsPassed %+v, want %s", c, thresholds)
			}
			waitEvent(t, ns, runenv.EventThresholdNoData, says...)
		})
	}
}

// taggedLoad is load() from runners that split their series by the extra tags too, as they do
// for tags a threshold names.
func taggedLoad(pod *corev1.Pod, start time.Time, tags ...string) []byte {
	e := tw.Envelope(tw.RunnerLoad{Runner: pod.Name, Requests: 100, Start: start, Duration: 10 * time.Second, CPUSeconds: 0.5})
	e.Tags = append(append([]string{}, measure.KeptTags...), tags...)
	var buf bytes.Buffer
	buf.WriteString("time=\"...\" level=info msg=\"k6 output before the result\"\n")
	if err := measure.Encode(&buf, &e); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// saysAll is nil when s holds every part.
func saysAll(s string, parts []string) error {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return fmt.Errorf("%q does not say %q", s, p)
		}
	}
	return nil
}

// waitEvent waits for a Warning event of reason whose note says every part.
func waitEvent(t *testing.T, ns, reason string, parts ...string) {
	t.Helper()
	eventually(t, "a "+reason+" event", func() error {
		var list eventsv1.EventList
		if err := env.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, e := range list.Items {
			if e.Reason == reason && e.Type == corev1.EventTypeWarning && saysAll(e.Note, parts) == nil {
				return nil
			}
		}
		return fmt.Errorf("%d events, none %s saying %q", len(list.Items), reason, parts)
	})
}

// A script from a ConfigMap, as k6-operator's users write them, is warned of like an inline
// one: the copy the runners mount exists long before the pre-flight ends, and the cache keeps
// no ConfigMap's data, so the warning must not depend on the reconcile that made the copy.
func TestConfigMapScriptWarnsOfPerRunnerNumbering(t *testing.T) {
	ns := setup(t)
	script := "import http from 'k6/http';\n" +
		"export default function () { if (__VU === 1) { http.get(`${__ENV.TARGET_WEB_URL}/setup-once`); } }\n"
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "k6-test", Namespace: ns}, Data: map[string]string{"test.js": script}}
	if err := env.Client.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	run := tw.MakeTestRun("from-cm", ns).Parallelism(3).Script(v1alpha1.ScriptSpec{ConfigMap: &v1alpha1.ConfigMapScript{Name: "k6-test", File: "test.js"}}).
		Annotation(manualPreflight, "true").Obj()
	create(t, run)
	k := newKubelet(t, run)
	job := k.preflightJob()
	// Reconciles after the copy was made, before the pre-flight ends: the copy is in the cache.
	eventually(t, "the script's copy", func() error {
		return env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: naming.ScriptCopyConfigMap(run.Name)}, &corev1.ConfigMap{})
	})
	// Read and written again on a conflict: the controller writes the run's status meanwhile.
	eventually(t, "the run touched", func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(run), run); err != nil {
			return err
		}
		run.Annotations["touch"] = "a reconcile with the copy already there"
		return env.Client.Update(ctx, run)
	})
	if err := preflightPod(ctx, env.Client, job, 0, ""); err != nil {
		t.Fatal(err)
	}
	numbering := []string{"the script reads __VU:", "exec.vu.idInTest"}
	got := &v1alpha1.TestRun{}
	eventually(t, "the numbering warning", func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(run), got); err != nil {
			return err
		}
		c := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionScriptChecked)
		if c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("ScriptChecked %+v", c)
		}
		return saysAll(c.Message, numbering)
	})
	if r := got.Status.Results; r == nil || len(r.Warnings) != 1 || saysAll(r.Warnings[0], numbering) != nil {
		t.Fatalf("status.results = %+v, want the numbering warning", r)
	}
	waitEvent(t, ns, runenv.EventPerRunnerNumbering, numbering...)
}
