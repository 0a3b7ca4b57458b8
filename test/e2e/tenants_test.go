//go:build e2e

package e2e

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/config"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/naming"
	"fleetbench.dev/fleetbench/pkg/runners"
)

// TestHostileTenant: a user with only the cluster's `edit` role in namespace e2e-team (which
// aggregates fleetbench-edit) attacks while another team's run measures in e2e-team-prod:
//   - a run named so that the old `fb-<ns>-<name>` target namespaces collide (prod-x in
//     e2e-team, x in e2e-team-prod), deleted mid-run;
//   - a look-alike runner pod carrying a run's runner labels, that run's real runners kept
//     Pending, redirecting every manager call to the victim's canary Service;
//   - runs whose runner image is the tenant's own (fleetbench/hostile:dev, the stand-in for
//     it): one redirects the manager's calls to the canary, one answers every result envelope
//     with a decompression bomb;
//   - a run whose finalizer is stripped before it is deleted, leaving its target behind.
//
// The victim's run must pass on time with every request counted, the manager must not restart
// and its peak RSS must stay within 2× what it was before, nothing may reach the canary, and
// the orphaned target must be swept.
func TestHostileTenant(t *testing.T) {
	e := newEnv(t)
	victimNS := e.namespace(t, "e2e-team-prod")
	attackerNS := e.namespace(t, "e2e-team")
	mallory := e.userClient(t, "mallory", attackerNS)
	managerBefore := e.managerPods(t)
	rss := watchManagerRSS(t)

	canary := e.canary(t, victimNS)
	canaryURL := fmt.Sprintf("http://%s.%s.svc:80", canary, victimNS)
	canaryBefore := e.nginxRequests(t, victimNS, canary)

	victim := tw.MakeTestRun("x", victimNS).Inline(arrivalScript).Parallelism(2).
		Threshold("http_req_failed", "rate<0.01").
		Cleanup(v1alpha1.TargetKeepUntilDeleted).Obj()
	victimTargetNS := naming.TargetNamespace(victimNS, victim.Name)
	e.dumpOnFailure(t, client.ObjectKeyFromObject(victim), victimTargetNS)
	if err := e.c.Create(e.ctx, victim); err != nil {
		t.Fatal(err)
	}
	e.eventually(t, "the victim's target namespace", 2*time.Minute, func() (bool, string) {
		err := e.c.Get(e.ctx, client.ObjectKey{Name: victimTargetNS}, &corev1.Namespace{})
		return err == nil, fmt.Sprint(err)
	})

	// The attacker's targets are small (the local cluster must hold them beside the victim's C1),
	// and runs that need no target of their own get an external one.
	small := e.smallProfile(t, "e2e-tenant")
	const nowhere = "http://nothing.e2e-team.svc:80"
	create := func(run *v1alpha1.TestRun) *v1alpha1.TestRun {
		t.Helper()
		if err := mallory.Create(e.ctx, run); err != nil {
			t.Fatalf("mallory creating %s: %v", run.Name, err)
		}
		return run
	}
	// 1. The colliding name, deleted by its author as soon as it started or failed.
	collide := create(tw.MakeTestRun("prod-x", attackerNS).Profile(small).Inline(longScript).Obj())
	if naming.TargetNamespace(attackerNS, collide.Name) == victimTargetNS {
		t.Errorf("runs %s/%s and %s/%s are given the same target namespace %s", attackerNS, collide.Name, victimNS, victim.Name, victimTargetNS)
	}
	// 2. The look-alike runner of a run whose own runners can never be scheduled.
	// A topology spread over a label no node has keeps the real runners Pending; the pre-flight,
	// one pod with nothing to spread, runs without it and passes.
	lureRun := tw.MakeTestRun("lure", attackerNS).Inline(longScript).Obj()
	lure := create(tw.MakeTestRun("lure", attackerNS).External(nowhere).Inline(longScript).
		Runner(&v1alpha1.RunnerSpec{TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{
			MaxSkew: 1, TopologyKey: "fleetbench.dev/e2e-nowhere", WhenUnsatisfiable: corev1.DoNotSchedule,
			LabelSelector: &metav1.LabelSelector{MatchLabels: runners.RunnerLabels(lureRun)}}}}).
		Timeouts(&v1alpha1.TimeoutsSpec{RunnersReady: "40s"}).Obj())
	// Made after the real runner pod, so that a manager picking the newest labelled pod picks it.
	e.eventually(t, "the lure's real runner pod", 2*time.Minute, func() (bool, string) {
		var pods corev1.PodList
		err := e.c.List(e.ctx, &pods, client.InNamespace(attackerNS), client.MatchingLabels(runners.RunnerLabels(lure)))
		return err == nil && len(pods.Items) > 0, fmt.Sprint(err)
	})
	lookAlike := e.lookAlikeRunner(t, mallory, lure, canaryURL)
	// 3. The tenant's own runner image, redirecting and bombing.
	redirect := create(hostileRun("redirect", attackerNS, "redirect", canaryURL, nowhere))
	bomb := create(hostileRun("bomb", attackerNS, "bomb", "", nowhere))
	// 4. A run whose finalizer its author strips before deleting it.
	orphan := create(tw.MakeTestRun("orphan", attackerNS).Profile(small).Inline(longScript).Obj())
	orphanTargetNS := naming.TargetNamespace(attackerNS, orphan.Name)

	e.waitStartedOrFinished(t, collide, 3*time.Minute)
	if err := mallory.Delete(e.ctx, collide); err != nil {
		t.Fatalf("mallory deleting %s: %v", collide.Name, err)
	}
	e.waitStartedOrFinished(t, orphan, 3*time.Minute)
	if err := mallory.Patch(e.ctx, orphan, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))); err != nil {
		t.Fatalf("mallory stripping the finalizer of %s: %v", orphan.Name, err)
	}
	if err := mallory.Delete(e.ctx, orphan); err != nil {
		t.Fatalf("mallory deleting %s: %v", orphan.Name, err)
	}

	// The victim: Succeeded, PASSED, every request nginx served counted, on time.
	got, _ := e.waitFinished(t, victim, 4*time.Minute)
	if got.Status.Phase != v1alpha1.PhaseSucceeded || got.Status.Verdict != v1alpha1.VerdictPassed {
		t.Fatalf("victim %s/%s verdict %s: %s", got.Status.Phase, got.Status.Reason, got.Status.Verdict, got.Status.Message)
	}
	res := got.Status.Results
	if res == nil || res.Requests == nil || res.Partial {
		t.Fatalf("victim's results incomplete: %+v", res)
	}
	// stub_status also counts the probes and this read: the run's requests are at most what
	// nginx served, and all 4,000 the arrival rate makes are there.
	if served := e.nginxRequests(t, victimTargetNS, "web"); res.Requests.Total < 4000 || res.Requests.Total > served {
		t.Errorf("victim counted %d requests; nginx served %d; want 4000 ≤ counted ≤ served", res.Requests.Total, served)
	}
	if got.Status.StartTime == nil || got.Status.CompletionTime == nil {
		t.Fatalf("victim has no start or completion time")
	}
	// The load is 20 s; ending it and collecting take a few more. An OOM-looping manager made
	// this 29-163 s late.
	if late := got.Status.CompletionTime.Sub(got.Status.StartTime.Time) - 20*time.Second; late > 15*time.Second {
		t.Errorf("victim completed %s after its load's end, want ≤ 15 s", late.Round(time.Second))
	}
	if wait := got.Status.StartTime.Sub(got.CreationTimestamp.Time); wait > 90*time.Second {
		t.Errorf("victim started %s after its creation, want ≤ 90 s", wait.Round(time.Second))
	}

	// The attacker's runs end Failed, each with its reason, and none carries the canary's words.
	for run, reason := range map[*v1alpha1.TestRun]string{lure: v1alpha1.ReasonRunnerUnschedulable,
		redirect: v1alpha1.ReasonStartFailed, bomb: v1alpha1.ReasonRunnerResultRejected} {
		done, _ := e.waitFinished(t, run, 4*time.Minute)
		t.Logf("attacker's %s: %s/%s: %s", run.Name, done.Status.Phase, done.Status.Reason, done.Status.Message)
		if done.Status.Phase != v1alpha1.PhaseFailed || done.Status.Reason != reason {
			t.Errorf("attacker's %s ended %s/%s, want Failed/%s", run.Name, done.Status.Phase, done.Status.Reason, reason)
		}
		if strings.Contains(done.Status.Message, "nginx") || strings.Contains(done.Status.Message, "<html") {
			t.Errorf("attacker's %s carries the canary's answer in its status: %s", run.Name, done.Status.Message)
		}
	}
	// Each read of stub_status counts itself: one read before, one now.
	if n := e.nginxRequests(t, victimNS, canary) - canaryBefore; n != 1 {
		t.Errorf("the victim's canary served %d requests during the attack, want 0 (besides this read)", n-1)
	}
	if n := e.hostileRequests(t, attackerNS, lookAlike); n != 0 {
		t.Errorf("the look-alike runner got %d calls, want 0: the manager talked to a pod no runner Job of the run made", n)
	}

	// The stripped finalizer: the sweeper removes the target whose TestRun is gone.
	e.waitGone(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: orphanTargetNS}}, 4*time.Minute)

	// The manager never restarted, and its memory stayed bounded.
	after := e.managerPods(t)
	for uid, restarts := range managerBefore {
		if now, ok := after[uid]; !ok || now != restarts {
			t.Errorf("manager pod %s: restarts %d before, %d after (present %v)", uid, restarts, now, ok)
		}
	}
	rss.check(t)
}

