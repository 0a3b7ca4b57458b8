package admission

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/yaml"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/testenv"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/naming"
	"fleetbench.dev/fleetbench/pkg/runners"
	"fleetbench.dev/fleetbench/pkg/target"
)

var (
	seedFlag       = flag.Int64("fleetbench.seed", 0, "seed of the admitted-specs property test (also FLEETBENCH_SEED); 0 is the fixed default")
	iterationsFlag = flag.Int("fleetbench.iterations", 0, "candidate specs the admitted-specs property test draws; 0 is the default")
)

const (
	defaultSeed       = 16
	defaultIterations = 400
	// The floors that keep the test from passing on nothing: many candidates are admitted, and
	// the admitted ones changed many different fields.
	minAdmitted     = 150
	minMutatedPaths = 60
	// workers dry-run candidates side by side: the API server, not the test, is the bottleneck.
	workers = 4
)

// TestAdmittedSpecsBuildObjectsTheAPIServerAccepts: every TestRun the API server admits builds
// target and runner objects the API server accepts. Candidates are shipped and hand-made valid
// specs with a few subtrees replaced by values drawn from the CRD's schema (schemagen_test.go);
// the objects are built by the same pure functions the controller calls and created in a
// server-side dry run, in namespaces that exist.
func TestAdmittedSpecsBuildObjectsTheAPIServerAccepts(t *testing.T) {
	seed := seedFrom(*seedFlag, defaultSeed)
	iterations := defaultIterations
	if *iterationsFlag > 0 {
		iterations = *iterationsFlag
	}
	t.Logf("seed %d, %d candidates (replay: go test ./test/admission -run %s -fleetbench.seed=%d, or FLEETBENCH_SEED=%d)",
		seed, iterations, t.Name(), seed, seed)
	c := newChecker(t)

	// Drawn in order from one source, so a seed replays whatever order the workers take.
	specSchema := loadSpecSchema(t, "fleetbench.dev_testruns.yaml")
	g := &schemaGen{r: rand.New(rand.NewSource(seed))}
	bases := baseSpecs(t)
	var cands []candidate
	for _, rc := range regressionSpecs() {
		spec := map[string]any{}
		if err := yaml.Unmarshal([]byte(rc.spec), &spec); err != nil {
			t.Fatalf("regression %q: %v", rc.name, err)
		}
		cands = append(cands, candidate{label: "regression " + rc.name, name: rc.testRun, spec: spec, regression: true, refusedWith: rc.refusedWith})
	}
	for i := range iterations {
		spec := runtime.DeepCopyJSON(bases[g.r.Intn(len(bases))])
		var paths []string
		for range 1 + g.r.Intn(3) {
			if p, ok := g.mutate(spec, specSchema, "spec"); ok {
				paths = append(paths, p)
			}
		}
		name := fmt.Sprintf("p%d", i)
		if g.r.Intn(10) == 0 {
			// Around the 63 characters a name may have: children's names and labels derive from it.
			name += "-" + strings.Repeat("n", 55+g.r.Intn(10)-len(name))
			paths = append(paths, "metadata.name")
		}
		cands = append(cands, candidate{label: fmt.Sprintf("seed %d, candidate %d", seed, i), name: name, spec: spec, paths: paths})
	}

	start := time.Now()
	queue := make(chan candidate)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for cand := range queue {
				c.check(cand)
			}
		})
	}
	for _, cand := range cands {
		queue <- cand
	}
	close(queue)
	wg.Wait()

	s := &c.stats
	t.Logf("%d candidates in %v: %d admitted, %d refused at admission; of the admitted, %d ended at a documented runtime check "+
		"(InvalidTarget %d, InvalidLoad %d), and %d runner and %d target objects were refused only for a Kubernetes value of the spec "+
		"that is invalid on its own; %d objects dry-run created; %d distinct mutated fields admitted",
		len(cands), time.Since(start).Round(time.Millisecond), s.admitted, s.refused, s.invalidTarget+s.invalidLoad, s.invalidTarget, s.invalidLoad,
		s.ownInvalidRunner, s.ownInvalidTarget, s.objects, len(s.paths))
	if s.admitted < minAdmitted {
		t.Errorf("only %d of %d candidates were admitted, want at least %d: the generator no longer makes useful specs", s.admitted, len(cands), minAdmitted)
	}
	if len(s.paths) < minMutatedPaths {
		t.Errorf("admitted specs changed only %d distinct fields, want at least %d: %v", len(s.paths), minMutatedPaths, slices.Sorted(maps.Keys(s.paths)))
	}
}

