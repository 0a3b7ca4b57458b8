package testrun

import (
	"bytes"
	"compress/gzip"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/judge"
	"fleetbench.dev/fleetbench/pkg/naming"
	"fleetbench.dev/fleetbench/pkg/seal"
)

// timelineBomb is issue 36's results bomb, scaled down: a gzipped timeline of empty windows
// that inflates a thousandfold (the attack's was 63 MiB from 250 KiB).
func timelineBomb(t *testing.T, windows int) []byte {
	t.Helper()
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	_, _ = zw.Write([]byte(`{"windows":[{}`))
	_, _ = zw.Write(bytes.Repeat([]byte(`,{}`), windows))
	_, _ = zw.Write([]byte(`]}`))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return z.Bytes()
}

// TestTamperedResultsFailOnlyTheirRun: a tenant writes a results bomb into its run's results
// ConfigMap (owner reference and all, as `edit` allows). The manager decodes none of it: the
// run fails RecordTampered, naming the ConfigMap; another namespace's run, collected at the
// same time, completes with its exact count, and its results carry a seal that verifies only
// unchanged.
func TestTamperedResultsFailOnlyTheirRun(t *testing.T) {
	victimNS, attackerNS := setup(t), setup(t)
	victim := tw.MakeTestRun("victim", victimNS).Devices(100, "10s").Duration("10s").Obj()
	bomb := tw.MakeTestRun("bomb", attackerNS).Devices(100, "10s").Duration("10s").Obj()
	kv, victimPods := startRunning(t, victim, 1)
	kb, bombPods := startRunning(t, bomb, 1)

	forged := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: naming.ResultConfigMap(bomb.Name), Namespace: attackerNS,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersion.String(), Kind: "TestRun", Name: bomb.Name, UID: bomb.UID, Controller: ptr.To(true)}}}}
	payload := map[string][]byte{judge.TimelineKey: timelineBomb(t, 2<<20)}
	err := env.Client.Get(ctx, client.ObjectKeyFromObject(forged), forged)
	switch {
	case apierrors.IsNotFound(err):
		forged.BinaryData = payload
		err = env.Client.Create(ctx, forged)
	case err == nil:
		forged.BinaryData = payload // the manager's own seal stays: it no longer matches
		err = env.Client.Update(ctx, forged)
	}
	if err != nil {
		t.Fatal(err)
	}

	logs.set(bombPods[0], load(bombPods[0], time.Now()), nil)
	logs.set(victimPods[0], load(victimPods[0], time.Now()), nil)
	kb.Finish(bombPods[0], 0, "Completed")
	kv.Finish(victimPods[0], 0, "Completed")

	got := waitPhase(t, bomb, v1alpha1.PhaseFailed, v1alpha1.ReasonRecordTampered)
	if !strings.Contains(got.Status.Message, forged.Name) || !strings.Contains(got.Status.Message, "was not read") {
		t.Errorf("message %q does not name the ConfigMap and say it was not read", got.Status.Message)
	}
	ok := waitPhase(t, victim, v1alpha1.PhaseSucceeded, v1alpha1.ReasonCompleted)
	if r := ok.Status.Results; r == nil || r.Requests.Total != 100 {
		t.Errorf("victim's results %+v, want its 100 requests", r)
	}
	results := &corev1.ConfigMap{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: victimNS, Name: naming.ResultConfigMap(victim.Name)}, results); err != nil {
		t.Fatal(err)
	}
	if results.Annotations[seal.Annotation] == "" {
		t.Fatalf("the victim's results carry no seal: %v", results.Annotations)
	}
}