// longScript runs 60 s at a low rate: long enough to be deleted mid-run.
const longScript = `import http from 'k6/http';
export const options = {
  scenarios: { load: { executor: 'constant-arrival-rate', rate: 5, timeUnit: '1s', duration: '60s', preAllocatedVUs: 5 } },
};
export default function () { http.get(` + "`${__ENV.TARGET_WEB_URL}/`" + `); }
`

// smallProfile is a Profile of C1's shape scaled down to a fifth, made for the test.
func (e *env) smallProfile(t *testing.T, name string) string {
	t.Helper()
	p := &v1alpha1.Profile{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.ProfileSpec{
		CPU: resource.MustParse("200m"), Memory: resource.MustParse("128Mi"), Description: "e2e: C1's shape, a fifth of it"}}
	// One left by an earlier run (E2E_KEEP, a crash) goes first.
	if err := e.c.Delete(e.ctx, p.DeepCopy()); err == nil || !apierrors.IsNotFound(err) {
		e.waitGone(t, p.DeepCopy(), 2*time.Minute)
	}
	if err := e.c.Create(e.ctx, p); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.c.Delete(e.ctx, p) })
	return name
}

// userClient acts as user, bound to the cluster's edit role in namespace ns only, as a team
// member would be.
func (e *env) userClient(t *testing.T, user, ns string) client.Client {
	t.Helper()
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user, Namespace: ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}}
	if err := e.c.Create(e.ctx, rb); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.GetConfig()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Timeout = 30 * time.Second
	cfg.Impersonate.UserName = user
	c, err := client.New(cfg, client.Options{Scheme: e.c.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	// The aggregation controller merges fleetbench-edit into edit a moment after install.
	e.eventually(t, user+" may list TestRuns in "+ns, 30*time.Second, func() (bool, string) {
		err := c.List(e.ctx, &v1alpha1.TestRunList{}, client.InNamespace(ns))
		return err == nil, fmt.Sprint(err)
	})
	return c
}

// managerPods maps each manager pod's UID to its containers' restarts.
func (e *env) managerPods(t *testing.T) map[types.UID]int32 {
	t.Helper()
	var pods corev1.PodList
	if err := e.c.List(e.ctx, &pods, client.InNamespace(managerNamespace)); err != nil {
		t.Fatal(err)
	}
	out := map[types.UID]int32{}
	for _, p := range pods.Items {
		if !strings.Contains(p.Name, "fleetbench") {
			continue
		}
		var restarts int32
		for _, cs := range p.Status.ContainerStatuses {
			restarts += cs.RestartCount
		}
		out[p.UID] = restarts
	}
	if len(out) == 0 {
		t.Fatalf("no manager pod in %s", managerNamespace)
	}
	return out
}

// canary is an nginx Service in ns that nothing should ever call; its stub_status counts what did.
func (e *env) canary(t *testing.T, ns string) string {
	t.Helper()
	const name = "canary"
	e.createServedPod(t, e.c, nginxPod(ns, name), 8080)
	return name
}

// nginxPod is an nginx pod labelled app=name, listening on 8080 (createServedPod's Service
// serves it on 80), under the restricted Pod Security level.
func nginxPod(ns, name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app": name}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: nginxImage, ImagePullPolicy: corev1.PullNever,
			Env:             []corev1.EnvVar{{Name: "LISTEN_PORT", Value: "8080"}},
			SecurityContext: restrictedContainer(),
			VolumeMounts:    []corev1.VolumeMount{{Name: "run", MountPath: "/run"}}}},
			SecurityContext: restrictedPod(),
			Volumes:         []corev1.Volume{{Name: "run", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}}}
}