// candidate is one TestRun to try; paths are the fields its mutations changed.
type candidate struct {
	label, name string
	spec        map[string]any
	paths       []string
	// regression cases must be admitted, or refused with refusedWith in the message.
	regression  bool
	refusedWith string
}

type propertyStats struct {
	admitted, refused, invalidTarget, invalidLoad, objects int
	// ownInvalidRunner and ownInvalidTarget are the runs excused by unexcused.
	ownInvalidRunner, ownInvalidTarget int
	// paths are the schema paths mutated in admitted specs.
	paths map[string]int
}

// checker holds what every candidate shares: the namespace its TestRuns and runners live in,
// the built-in Profiles, and the counts.
type checker struct {
	t    *testing.T
	ctx  context.Context
	home string
	// shared is the one target namespace of an operator run with --target-namespace.
	shared   string
	profiles map[string]*v1alpha1.Profile
	mu       sync.Mutex
	stats    propertyStats
}

func newChecker(t *testing.T) *checker {
	ctx := context.Background()
	home := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "admitted-"}}
	shared := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "admitted-targets-"}}
	for _, ns := range []*corev1.Namespace{home, shared} {
		if err := env.Client.Create(ctx, ns); err != nil {
			t.Fatal(err)
		}
	}
	return &checker{t: t, ctx: ctx, home: home.Name, shared: shared.Name, profiles: builtinProfiles(t), stats: propertyStats{paths: map[string]int{}}}
}

func (c *checker) count(f func(s *propertyStats)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f(&c.stats)
}

// check dry-runs one TestRun; an admitted one must build objects the API server accepts.
func (c *checker) check(cand candidate) {
	t := c.t
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1alpha1.GroupVersion.String(), "kind": "TestRun",
		"metadata": map[string]any{"name": cand.name, "namespace": c.home},
		"spec":     cand.spec,
	}}
	specYAML, _ := yaml.Marshal(cand.spec)
	if err := env.Client.Create(c.ctx, u, client.DryRunAll); err != nil {
		switch {
		case !apierrors.IsInvalid(err) && !apierrors.IsBadRequest(err):
			t.Errorf("%s: dry-run create of the TestRun: %v", cand.label, err)
		case cand.regression && (cand.refusedWith == "" || !strings.Contains(err.Error(), cand.refusedWith)):
			t.Errorf("%s: refused at admission: %v\nwant %s; spec:\n%s", cand.label, err, orAdmitted(cand.refusedWith), specYAML)
		case strings.Contains(err.Error(), "evaluating rule"):
			// A rule that fails to evaluate refuses with CEL's words ("no such key"), not its message.
			t.Errorf("%s: a validation rule failed to evaluate: %v\nspec:\n%s", cand.label, err, specYAML)
		}
		c.count(func(s *propertyStats) { s.refused++ })
		return
	}
	if cand.refusedWith != "" {
		t.Errorf("%s: admitted, want a refusal containing %q; spec:\n%s", cand.label, cand.refusedWith, specYAML)
	}
	c.count(func(s *propertyStats) {
		s.admitted++
		for _, p := range cand.paths {
			s.paths[p]++
		}
	})
	// The controller reads the TestRun from the API server: defaults applied, Go types decoded.
	run := &v1alpha1.TestRun{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, run); err != nil {
		t.Errorf("%s: decoding the admitted TestRun: %v\nspec:\n%s", cand.label, err, specYAML)
		return
	}
	for _, problem := range c.build(run) {
		t.Errorf("%s: %s\nTestRun %s/%s, mutated %v, spec:\n%s", cand.label, problem, run.Namespace, run.Name, cand.paths, specYAML)
	}
}

// refusal is an object the API server refused, and why.
type refusal struct {
	obj client.Object
	err error
}

