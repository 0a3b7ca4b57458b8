package testrun

import (
	"fmt"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/measure"
	"fleetbench.dev/fleetbench/pkg/naming"
)

// writeFault fails the next left writes of verb ("create", "delete", "patch status") that
// match, as a conflicting writer or an API server hiccup would.
type writeFault struct {
	verb  string
	match func(client.Object) bool
	left  int
}

func (w *writeCounter) fault(verb string, o client.Object) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := range w.faults {
		if f := &w.faults[i]; f.left > 0 && f.verb == verb && f.match(o) {
			f.left--
			return apierrors.NewServiceUnavailable("injected by the test")
		}
	}
	return nil
}

// failWrites adds faults until the test ends, and says at its end whether each was hit.
func failWrites(t *testing.T, faults ...writeFault) {
	t.Helper()
	writes.mu.Lock()
	writes.faults = append([]writeFault(nil), faults...)
	writes.mu.Unlock()
	t.Cleanup(func() {
		writes.mu.Lock()
		defer writes.mu.Unlock()
		for _, f := range writes.faults {
			if f.left > 0 {
				t.Errorf("the injected %s fault was never hit", f.verb)
			}
		}
		writes.faults = nil
	})
}

func named(kind client.Object, name string) func(client.Object) bool {
	return func(o client.Object) bool {
		return o.GetName() == name && fmt.Sprintf("%T", o) == fmt.Sprintf("%T", kind)
	}
}

// TestLostRunnerKeptResultsSurviveAFailedWrite: whichever write of the replacement path fails
// once (the record's ConfigMap, the lost Job's delete, the replacement Job's create, the
// status write that records the gap), the retry goes on from the record, and the run's results
// count exactly what the lost runner measured before its loss, once; one replacement is made.
func TestLostRunnerKeptResultsSurviveAFailedWrite(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault func(run string) writeFault
	}{
		{"the record's ConfigMap create", func(run string) writeFault {
			return writeFault{verb: "create", match: named(&corev1.ConfigMap{}, naming.ReplacementJob(run, 1, 1)), left: 1}
		}},
		{"the lost Job's delete", func(run string) writeFault {
			return writeFault{verb: "delete", match: named(&batchv1.Job{}, naming.RunnerJob(run, 1)), left: 1}
		}},
		{"the replacement Job's create", func(run string) writeFault {
			return writeFault{verb: "create", match: named(&batchv1.Job{}, naming.ReplacementJob(run, 1, 1)), left: 1}
		}},
		{"the status write of the gap", func(run string) writeFault {
			return writeFault{verb: "patch status", left: 1, match: func(o client.Object) bool {
				tr, ok := o.(*v1alpha1.TestRun)
				return ok && tr.Name == run && len(tr.Status.Gaps) > 0
			}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := setup(t)
			run := tw.MakeTestRun("kept", ns).Type(v1alpha1.TestTypeStability).Parallelism(2).Devices(20, "1s").Duration("1m").Obj()
			k, pods := startTwoLive(t, run)
			failWrites(t, tc.fault(run.Name))

			lost := pods[1]
			holdTerminating(t, lost)
			if err := env.Client.Delete(ctx, lost); err != nil {
				t.Fatal(err)
			}
			job := &batchv1.Job{}
			eventually(t, "the replacement Job", func() error {
				return env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: naming.ReplacementJob(run.Name, 1, 1)}, job)
			})
			letGo(t, k, lost)
			newPods := k.podsFor([]batchv1.Job{*job}, func(_ int, pod *corev1.Pod) { setRunning(pod, 7) })
			got := waitReplaced(t, run)
			if g := got.Status.Gaps[0]; g.ObservedUntil == nil || g.LostPod != lost.Name || g.Job != job.Name {
				t.Errorf("gap %+v: want what runner 1 measured kept, its pod and its replacement named", g)
			}

			got = finishReplaced(t, k, run, pods[0], newPods[0])
			if len(got.Status.Gaps) != 1 {
				t.Errorf("gaps: %+v, want one", got.Status.Gaps)
			}
			if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: naming.ReplacementJob(run.Name, 1, 2)}, &batchv1.Job{}); !apierrors.IsNotFound(err) {
				t.Errorf("a second replacement of runner 1: %v", err)
			}
			// The run ended: the manager keeps nothing of it.
			if rec := mainReconciler.Load(); rec != nil {
				if _, _, ok := rec.Seen.Peek(got.UID, 0, 0); ok {
					t.Errorf("runner 0's last envelope is still held after the run ended")
				}
				if _, open := rec.Seen.Held(got.UID); open {
					t.Errorf("the run is still open in the manager's memory after it ended")
				}
			}
		})
	}
}

// TestDeletedRunIsForgotten: the last envelopes the manager keeps of a Replace run's runners
// go when the run is deleted, also when it had no finalizer (an external target) and the
// reconcile only finds it gone; so do its calls and its budget mark.
func TestDeletedRunIsForgotten(t *testing.T) {
	rec := mainReconciler.Load()
	if rec == nil {
		t.Skip("no main reconciler")
	}
	ns := setup(t)
	run := tw.MakeTestRun("forgotten", ns).External("http://example.test").Type(v1alpha1.TestTypeStability).Parallelism(2).Devices(20, "1s").Duration("1m").Obj()
	create(t, run)
	k := newKubelet(t, run)
	pods := k.runnersReady(2)
	waitPhase(t, run, v1alpha1.PhaseRunning, "")
	start := time.Now()
	for _, pod := range pods {
		runner.serveLive(pod, func() measure.Envelope { return liveEnvelope(t, pod, 10, start) })
	}
	eventually(t, "both runners' envelopes kept", func() error {
		for i := range pods {
			if _, _, ok := rec.Seen.Peek(run.UID, i, 0); !ok {
				return fmt.Errorf("runner %d: none kept", i)
			}
		}
		return nil
	})
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(run), run); err != nil {
		t.Fatal(err)
	}
	if len(run.Finalizers) != 0 {
		t.Fatalf("an external run with finalizers %v: the test needs none", run.Finalizers)
	}
	if _, marked := rec.Budgets.Get(run.UID); !marked {
		t.Fatal("a running run has no budget mark: the check below that it goes would prove nothing")
	}
	if err := env.Client.Delete(ctx, run); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the run forgotten", func() error {
		if kept, open := rec.Seen.Held(run.UID); open {
			return fmt.Errorf("%d envelopes still kept", kept)
		}
		return nil
	})
	// What else the reconciler held for it went with it: its calls and its budget mark.
	calls, scripts := rec.Calls.Pending(run.UID), rec.Scripts.Pending(run.UID)
	_, marked := rec.Budgets.Get(run.UID)
	if calls != 0 || scripts != 0 || marked {
		t.Errorf("after the run was found gone: %d async calls, %d script calls, budget mark %v; want none", calls, scripts, marked)
	}
}
