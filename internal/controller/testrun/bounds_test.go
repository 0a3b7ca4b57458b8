package testrun

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/internal/testwrappers/hostile"
	"fleetbench.dev/fleetbench/pkg/measure"
	"fleetbench.dev/fleetbench/pkg/statusbound"
)

var hostileSeeds = flag.Int("fleetbench.hostile-seeds", 24, "statuses TestHostileStatusesAreAccepted writes")

// TestHostileStatusesAreAccepted: statuses built from hostile runners' results (see
// hostile.Status and statusbound's fuzz test) and cut by statusbound are accepted by a real
// API server, every one. Seeds replay: seed i is rand.NewSource(i).
func TestHostileStatusesAreAccepted(t *testing.T) {
	ns := setup(t)
	for seed := range int64(*hostileSeeds) {
		st := hostile.Status(rand.New(rand.NewSource(seed)))
		notes := statusbound.TestRun(&st)
		run := tw.MakeTestRun(fmt.Sprintf("hostile-%d", seed), ns).External("http://example.invalid").Obj()
		create(t, run)
		// The reconciler writes this run's status too; a conflict is retried, a refusal is the failure.
		var err error
		for range 10 {
			if err = env.Client.Get(ctx, client.ObjectKeyFromObject(run), run); err != nil {
				t.Fatal(err)
			}
			run.Status = *st.DeepCopy()
			if err = env.Client.Status().Update(ctx, run); !apierrors.IsConflict(err) {
				break
			}
		}
		if err != nil {
			t.Fatalf("seed %d (%d cuts): the API server refused the status: %v", seed, len(notes), statusbound.Cut(err.Error(), 2000))
		}
	}
}

// TestHostileResultsEndTheRun: a runner whose script reports hundreds of thresholds with
// kilobyte names, checks named with escapes and unicode, and more overflow warnings than
// status holds, does not leave the run stuck in Collecting behind a status the API server
// refuses: it ends, its status cut, with a warning that says what was cut.
func TestHostileResultsEndTheRun(t *testing.T) {
	ns := setup(t)
	run := tw.MakeTestRun("hostile", ns).Obj()
	k, pods := startRunning(t, run, 1)
	start := time.Now()
	env := tw.Envelope(tw.RunnerLoad{Runner: pods[0].Name, Requests: 100, Start: start, Duration: 10 * time.Second})
	env.Thresholds = map[string][]string{}
	for i := range 600 {
		env.Thresholds[fmt.Sprintf("custom_%d_%s", i, strings.Repeat("ü", 1500))] = []string{"count>0"}
	}
	for i := range 20 {
		env.Overflows = append(env.Overflows, measure.Overflow{Metric: fmt.Sprintf("m%d", i), Tag: strings.Repeat("\x1b[31m日", 400), Series: 200})
	}
	env.Thresholds["evil_\x1b[2J\r\u202e"] = []string{"count>0"} // a metric name the script chose
	var log bytes.Buffer
	if err := measure.Encode(&log, &env); err != nil {
		t.Fatal(err)
	}
	logs.set(pods[0], log.Bytes(), nil)
	k.Finish(pods[0], 0, "Completed")
	got := waitPhase(t, run, v1alpha1.PhaseSucceeded, "")
	r := got.Status.Results
	if r == nil || len(r.Thresholds) != statusbound.MaxThresholds || len(r.Warnings) != statusbound.MaxWarnings {
		t.Fatalf("results %+v", r)
	}
	if last := r.Warnings[len(r.Warnings)-1]; !strings.HasPrefix(last, statusbound.WarningPrefix) || !strings.Contains(last, "of 601 thresholds") {
		t.Errorf("the last warning does not say what was cut: %s", last)
	}
	// Metric and tag names, warnings quoting them: all printable (text_test.go).
	if bad := unprintableIn(got.Status); len(bad) > 0 {
		t.Errorf("status holds unprintable text: %q", bad)
	}
}

// refusals makes the API server's answer to a status patch of a namespace an Invalid refusal
// (suite_test.go's client consults it), as for a status the CRD's rules refuse after all.
var refusals sync.Map // namespace -> true

func refusedStatus(o client.Object) error {
	run, ok := o.(*v1alpha1.TestRun)
	if _, refuse := refusals.Load(o.GetNamespace()); !ok || !refuse || run.Status.Reason == v1alpha1.ReasonStatusRejected {
		return nil
	}
	return apierrors.NewInvalid(schema.GroupKind{Group: "fleetbench.dev", Kind: "TestRun"}, run.Name,
		field.ErrorList{field.TooLong(field.NewPath("status", "results", "checks", "byName").Index(0).Child("name"), "", 512)})
}

// TestRefusedStatusEndsTheRun: a status the API server refuses on every try ends the run
// Failed StatusRejected, with the refusal in the message, instead of the same write retried
// forever while the run never ends.
func TestRefusedStatusEndsTheRun(t *testing.T) {
	ns := setup(t)
	refusals.Store(ns, true)
	t.Cleanup(func() { refusals.Delete(ns) })
	run := tw.MakeTestRun("refused", ns).Obj()
	create(t, run)
	got := waitPhase(t, run, v1alpha1.PhaseFailed, v1alpha1.ReasonStatusRejected)
	if !strings.Contains(got.Status.Message, "status.results.checks.byName[0].name") || got.Status.CompletionTime == nil {
		t.Errorf("message %q must carry the API server's words; completion %v", got.Status.Message, got.Status.CompletionTime)
	}
}