// lookAlikeRunner makes, as the attacker, a pod of the hostile image labelled as runner 0 of
// run, redirecting every k6 REST API call to redirect, and a Service whose /requests counts the
// calls it got. It returns the Service's name.
func (e *env) lookAlikeRunner(t *testing.T, c client.Client, run *v1alpha1.TestRun, redirect string) string {
	t.Helper()
	name := run.Name + "-look-alike"
	labels := runners.RunnerLabels(run)
	labels[naming.LabelRunnerIndex] = "0"
	labels["app"] = name
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: run.Namespace, Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: runners.ContainerName, Image: hostileImage, ImagePullPolicy: corev1.PullNever,
			Env:             hostileEnv("redirect", redirect),
			SecurityContext: restrictedContainer(),
			Ports:           []corev1.ContainerPort{{ContainerPort: runners.APIPort}, {ContainerPort: runners.LivePort}, {ContainerPort: 8080}}}},
			SecurityContext: restrictedPod()}}
	e.createServedPod(t, c, pod, 8080)
	return name
}

// hostileRequests is how many calls the hostile pod behind service got, besides kubelet probes.
func (e *env) hostileRequests(t *testing.T, ns, service string) int64 {
	t.Helper()
	path := fmt.Sprintf("/api/v1/namespaces/%s/services/%s:80/proxy/requests", ns, service)
	body, err := e.cs.CoreV1().RESTClient().Get().AbsPath(path).DoRaw(e.ctx)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(body)), 10, 64)
	if err != nil {
		t.Fatalf("GET %s: %q", path, body)
	}
	return n
}

