package testrun

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
)

// spec.target.imagePullSecrets: a registry Secret of the TestRun's namespace is copied into the
// target's and named in the target's pods; a missing one is waited for, saying until when; any
// other type of Secret is refused (a TestRun is no way to copy Secrets elsewhere).
func TestTargetPullSecretsAreCopied(t *testing.T) {
	ns := setup(t)
	secret := func(name string, typ corev1.SecretType, data map[string][]byte) {
		t.Helper()
		if err := env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Type: typ, Data: data}); err != nil {
			t.Fatal(err)
		}
	}
	dockerConfig := map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{"registry.internal.example":{"auth":"dTpw"}}}`)}
	withPullSecret := func(name, secret string) *v1alpha1.TestRun {
		run := tw.MakeTestRun(name, ns).Obj()
		run.Spec.Target.ImagePullSecrets = []corev1.LocalObjectReference{{Name: secret}}
		return run
	}

	secret("registry-cred", corev1.SecretTypeDockerConfigJson, dockerConfig)
	run := withPullSecret("private", "registry-cred")
	create(t, run)
	k := newKubelet(t, run)
	d := k.targetDeployments()[0]
	if refs := d.Spec.Template.Spec.ImagePullSecrets; len(refs) != 1 || refs[0].Name != "registry-cred" {
		t.Errorf("target pod template imagePullSecrets %v, want registry-cred", refs)
	}
	copied := &corev1.Secret{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: k.targetNS(), Name: "registry-cred"}, copied); err != nil {
		t.Fatalf("the Secret was not copied into the target namespace: %v", err)
	}
	if copied.Type != corev1.SecretTypeDockerConfigJson || string(copied.Data[corev1.DockerConfigJsonKey]) != string(dockerConfig[corev1.DockerConfigJsonKey]) {
		t.Errorf("copy %s %q differs from the TestRun's Secret", copied.Type, copied.Data)
	}

	secret("opaque", corev1.SecretTypeOpaque, map[string][]byte{"password": []byte("x")})
	refused := withPullSecret("opaque", "opaque")
	create(t, refused)
	got := waitPhase(t, refused, v1alpha1.PhaseFailed, v1alpha1.ReasonPullSecretNotUsable)
	if !strings.Contains(got.Status.Message, `is of type "Opaque"`) {
		t.Errorf("message %q must say the Secret's type", got.Status.Message)
	}

	missing := withPullSecret("missing", "not-yet")
	create(t, missing)
	waitReasonSaying(t, missing, v1alpha1.ReasonWaitingForPullSecret,
		"Secret not-yet named in spec.target.imagePullSecrets does not exist", "waiting until 20")
}
