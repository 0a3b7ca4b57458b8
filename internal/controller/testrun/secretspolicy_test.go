package testrun

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"fleetbench.dev/fleetbench/internal/testenv"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/naming"
)

// installSecretsPolicy creates config/rbac/secrets_policy.yaml with edit applied to its text,
// under names ending in suffix.
func installSecretsPolicy(t *testing.T, suffix string, edit func(string) string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "rbac", "secrets_policy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(edit(string(raw)), "\n---\n")
	policy, binding := &admissionv1.ValidatingAdmissionPolicy{}, &admissionv1.ValidatingAdmissionPolicyBinding{}
	if len(docs) != 2 || yaml.UnmarshalStrict([]byte(docs[0]), policy) != nil || yaml.UnmarshalStrict([]byte(docs[1]), binding) != nil {
		t.Fatalf("config/rbac/secrets_policy.yaml: want the policy and its binding")
	}
	policy.Name += suffix
	binding.Name += suffix
	binding.Spec.PolicyName = policy.Name
	for _, obj := range []client.Object{policy, binding} {
		if err := env.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSecretsPolicyAdmitsOnlyPullSecretCopies: the policy config/rbac ships lets the manager's
// ServiceAccount, acting with its ClusterRole, create and delete exactly what copyPullSecrets
// made for a real run (its labels, type and namespace), and refuses the token-minting Secret
// and every other Secret write, in the tenant's namespace or in another run's target namespace.
func TestSecretsPolicyAdmitsOnlyPullSecretCopies(t *testing.T) {
	const sa = "system:serviceaccount:fleetbench-system:fleetbench-manager"
	installSecretsPolicy(t, "", func(s string) string { return s })
	cfg, err := testenv.AsManagerNamed(env, sa)
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}

	ns := setup(t)
	dockerConfig := map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{"registry.internal.example":{"auth":"dTpw"}}}`)}
	if err := env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "registry-cred", Namespace: ns},
		Type: corev1.SecretTypeDockerConfigJson, Data: dockerConfig}); err != nil {
		t.Fatal(err)
	}
	run := tw.MakeTestRun("policy", ns).Obj()
	run.Spec.Target.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "registry-cred"}}
	create(t, run)
	k := newKubelet(t, run)
	k.targetDeployments() // made after the copies
	made := &corev1.Secret{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: k.targetNS(), Name: "registry-cred"}, made); err != nil {
		t.Fatal(err)
	}

	like := func(ns string, typ corev1.SecretType, labels map[string]string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{GenerateName: "probe-", Namespace: ns, Labels: labels}, Type: typ, Data: dockerConfig}
	}
	otherRun := map[string]string{}
	for k, v := range made.Labels {
		otherRun[k] = v
	}
	otherRun[naming.LabelTestRunUID] = "another-run"
	mint := func(ns string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{GenerateName: "mint-", Namespace: ns, Labels: made.Labels,
			Annotations: map[string]string{corev1.ServiceAccountNameKey: "default"}}, Type: corev1.SecretTypeServiceAccountToken}
	}
	refused := map[string]*corev1.Secret{
		"a token of any ServiceAccount":              mint(ns),
		"a token in the run's target namespace":      mint(k.targetNS()),
		"a copy in the tenant's namespace":           like(ns, corev1.SecretTypeDockerConfigJson, made.Labels),
		"an Opaque Secret labelled as a copy":        like(k.targetNS(), corev1.SecretTypeOpaque, made.Labels),
		"an unlabelled registry Secret":              like(k.targetNS(), corev1.SecretTypeDockerConfigJson, nil),
		"another run's copy in this run's namespace": like(k.targetNS(), corev1.SecretTypeDockerConfigJson, otherRun),
	}
	// The policy takes effect once the API server's policy informer has it.
	testenv.Eventually(t, "the policy refusing a token Secret", func() error {
		err := mgr.Create(ctx, refused["a token of any ServiceAccount"].DeepCopy(), client.DryRunAll)
		if err == nil || !strings.Contains(err.Error(), "kubernetes.io/dockerconfigjson") {
			return errors.Join(errors.New("want the policy's refusal"), err)
		}
		return nil
	})
	for what, s := range refused {
		if err := mgr.Create(ctx, s); err == nil || !strings.Contains(err.Error(), "fleetbench-manager-secrets") {
			t.Errorf("%s: want the policy's refusal, got %v", what, err)
		}
	}
	tenants := &corev1.Secret{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "registry-cred"}, tenants); err != nil {
		t.Fatal(err)
	}
	if err := mgr.Delete(ctx, tenants); err == nil || !strings.Contains(err.Error(), "fleetbench-manager-secrets") {
		t.Errorf("deleting the tenant's own Secret: want the policy's refusal, got %v", err)
	}

	again := like(k.targetNS(), made.Type, made.Labels)
	if err := mgr.Create(ctx, again); err != nil {
		t.Errorf("a copy like the one copyPullSecrets made: %v", err)
	} else if err := mgr.Delete(ctx, again); err != nil {
		t.Errorf("deleting that copy: %v", err)
	}

	// The chart's rendering names its targetNamespace: copies there, labelled, are admitted.
	const sharedSA, shared = "system:serviceaccount:fleetbench-system:fleetbench-shared", "policy-shared-targets"
	installSecretsPolicy(t, "-shared", func(s string) string {
		s = strings.Replace(s, "'"+sa+"'", "'"+sharedSA+"'", 1)
		return strings.Replace(s, `expression: "''"`, `expression: "'`+shared+`'"`, 1)
	})
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: shared}}); err != nil {
		t.Fatal(err)
	}
	cfg, err = testenv.AsManagerNamed(env, sharedSA)
	if err != nil {
		t.Fatal(err)
	}
	sharedMgr, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "the shared namespace's policy", func() error {
		err := sharedMgr.Create(ctx, like(ns, corev1.SecretTypeDockerConfigJson, made.Labels), client.DryRunAll)
		if err == nil || !strings.Contains(err.Error(), "fleetbench-manager-secrets-shared") {
			return errors.Join(errors.New("want the policy's refusal outside the shared namespace"), err)
		}
		return nil
	})
	if err := sharedMgr.Create(ctx, like(shared, corev1.SecretTypeDockerConfigJson, made.Labels)); err != nil {
		t.Errorf("a labelled copy in the shared target namespace: %v", err)
	}
	if err := sharedMgr.Create(ctx, mint(shared)); err == nil || !strings.Contains(err.Error(), "fleetbench-manager-secrets-shared") {
		t.Errorf("a token Secret in the shared target namespace: want the policy's refusal, got %v", err)
	}
}