func hostileEnv(mode, redirect string) []corev1.EnvVar {
	return []corev1.EnvVar{{Name: "MODE", Value: mode}, {Name: "REDIRECT", Value: redirect}}
}

// hostileRun is a run in ns against an external target whose one runner is the hostile image in mode.
func hostileRun(name, ns, mode, redirect, target string) *v1alpha1.TestRun {
	return tw.MakeTestRun(name, ns).External(target).Inline(longScript).
		Runner(&v1alpha1.RunnerSpec{Image: hostileImage, ImagePullPolicy: corev1.PullNever, Env: hostileEnv(mode, redirect)}).
		Timeouts(&v1alpha1.TimeoutsSpec{RunnersReady: "60s", Collection: "60s"}).Obj()
}

// createServedPod creates pod with c and a Service of the pod's name on port 80 to port, and
// waits until the pod is Ready.
func (e *env) createServedPod(t *testing.T, c client.Client, pod *corev1.Pod, port int32) {
	t.Helper()
	if err := c.Create(e.ctx, pod); err != nil {
		t.Fatalf("creating pod %s/%s: %v", pod.Namespace, pod.Name, err)
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": pod.Labels["app"]},
			Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(port)}}}}
	if err := c.Create(e.ctx, svc); err != nil {
		t.Fatalf("creating service %s/%s: %v", svc.Namespace, svc.Name, err)
	}
	e.eventually(t, "pod "+pod.Name+" Ready", 2*time.Minute, func() (bool, string) {
		got := &corev1.Pod{}
		if err := e.c.Get(e.ctx, client.ObjectKeyFromObject(pod), got); err != nil {
			return false, err.Error()
		}
		for _, cond := range got.Status.Conditions {
			if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
				return true, ""
			}
		}
		return false, string(got.Status.Phase)
	})
	// The service proxy answers 503 until the endpoint controller has published the Ready pod.
	e.eventually(t, "service "+svc.Name+" has a ready endpoint", time.Minute, func() (bool, string) {
		var slices discoveryv1.EndpointSliceList
		if err := e.c.List(e.ctx, &slices, client.InNamespace(svc.Namespace), client.MatchingLabels{discoveryv1.LabelServiceName: svc.Name}); err != nil {
			return false, err.Error()
		}
		for _, sl := range slices.Items {
			for _, ep := range sl.Endpoints {
				if ep.Conditions.Ready != nil && *ep.Conditions.Ready {
					return true, ""
				}
			}
		}
		return false, fmt.Sprintf("%d endpoint slices, none ready", len(slices.Items))
	})
}