func (r refusal) String() string {
	kind := fmt.Sprintf("%T", r.obj)
	return fmt.Sprintf("%s %s/%s refused: %v", kind[strings.LastIndex(kind, ".")+1:], r.obj.GetNamespace(), r.obj.GetName(), r.err)
}

// build makes the objects the controller makes for run, in its phases' order (script,
// pre-flight, target, runners), and dry-run creates each. It returns the refusals.
func (c *checker) build(run *v1alpha1.TestRun) []string {
	cfg, err := runners.K6Config(&run.Spec, run.Name, fleetOf(run))
	if err != nil {
		// reconcileScript ends such a run Failed InvalidLoad, with this message.
		c.count(func(s *propertyStats) { s.invalidLoad++ })
		c.t.Logf("%s: InvalidLoad (a documented runtime check): %v", run.Name, err)
		return nil
	}
	profile := c.profileFor(run.Spec.Profile)
	targetNS := ""
	var objs *target.Objects
	var buildErr error
	// Both ways the controller sizes a one-machine target, by the name's parity, and every third
	// run in a shared target namespace (--target-namespace).
	tOpts := targetOptions(len(run.Name)%2 == 0, len(run.Name)%3 == 0)
	if run.Spec.Target.External == nil {
		targetNS = naming.TargetNamespace(run.Namespace, run.Name)
		if tOpts.SharedNamespace {
			targetNS = c.shared
		}
		objs, buildErr = buildTarget(run, &profile.Spec, targetNS, tOpts)
	}

	var runnerRefused, targetRefused []refusal
	dryRun := func(o client.Object, owned bool) error {
		if owned {
			if err := controllerutil.SetControllerReference(run, o, env.Scheme); err != nil {
				return err
			}
		}
		c.count(func(s *propertyStats) { s.objects++ })
		return env.Client.Create(c.ctx, o, client.DryRunAll)
	}
	runnerSide := func(o client.Object) {
		if err := dryRun(o, true); err != nil {
			runnerRefused = append(runnerRefused, refusal{o, err})
		}
	}
	targetSide := func(o client.Object) {
		if err := dryRun(o, false); err != nil {
			targetRefused = append(targetRefused, refusal{o, err})
		}
	}

	runnerSide(scriptConfigMap(run, cfg))
	opts := jobOptions(run, objs, targetNS)
	runnerSide(runners.PreflightJob(run, opts))
	switch {
	case buildErr != nil:
		// reconcileTarget ends such a run Failed InvalidTarget, with this message.
		c.count(func(s *propertyStats) { s.invalidTarget++ })
		c.t.Logf("%s: InvalidTarget (a documented runtime check): %v", run.Name, buildErr)
		return c.unexcused(run, runnerRefused, nil)
	case objs != nil && tOpts.SharedNamespace:
		if objs.Namespace != nil || objs.Quota != nil {
			return []string{"target.Build made a Namespace or a quota for the shared namespace " + targetNS}
		}
	case objs != nil:
		if objs.Namespace == nil {
			return []string{"target.Build made no Namespace for " + targetNS}
		}
		if targetSide(objs.Namespace); len(targetRefused) > 0 {
			return c.unexcused(run, runnerRefused, targetRefused)
		}
		// Namespaced objects need their namespace to exist; envtest never deletes it.
		if err := env.Client.Create(c.ctx, objs.Namespace.DeepCopy()); err != nil {
			return []string{fmt.Sprintf("creating target namespace %s: %v", targetNS, err)}
		}
	}
	if objs != nil {
		for _, o := range []client.Object{objs.Quota, objs.NetworkPolicy} {
			if !reflect.ValueOf(o).IsNil() {
				targetSide(o)
			}
		}
		for _, ref := range run.Spec.Target.ImagePullSecrets {
			// The copy of a Secret that exists in the TestRun's namespace (copyPullSecrets).
			if len(validation.IsDNS1123Subdomain(ref.Name)) == 0 { // else no such Secret can exist to copy
				src := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: ref.Name, Namespace: run.Namespace},
					Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{}}`)}}
				targetSide(pullSecretCopy(run, src, targetNS, tOpts))
			}
		}
		for _, d := range objs.Deployments {
			targetSide(d)
		}
		for _, svc := range objs.Services {
			targetSide(svc)
		}
		// Runners are created once the target's pods are placed, and kept off their node.
		opts.TargetNodes = []string{"node-a"}
	}
	n := fleetOf(run)
	for _, i := range slices.Compact([]int{0, n - 1}) {
		// Runners differ only in their segment and device range: the first and last stand for all.
		runnerSide(runners.Job(run, i, n, opts))
	}
	return c.unexcused(run, runnerRefused, targetRefused)
}

// fleetOf is the run's runner count; for auto, chosen at run time, the most it may choose.
func fleetOf(run *v1alpha1.TestRun) int {
	if n := run.RunnerCount(); n > 0 {
		return n
	}
	return runners.MaxParallelismOf(&run.Spec)
}

// unexcused are the refusals not explained by Kubernetes values the user embedded verbatim
// (env, volumes, probes, affinity, labels: core types the CRD holds without their validation,
// which CEL could not afford to repeat). Such a refusal is excused when every cause of it is
// also a cause of refusing those values on their own, in a plain Pod with nothing of
// fleetbench's. A runner Job refused so ends the run Failed RunnerRejected with the API
// server's words, a target object Failed InvalidTarget (createTargetObject); admission refuses
// the common mistakes (ports, probes) before. What fleetbench adds or combines must never be
// refused.
func (c *checker) unexcused(run *v1alpha1.TestRun, runnerRefused, targetRefused []refusal) []string {
	if len(runnerRefused)+len(targetRefused) == 0 {
		return nil
	}
	var problems []string
	own := func(refused []refusal, pods []*corev1.Pod) {
		known := map[string]bool{}
		for _, pod := range pods {
			for _, cause := range causes(env.Client.Create(c.ctx, pod, client.DryRunAll)) {
				known[cause] = true
			}
		}
		for _, r := range refused {
			if !subset(causes(r.err), known) {
				problems = append(problems, r.String())
			}
		}
	}
	own(runnerRefused, []*corev1.Pod{runnerValuesPod(run, c.home)})
	var componentPods []*corev1.Pod
	for i := range run.Spec.Target.Components {
		componentPods = append(componentPods, componentValuesPod(run, &run.Spec.Target.Components[i], c.home))
	}
	own(targetRefused, componentPods)
	if len(problems) == 0 {
		c.count(func(s *propertyStats) {
			s.ownInvalidRunner += min(len(runnerRefused), 1)
			s.ownInvalidTarget += min(len(targetRefused), 1)
		})
		c.t.Logf("%s: excused, a Kubernetes value of the spec is invalid on its own: %v", run.Name, append(runnerRefused, targetRefused...))
	}
	return problems
}

// indexes in field paths differ between a built object and the plain Pod (fleetbench's own
// volumes and containers come first).
var indexes = regexp.MustCompile(`\[[0-9]+\]`)

// causes are an API error's causes as "type field: message", the field relative to the pod
// (a Job's and a Deployment's template, or a Pod) and without indexes.
func causes(err error) []string {
	if err == nil {
		return nil
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil || len(status.Status().Details.Causes) == 0 {
		return []string{err.Error()}
	}
	var out []string
	for _, cause := range status.Status().Details.Causes {
		field := strings.TrimPrefix(cause.Field, "spec.template.")
		field = strings.TrimPrefix(field, "metadata.")
		out = append(out, fmt.Sprintf("%s %s: %s", cause.Type, indexes.ReplaceAllString(field, "[]"), cause.Message))
	}
	return out
}

func subset(items []string, of map[string]bool) bool {
	for _, it := range items {
		if !of[it] {
			return false
		}
	}
	return true
}

// runnerValuesPod holds spec.runner's embedded Kubernetes values and nothing else.
func runnerValuesPod(run *v1alpha1.TestRun, ns string) *corev1.Pod {
	r := run.Spec.Runner
	if r == nil {
		r = &v1alpha1.RunnerSpec{}
	}
	meta := ptr.Deref(r.Metadata, v1alpha1.PodMetadata{})
	sc, csc := runnerSecurityValues(r)
	var inits []corev1.Container
	for _, ic := range r.InitContainers {
		inits = append(inits, corev1.Container{Name: "init-" + strconv.Itoa(len(inits)), Image: "x", Env: ic.Env, EnvFrom: ic.EnvFrom,
			VolumeMounts: ic.VolumeMounts, WorkingDir: ic.WorkingDir, Resources: ptr.Deref(ic.Resources, corev1.ResourceRequirements{}),
			RestartPolicy: ic.RestartPolicy, SecurityContext: csc})
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "own-values", Namespace: ns, Labels: meta.Labels, Annotations: meta.Annotations},
		Spec: corev1.PodSpec{
			InitContainers: inits,
			Containers: []corev1.Container{{Name: runners.ContainerName, Image: "x", Env: r.Env, EnvFrom: r.EnvFrom, VolumeMounts: r.VolumeMounts,
				SecurityContext: csc, Resources: ptr.Deref(r.Resources, corev1.ResourceRequirements{}), Ports: run.Spec.Ports}},
			Volumes: r.Volumes, Tolerations: r.Tolerations, Affinity: r.Affinity, TopologySpreadConstraints: r.TopologySpreadConstraints,
			ImagePullSecrets: r.ImagePullSecrets, NodeSelector: r.NodeSelector, SecurityContext: sc, SchedulerName: r.SchedulerName,
		},
	}
}

// runnerSecurityValues are spec.runner's security keys alone, at the level each applies to.
func runnerSecurityValues(r *v1alpha1.RunnerSpec) (*corev1.PodSecurityContext, *corev1.SecurityContext) {
	pod := &corev1.PodSecurityContext{Sysctls: r.Sysctls}
	ctr := r.ContainerSecurityContext.DeepCopy()
	if ctr == nil {
		ctr = &corev1.SecurityContext{}
	}
	if u := r.SecurityContext; u != nil {
		pod.RunAsUser, pod.RunAsGroup, pod.RunAsNonRoot, pod.FSGroup = u.RunAsUser, u.RunAsGroup, u.RunAsNonRoot, u.FSGroup
		pod.FSGroupChangePolicy, pod.SupplementalGroups, pod.SupplementalGroupsPolicy = u.FSGroupChangePolicy, u.SupplementalGroups, u.SupplementalGroupsPolicy
		pod.Sysctls = append(slices.Clone(pod.Sysctls), u.Sysctls...)
		pod.SeccompProfile, pod.SELinuxOptions, pod.SELinuxChangePolicy = u.SeccompProfile, u.SELinuxOptions, u.SELinuxChangePolicy
		pod.AppArmorProfile, pod.WindowsOptions = u.AppArmorProfile, u.WindowsOptions
		if u.Capabilities != nil {
			ctr.Capabilities = u.Capabilities
		}
		ctr.Privileged = cmp.Or(ctr.Privileged, u.Privileged)
		ctr.AllowPrivilegeEscalation = cmp.Or(ctr.AllowPrivilegeEscalation, u.AllowPrivilegeEscalation)
		ctr.ReadOnlyRootFilesystem = cmp.Or(ctr.ReadOnlyRootFilesystem, u.ReadOnlyRootFilesystem)
		ctr.ProcMount = cmp.Or(ctr.ProcMount, u.ProcMount)
	}
	return pod, ctr
}

// componentValuesPod holds a component's embedded Kubernetes values and nothing else.
func componentValuesPod(run *v1alpha1.TestRun, comp *v1alpha1.Component, ns string) *corev1.Pod {
	ctr := corev1.Container{Name: comp.Name, Image: "x", Env: comp.Env, Ports: comp.Ports, ReadinessProbe: comp.ReadinessProbe}
	if run.Spec.Target.Sizing == v1alpha1.SizingPerComponent && comp.Resources != nil {
		ctr.Resources = *comp.Resources
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "own-values", Namespace: ns},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{ctr}, ImagePullSecrets: run.Spec.Target.ImagePullSecrets},
	}
}

// targetOptions, buildTarget and pullSecretCopy call pkg/target as the controller does
// (internal/controller/testrun/load.go, runenv/env.go, provision/provision.go): the one place to adapt when it changes.
func targetOptions(podLevelResources, shared bool) target.Options {
	return target.Options{PodLevelResources: podLevelResources, SharedNamespace: shared}
}

func buildTarget(run *v1alpha1.TestRun, profile *v1alpha1.ProfileSpec, ns string, opts target.Options) (*target.Objects, error) {
	return target.Build(run, profile, ns, opts)
}

func pullSecretCopy(run *v1alpha1.TestRun, src *corev1.Secret, ns string, opts target.Options) *corev1.Secret {
	return target.PullSecret(run, src, ns, opts)
}

// jobOptions are the controller's RunnerJobOptions (internal/controller/testrun/runenv/env.go)
// for a run whose target is still starting.
func jobOptions(run *v1alpha1.TestRun, objs *target.Objects, targetNS string) runners.JobOptions {
	var targetEnv []corev1.EnvVar
	switch {
	case run.Spec.Target.External != nil:
		targetEnv = target.ExternalEnv(run.Spec.Target.External)
	case objs != nil:
		targetEnv = objs.Env
	}
	starting := 10 * time.Minute
	return runners.JobOptions{
		Image:                 "fleetbench/runner:dev",
		ConfigMap:             naming.ScriptConfigMap(run.Name),
		HasConfig:             runners.HasConfig(&run.Spec, fleetOf(run)),
		TargetEnv:             targetEnv,
		TargetNamespace:       targetNS,
		TargetStarting:        starting,
		ActiveDeadlineSeconds: int64((starting + runners.ExpectedDuration(&run.Spec) + 15*time.Minute).Seconds()),
	}
}

// scriptConfigMap is the ConfigMap ReconcileScript makes (internal/controller/testrun/admit/script.go).
func scriptConfigMap(run *v1alpha1.TestRun, cfg []byte) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: naming.ScriptConfigMap(run.Name), Namespace: run.Namespace,
			Labels: map[string]string{naming.LabelTestRun: run.Name, naming.LabelRole: naming.RoleScript}},
		Data: map[string]string{},
	}
	if run.Spec.Script.Inline != "" {
		cm.Data[runners.ScriptKey] = run.Spec.Script.Inline
	}
	if cfg != nil {
		cm.Data[runners.ConfigKey] = string(cfg)
	}
	return cm
}

// profileFor is the built-in Profile the spec names, else C1: a user's Profile may be any size.
func (c *checker) profileFor(name string) *v1alpha1.Profile {
	if p, ok := c.profiles[strings.ToLower(name)]; ok {
		return p
	}
	return c.profiles["c1"]
}

// builtinProfiles are the Profiles the chart installs (config/profiles).
func builtinProfiles(t *testing.T) map[string]*v1alpha1.Profile {
	files, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "config", "profiles", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*v1alpha1.Profile{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		p := &v1alpha1.Profile{}
		if err := yaml.Unmarshal(raw, p); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if p.Kind == "Profile" {
			out[p.Name] = p
		}
	}
	if out["c1"] == nil || len(out) < 8 {
		t.Fatalf("built-in profiles under config/profiles: found %d, want c1…c4 and h0…h3", len(out))
	}
	return out
}

// baseSpecs are valid starting points: the shipped examples' TestRuns and hand-made specs that
// set the fields the examples leave out.
func baseSpecs(t *testing.T) []map[string]any {
	var out []map[string]any
	files, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "examples", "*", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		for _, o := range readObjects(t, f) {
			if o.GetKind() == "TestRun" {
				spec, _, _ := unstructured.NestedMap(o.Object, "spec")
				out = append(out, spec)
			}
		}
	}
	if len(out) < 5 {
		t.Fatalf("found %d TestRuns under examples/, want at least 5", len(out))
	}
	custom := v1alpha1.Component{Name: "app", Kind: v1alpha1.ComponentCustom, Image: "fleet-sut:dev",
		Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}}, Share: ptr.To[int32](40)}
	db := v1alpha1.Component{Name: "db", Kind: v1alpha1.ComponentDatabase, Share: ptr.To[int32](30), Database: &v1alpha1.DatabaseSettings{Name: "fleet"}}
	xmpp := v1alpha1.Component{Name: "xmpp", Kind: v1alpha1.ComponentXMPPBroker, Engine: "ejabberd", TLS: ptr.To(true),
		Share: ptr.To[int32](30), XMPP: &v1alpha1.XMPPSettings{Users: 100, UserPrefix: "robot"}}
	stopRule := v1alpha1.PeakStopRules{DroppedPercentAbove: ptr.To(v1alpha1.Percent(1))}
	// Explicit resources, a Secret read (refused in a shared target namespace) and egress.
	limited := v1alpha1.Component{Name: "app", Kind: v1alpha1.ComponentCustom, Image: "fleet-sut:dev", Ports: []corev1.ContainerPort{{ContainerPort: 8080}},
		Resources: &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")}},
		Env: []corev1.EnvVar{{Name: "TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "token"}, Key: "token"}}}}}
	withLimits := func(w *tw.TestRunWrapper) *tw.TestRunWrapper {
		w.Spec.Target.Egress = []v1alpha1.TargetEgress{{CIDR: "10.20.0.0/16", Ports: []v1alpha1.EgressPort{{Port: 443}}}, {CIDR: "2001:db8::/32"}}
		return w
	}
	runner := &v1alpha1.RunnerSpec{
		Env:              []corev1.EnvVar{{Name: "MODE", Value: "fast"}},
		EnvFrom:          []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "creds"}}}},
		ImagePullSecrets: []corev1.LocalObjectReference{{Name: "registry"}},
		Volumes:          []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		VolumeMounts:     []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
		Resources: &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")},
			Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}},
		NodeSelector: map[string]string{"pool": "load"},
		Tolerations:  []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "load", Effect: corev1.TaintEffectNoSchedule}},
		Sysctls:      []corev1.Sysctl{{Name: "net.ipv4.ip_local_port_range", Value: "1024 65535"}},
		Metadata:     &v1alpha1.PodMetadata{Labels: map[string]string{"team": "a"}, Annotations: map[string]string{"note": "x"}},
		AvoidTarget:  v1alpha1.AvoidTargetRequired,
	}
	for _, w := range []*tw.TestRunWrapper{
		tw.MakeTestRun("base", "x"),
		tw.MakeTestRun("base", "x").Sizing(v1alpha1.SizingPerComponent).Components(custom, db, xmpp),
		tw.MakeTestRun("base", "x").External("http://api.example.svc:8080").Parallelism(4).Separate(),
		tw.MakeTestRun("base", "x").Type(v1alpha1.TestTypePeak).Devices(100, "10s").
			Peak(&v1alpha1.PeakSpec{StepDevices: 50, StepDuration: "30s", MaxDevices: ptr.To[int32](300), StopWhen: stopRule}),
		tw.MakeTestRun("base", "x").Type(v1alpha1.TestTypeBenchmark).Devices(100, "5s").Iterations(3).
			Benchmark(&v1alpha1.BenchmarkSpec{WarmUp: "10s"}),
		tw.MakeTestRun("base", "x").Runner(runner).Parallelism(3).Args("--tag", "team=a b").
			Script(v1alpha1.ScriptSpec{ConfigMap: &v1alpha1.ConfigMapScript{Name: "scripts", File: "push.js"}}).
			Threshold("http_req_duration{scenario:push}", "p(95)<200"),
		tw.MakeTestRun("base", "x").Script(v1alpha1.ScriptSpec{VolumeClaim: &v1alpha1.VolumeClaimScript{Name: "scripts", File: "a/test.js", ReadOnly: true}}),
		withLimits(tw.MakeTestRun("base", "x").Sizing(v1alpha1.SizingPerComponent).Components(limited)),
	} {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(w.Obj())
		if err != nil {
			t.Fatal(err)
		}
		spec, _, _ := unstructured.NestedMap(u, "spec")
		out = append(out, spec)
	}
	return out
}

// regressionCase is a spec the property test once found building a refused object. Fixed in
// a builder, it must now build accepted objects; fixed in admission, it is refused with
// refusedWith in the API server's message.
type regressionCase struct {
	name, testRun, spec, refusedWith string
}

const regressionTarget = `
profile: C1
target: {components: [{name: web, kind: webServer}]}
script: {inline: "export default function () {}"}
`

func regressionSpecs() []regressionCase {
	return []regressionCase{
		// Its name labels every child, and a label value holds 63 characters.
		{name: "TestRun name of 64 characters", testRun: strings.Repeat("n", 64), spec: regressionTarget,
			refusedWith: "metadata.name must be at most 63 characters"},
		// Copied into the runner pods, where the API server checks what the CRD did not.
		{name: "runner serviceAccountName not a name", testRun: "sa", spec: regressionTarget + "runner: {serviceAccountName: a_b}",
			refusedWith: "spec.runner.serviceAccountName: Invalid value: \"string\": must be the name of a ServiceAccount"},
		{name: "runner priorityClassName with a tab", testRun: "pc", spec: regressionTarget + "runner: {priorityClassName: \"a\\tb\"}",
			refusedWith: "spec.runner.priorityClassName: Invalid value: \"string\": must be the name of a PriorityClass"},
		{name: "runner imagePullPolicy not a policy", testRun: "pp", spec: regressionTarget + "runner: {imagePullPolicy: Sometimes}",
			refusedWith: `spec.runner.imagePullPolicy: Unsupported value: "Sometimes"`},
		// The first port also makes the Service's port and the default readiness check.
		{name: "component port beyond 65535", testRun: "port", spec: `
profile: C1
target: {components: [{name: app, kind: custom, image: app:dev, ports: [{containerPort: 2147483646}]}]}
script: {inline: "export default function () {}"}
`, refusedWith: "containerPort must be between 1 and 65535"},
		// A target object the API server refuses is retried, not failed: the run would hang.
		{name: "component readinessProbe without a handler", testRun: "probe", spec: `
profile: C1
target: {components: [{name: web, kind: webServer, readinessProbe: {periodSeconds: 2}}]}
script: {inline: "export default function () {}"}
`, refusedWith: "readinessProbe needs exactly one of exec, httpGet, tcpSocket or grpc"},
		// Rules that read spec.load without has() failed to evaluate: the refusal was CEL's "no
		// such key", beside the rule that names what is missing.
		{name: "stability without load", testRun: "stab", spec: regressionTarget + "type: stability",
			refusedWith: "spec.load.duration is required when spec.type is stability"},
		{name: "peak with maxDevices without load", testRun: "peak", spec: regressionTarget + `
type: peak
peak: {stepDevices: 10, stepDuration: 30s, maxDevices: 100, stopWhen: {droppedPercentAbove: 1}}`,
			refusedWith: "spec.load.devices and spec.load.period are required when spec.type is peak"},
		// fleetbench's own spread is on this pair; the API server allows one constraint per pair.
		{name: "runner spread on kubernetes.io/hostname ScheduleAnyway", testRun: "spread", spec: regressionTarget + `
parallelism: 2
runner: {topologySpreadConstraints: [{maxSkew: 2, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: ScheduleAnyway}]}`},
	}
}

func orAdmitted(refusedWith string) string {
	if refusedWith == "" {
		return "admitted"
	}
	return fmt.Sprintf("a refusal containing %q", refusedWith)
}

// TestCapacityPlanNamesFitALabel: a plan's name labels its TestRuns (fleetbench.dev/capacityplan),
// so a name a label value cannot hold is refused when the plan is made, not when its children are.
func TestCapacityPlanNamesFitALabel(t *testing.T) {
	ctx := context.Background()
	template := tw.MakeTestRun("tpl", ns).Obj()
	template.Spec.Profile = ""
	plan := tw.MakeCapacityPlan(strings.Repeat("p", 64), ns, template, "C1").Obj()
	err := env.Client.Create(ctx, plan, client.DryRunAll)
	if err == nil || !strings.Contains(err.Error(), "metadata.name must be at most 63 characters") {
		t.Errorf("a plan named with 64 characters: got %v, want a refusal naming metadata.name", err)
	}
	plan.Name = strings.Repeat("p", 63)
	if err := env.Client.Create(ctx, plan, client.DryRunAll); err != nil {
		t.Errorf("a plan named with 63 characters refused: %v", err)
	}
}
