package testrun

import (
	"fmt"
	"slices"
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

// TestRunnerSecretsResolveInTheRunsNamespaceOnly: volumes and envFrom name Secrets and
// ConfigMaps without a namespace, and every runner pod that uses them is made in the TestRun's
// namespace, where the kubelet resolves them; the operator copies none
// in from elsewhere. A Secret of that name in another namespace stays out of reach.
func TestRunnerSecretsResolveInTheRunsNamespaceOnly(t *testing.T) {
	ns := setup(t)
	other := setup(t)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: other}, StringData: map[string]string{"TOKEN": "x"}}
	if err := env.Client.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	ref := corev1.LocalObjectReference{Name: "creds"}
	run := tw.MakeTestRun("creds", ns).Parallelism(2).Runner(&v1alpha1.RunnerSpec{
		EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: ref}},
			{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: ref}}},
		Volumes:      []corev1.Volume{{Name: "creds", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "creds"}}}},
		VolumeMounts: []corev1.VolumeMount{{Name: "creds", MountPath: "/creds"}},
	}).Obj()
	create(t, run)
	k := newKubelet(t, run)
	k.targetReady()
	for _, job := range k.jobs(2) {
		spec := job.Spec.Template.Spec
		if job.Namespace != ns || len(spec.Containers[0].EnvFrom) != 2 || !slices.ContainsFunc(spec.Volumes, func(v corev1.Volume) bool {
			return v.Secret != nil && v.Secret.SecretName == "creds"
		}) {
			t.Errorf("Job %s/%s: envFrom %+v volumes %+v, want both references in namespace %s", job.Namespace, job.Name, spec.Containers[0].EnvFrom, spec.Volumes, ns)
		}
	}
	var copies corev1.SecretList
	if err := env.Client.List(ctx, &copies, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, s := range copies.Items {
		if s.Name == "creds" {
			t.Errorf("Secret creds was copied into the TestRun's namespace %s", ns)
		}
	}
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