// waitStartedOrFinished waits until run's load started, or it ended (a run refused early).
func (e *env) waitStartedOrFinished(t *testing.T, run *v1alpha1.TestRun, timeout time.Duration) {
	t.Helper()
	e.eventually(t, "TestRun "+run.Name+" started or finished", timeout, func() (bool, string) {
		got := &v1alpha1.TestRun{}
		if err := e.c.Get(e.ctx, client.ObjectKeyFromObject(run), got); err != nil {
			return apierrors.IsNotFound(err), err.Error()
		}
		done := got.Status.Phase == v1alpha1.PhaseSucceeded || got.Status.Phase == v1alpha1.PhaseFailed
		return got.Status.StartTime != nil || done, fmt.Sprintf("%s/%s", got.Status.Phase, got.Status.Reason)
	})
}

const (
	nginxImage   = "fleetbench/nginx:dev"
	hostileImage = "fleetbench/hostile:dev"
)

func restrictedPod() *corev1.PodSecurityContext {
	yes := true
	return &corev1.PodSecurityContext{RunAsNonRoot: &yes, SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
}

func restrictedContainer() *corev1.SecurityContext {
	no := false
	return &corev1.SecurityContext{AllowPrivilegeEscalation: &no, Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}
}

// managerRSS follows the manager's process on this machine (the local cluster's pods are this
// machine's processes): its RSS before the attack and its peak (VmHWM, reset at the start).
type managerRSS struct {
	pids []int
	idle map[int]int64
}

func watchManagerRSS(t *testing.T) *managerRSS {
	t.Helper()
	m := &managerRSS{idle: map[int]int64{}}
	entries, _ := os.ReadDir("/proc")
	for _, d := range entries {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil || !bytes.HasPrefix(cmd, []byte("/manager\x00")) {
			continue
		}
		// Writing 5 resets the peak RSS to the current one (proc(5), clear_refs).
		if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
			t.Logf("manager pid %d: resetting its peak RSS: %v", pid, err)
			continue
		}
		m.pids = append(m.pids, pid)
		m.idle[pid] = procStatusKiB(pid, "VmRSS")
	}
	if len(m.pids) == 0 {
		t.Logf("no manager process on this machine (a remote cluster): its RSS is not measured")
	}
	return m
}

// check fails unless every manager's peak RSS stayed within 2× its RSS before the attack.
func (m *managerRSS) check(t *testing.T) {
	t.Helper()
	for _, pid := range m.pids {
		peak := procStatusKiB(pid, "VmHWM")
		t.Logf("manager pid %d: RSS %d MiB before the attack, peak %d MiB during it (%.2f×)", pid, m.idle[pid]>>10, peak>>10, float64(peak)/float64(m.idle[pid]))
		if peak > 2*m.idle[pid] {
			t.Errorf("manager pid %d: peak RSS %d KiB, more than 2× its %d KiB before the attack", pid, peak, m.idle[pid])
		}
	}
}

// idleMiB is the largest RSS of the managers when watchManagerRSS began; 0 when none is local.
func (m *managerRSS) idleMiB() int64 {
	var idle int64
	for _, kib := range m.idle {
		idle = max(idle, kib>>10)
	}
	return idle
}

// peakMiB is the largest peak RSS of the managers since watchManagerRSS; 0 when none is local.
func (m *managerRSS) peakMiB() int64 {
	var peak int64
	for _, pid := range m.pids {
		peak = max(peak, procStatusKiB(pid, "VmHWM")>>10)
	}
	return peak
}

// procStatusKiB reads one "Name: N kB" line of /proc/PID/status; -1 when absent.
func procStatusKiB(pid int, name string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return -1
}
