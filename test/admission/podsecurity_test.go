package admission

import (
	"context"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/target"
)

// warnings collects the API server's warning headers (Pod Security's "would violate" notes).
type warnings struct {
	mu   sync.Mutex
	seen []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen = append(w.seen, text)
}

// TestTargetPodsPassPodSecurity creates the pods pkg/target builds, for every built-in engine
// and a custom image, in the namespace it builds, on a real API server with its PodSecurity
// admission: restricted targets are admitted without a single warning; a baseline target with
// a root component is admitted, with restricted's warnings.
func TestTargetPodsPassPodSecurity(t *testing.T) {
	ctx := context.Background()
	cfg := rest.CopyConfig(env.Config)
	seen := &warnings{}
	cfg.WarningHandler = seen
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	app := v1alpha1.Component{Name: "app", Kind: v1alpha1.ComponentCustom, Image: "fleetbench/sut:dev", Ports: []corev1.ContainerPort{{ContainerPort: 8080}}}
	c1 := &v1alpha1.ProfileSpec{CPU: resource.MustParse("1"), Memory: resource.MustParse("512Mi")}
	cases := []struct {
		name       string
		level      v1alpha1.PodSecurityLevel
		sizing     v1alpha1.SizingMode
		components []v1alpha1.Component
		warns      []string
	}{
		{name: "web-apps", components: []v1alpha1.Component{
			{Name: "nginx", Kind: v1alpha1.ComponentWebServer}, {Name: "apache", Kind: v1alpha1.ComponentWebServer, Engine: "apache", TLS: ptr.To(true)}, app}},
		{name: "databases", components: []v1alpha1.Component{
			{Name: "pg", Kind: v1alpha1.ComponentDatabase}, {Name: "maria", Kind: v1alpha1.ComponentDatabase, Engine: "mariadb"}}},
		{name: "brokers", sizing: v1alpha1.SizingPerComponent, components: []v1alpha1.Component{
			{Name: "prosody", Kind: v1alpha1.ComponentXMPPBroker, Share: ptr.To[int32](50)},
			{Name: "ejabberd", Kind: v1alpha1.ComponentXMPPBroker, Engine: "ejabberd", Share: ptr.To[int32](50)}}},
		{name: "legacy-root", level: v1alpha1.PodSecurityBaseline, components: []v1alpha1.Component{
			{Name: "legacy", Kind: v1alpha1.ComponentCustom, Image: "legacy:1", RunAsUser: ptr.To[int64](0), Ports: []corev1.ContainerPort{{ContainerPort: 80}}}},
			warns: []string{`would violate PodSecurity "restricted:latest"`, "runAsNonRoot", "runAsUser=0"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			run := tw.MakeTestRun(tc.name, ns).Components(tc.components...).Obj()
			run.Spec.Target.PodSecurity = tc.level
			run.Spec.Target.Sizing = tc.sizing
			for _, podLevel := range []bool{false, true} {
				objs, err := target.Build(run, c1, "fb-psa-"+tc.name, target.Options{PodLevelResources: podLevel})
				if err != nil {
					t.Fatal(err)
				}
				if err := c.Create(ctx, objs.Namespace); err != nil && !apierrors.IsAlreadyExists(err) {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = c.Delete(ctx, objs.Namespace) })
				seen.seen = nil
				for _, d := range objs.Deployments {
					pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: d.Name + "-", Namespace: objs.Namespace.Name},
						Spec: d.Spec.Template.Spec}
					if err := c.Create(ctx, pod); err != nil {
						t.Fatalf("pod of %s refused (pod-level resources %v): %v", d.Name, podLevel, err)
					}
					if podLevel && tc.sizing != v1alpha1.SizingPerComponent && pod.Spec.Resources == nil {
						t.Errorf("the API server dropped pod-level resources of %s", d.Name)
					}
				}
				got := strings.Join(seen.seen, "\n")
				if len(tc.warns) == 0 && got != "" {
					t.Errorf("restricted target pods drew warnings: %s", got)
				}
				for _, w := range tc.warns {
					if !strings.Contains(got, w) {
						t.Errorf("warnings %q lack %q", got, w)
					}
				}
			}
		})
	}

	// The namespace really enforces: a root pod is refused in a restricted target namespace.
	run := tw.MakeTestRun("enforced", ns).Components(app).Obj()
	objs, err := target.Build(run, c1, "fb-psa-enforced", target.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, objs.Namespace); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, objs.Namespace) })
	root := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "root", Namespace: objs.Namespace.Name},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "legacy:1"}}}}
	if err := c.Create(ctx, root); err == nil || !strings.Contains(err.Error(), `violates PodSecurity "restricted:latest"`) {
		t.Errorf("a root pod in a restricted target namespace: err = %v", err)
	}
}
