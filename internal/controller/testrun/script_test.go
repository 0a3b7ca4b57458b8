package testrun

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
)

// A script ConfigMap that does not exist yet is waited for, the message saying until when; one
// of that name in another namespace is never read; created in the TestRun's own namespace, the
// run goes on.
func TestScriptConfigMapIsReadFromTheRunsNamespaceOnly(t *testing.T) {
	ns := setup(t)
	other := setup(t)
	run := tw.MakeTestRun("from-cm", ns).Script(v1alpha1.ScriptSpec{ConfigMap: &v1alpha1.ConfigMapScript{Name: "suite"}}).Obj()
	script := func(namespace string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "suite", Namespace: namespace},
			Data: map[string]string{"test.js": tw.DefaultScript}}
	}
	if err := env.Client.Create(ctx, script(other)); err != nil {
		t.Fatal(err)
	}
	create(t, run)
	waitReasonSaying(t, run, v1alpha1.ReasonWaitingForScript, "ConfigMap suite holding the script does not exist", "waiting until 20")
	if err := env.Client.Create(ctx, script(ns)); err != nil {
		t.Fatal(err)
	}
	waitPhase(t, run, v1alpha1.PhaseProvisioning, "")
}

// waitReasonSaying waits until the TestRun's status has reason and a message with every part.
func waitReasonSaying(t *testing.T, run *v1alpha1.TestRun, reason string, parts ...string) {
	t.Helper()
	eventually(t, fmt.Sprintf("TestRun %s %s saying %q", run.Name, reason, parts), func() error {
		got := &v1alpha1.TestRun{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(run), got); err != nil {
			return err
		}
		for _, part := range parts {
			if got.Status.Reason != reason || !strings.Contains(got.Status.Message, part) {
				return fmt.Errorf("%s/%s %q", got.Status.Phase, got.Status.Reason, got.Status.Message)
			}
		}
		return nil
	})
}
