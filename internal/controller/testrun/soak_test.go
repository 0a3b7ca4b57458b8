//go:build soak

package testrun

import (
	"bytes"
	"encoding/json"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/event"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/controller"
	"fleetbench.dev/fleetbench/internal/testenv"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/measure"
	"fleetbench.dev/fleetbench/pkg/naming"
	"fleetbench.dev/fleetbench/pkg/runners"
)

// make soak (hack/soak/run.sh): "long runs stay cheap" (issue 28, item 5), in compressed time.
//
// Seed 000's Stab-4-672 is 3,000 devices on C2 for 40,320 minutes (2,419,200 s). For the
// operator that run is, at its production cadences (runners.SampleIntervalFor: 30 s for long
// runs; DefaultProgressInterval 10 s; the runners' 10 s windows, runners.DefaultWindow):
//
//	target memory samples        80,640  (one ConfigMap update and one status write each)
//	progress refreshes          241,920  (one live envelope per runner and one status write each)
//	runner windows per runner   241,920  (kept as at most 60, coarsened: measure.DefaultCollectorConfig)
//
// The soak plays that volume against the real reconciler and a real kube-apiserver and etcd
// (envtest): the clock is a stepped fake, so 30 s of run time pass per step, in milliseconds,
// and each step waits for the target sample it makes due. The runners are fakes that serve
// live envelopes from the runner output's own collector, fed a request every few seconds of
// simulated time. One step is one target sample and one progress refresh (a refresh every 30 s
// instead of 10 s: the progress status write per refresh is constant, 2 × 120 more an hour in
// production). SOAK_SCALES (default "1 10 100") are multiples of SOAK_BASE steps (default 806,
// a hundredth of Stab-4-672's target samples, 6.7 hours), so 100 is Stab-4-672's volume.
//
// Recorded at the end of each scale, while the run still runs, and again once it finished:
// the manager's heap in use after a GC (the test process: the reconciler, its caches and the
// fakes) and its RSS, the TestRun's bytes, the results ConfigMap's bytes, the target points it
// keeps and the seconds each stands for, the runners' kept windows and their width, the live
// envelope's bytes (what a runner's results hold: its collector's windows) and the API writes
// the manager made per simulated hour. One line per scale starts with SOAK, for run.sh's table.
func TestSoak(t *testing.T) {
	base := envInt("SOAK_BASE", 806)
	scales := strings.Fields(os.Getenv("SOAK_SCALES"))
	if len(scales) == 0 {
		scales = []string{"1", "10", "100"}
	}
	// The suite's manager runs on the real clock: this test runs its own.
	manager.Stop()
	manager = nil
	for _, sc := range scales {
		n, err := strconv.Atoi(sc)
		if err != nil || n < 1 {
			t.Fatalf("SOAK_SCALES: %q is not a positive multiple", sc)
		}
		t.Run(sc+"x", func(t *testing.T) { soakOnce(t, n, n*base) })
	}
}

const soakStep = 30 * time.Second

// soakRunner is one fake runner: the runner output's collector, fed as the clock moves.
type soakRunner struct {
	mu  sync.Mutex
	c   *measure.Collector
	fed time.Time
	now func() time.Time
}

// feedTo adds a request every 5 s of simulated time up to `to`, with a latency that varies.
func (r *soakRunner) feedTo(to time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for ; r.fed.Before(to); r.fed = r.fed.Add(5 * time.Second) {
		at := r.fed.UnixNano()
		r.c.Series("http_reqs", measure.Counter, "", nil).Add(at, 1)
		r.c.Series("http_req_failed", measure.Rate, "", nil).Add(at, 0)
		r.c.Series("http_req_duration", measure.Trend, "time", nil).Add(at, float64(5+at%37))
		r.c.Series("iterations", measure.Counter, "", nil).Add(at, 1)
	}
}

func (r *soakRunner) envelope(name string, final bool) measure.Envelope {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.c.Envelope(r.now())
	e.Runner, e.Final = name, final
	return e
}

func soakOnce(t *testing.T, scale, steps int) {
	start := time.Now().Truncate(time.Second)
	clk := clocktesting.NewFakePassiveClock(start)

	var rec *Reconciler
	m, err := testenv.StartManagerIn(env, controller.Namespaces{}, ctrl.Options{
		NewClient: func(cfg *rest.Config, opts client.Options) (client.Client, error) {
			c, err := client.NewWithWatch(cfg, opts)
			if err != nil {
				return nil, err
			}
			return interceptor.NewClient(c, writes.funcs()), nil
		},
	}, func(mgr ctrl.Manager, kueue bool) error {
		rec = New(mgr, Options{RunnerAPI: runner, Logs: logs, Stats: stats, RunnerImage: "fleetbench/runner:test",
			Timeouts: testTimeouts, PodLevelResources: true, Clock: clk, Kueue: kueue})
		return rec.SetupWithManager(mgr)
	})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Stop()

	ns := setup(t)
	length := time.Duration(steps) * soakStep
	run := tw.MakeTestRun("soak", ns).Type(v1alpha1.TestTypeStability).Parallelism(2).Devices(3000, "200s").
		Duration(v1alpha1.Duration((length + time.Hour).String())).
		Stability(&v1alpha1.StabilitySpec{SampleInterval: v1alpha1.Duration(soakStep.String())}).Obj()
	create(t, run)
	k := newKubelet(t, run)
	targetNS := k.targetNS()
	stats.set(targetNS, 300, 0)
	k.targetReady()
	pods := k.runnersReady(2)
	fleet := make([]*soakRunner, len(pods))
	for i, pod := range pods {
		fleet[i] = &soakRunner{c: measure.NewCollector(measure.DefaultCollectorConfig, start), fed: start, now: clk.Now}
		r, name := fleet[i], pod.Name
		runner.serveLive(pod, func() measure.Envelope { return r.envelope(name, false) })
	}
	waitPhase(t, run, v1alpha1.PhaseRunning, "")
	got := &v1alpha1.TestRun{}
	get := func() *v1alpha1.TestRun {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(run), got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	samples := func() int32 {
		if tu := get().Status.Target; tu != nil {
			return tu.Samples
		}
		return 0
	}
	first := samples()
	writes0 := writes.count(ns, targetNS)
	wake := func() {
		owner := &v1alpha1.TestRun{ObjectMeta: metav1.ObjectMeta{Namespace: run.Namespace, Name: run.Name}}
		select {
		case rec.calls.wake <- event.TypedGenericEvent[*v1alpha1.TestRun]{Object: owner}:
		default: // a wake is queued already
		}
	}
	began := time.Now()
	for i := 1; i <= steps; i++ {
		clk.SetTime(clk.Now().Add(soakStep))
		for _, r := range fleet {
			r.feedTo(clk.Now())
		}
		// Memory that wobbles and CPU time that grows: a healthy target.
		stats.set(targetNS, 300+uint64(i%7), float64(i)*3)
		want := first + int32(i)
		deadline := time.Now().Add(30 * time.Second)
		for samples() < want {
			if time.Now().After(deadline) {
				t.Fatalf("step %d of %d: no target sample within 30 s (%d, want %d); status %s/%s %s", i, steps, samples(), want,
					got.Status.Phase, got.Status.Reason, got.Status.Message)
			}
			wake()
			time.Sleep(2 * time.Millisecond)
		}
		if i%1000 == 0 {
			t.Logf("%dx: %d of %d steps, %s", scale, i, steps, time.Since(began).Round(time.Second))
		}
	}
	hours := length.Hours()
	during := soakFigures(t, get(), targetNS)
	during.writesPerHour = float64(writes.count(ns, targetNS)-writes0) / hours
	env0 := fleet[0].envelope(pods[0].Name, false)
	during.envelopeBytes = measure.SizeOf(&env0)
	during.windows = windowsOf(&env0)

	// The run ends: the runners exit with their final envelopes in their logs.
	for i, pod := range pods {
		e := fleet[i].envelope(pod.Name, true)
		var buf bytes.Buffer
		if err := measure.Encode(&buf, &e); err != nil {
			t.Fatal(err)
		}
		logs.set(pod, buf.Bytes(), nil)
		soakFinish(t, k, pod, clk.Now())
	}
	deadline := time.Now().Add(2 * time.Minute)
	for get().Status.Phase != v1alpha1.PhaseSucceeded {
		if time.Now().After(deadline) || got.Status.Phase == v1alpha1.PhaseFailed {
			t.Fatalf("the soak run did not succeed: %s/%s %s", got.Status.Phase, got.Status.Reason, got.Status.Message)
		}
		clk.SetTime(clk.Now().Add(time.Second))
		wake()
		time.Sleep(20 * time.Millisecond)
	}
	after := soakFigures(t, got, targetNS)
	t.Logf("SOAK scale=%d steps=%d simulated=%s wall=%s heapMiB=%.1f rssMiB=%.1f statusBytes=%d cmBytes=%d points=%d secondsPerPoint=%.0f "+
		"windows=%d windowSeconds=%.0f envelopeBytes=%d writesPerHour=%.1f endStatusBytes=%d endCMBytes=%d endHeapMiB=%.1f verdict=%s",
		scale, steps, length, time.Since(began).Round(time.Second), during.heapMiB, during.rssMiB, during.statusBytes, during.cmBytes, during.points,
		length.Seconds()/float64(max(during.points, 1)), during.windows, float64(env0.WindowNanos)/1e9, during.envelopeBytes, during.writesPerHour, after.statusBytes, after.cmBytes, after.heapMiB, got.Status.Verdict)
}

type soakFigure struct {
	heapMiB, rssMiB      float64
	statusBytes, cmBytes int
	points, windows      int
	envelopeBytes        int64
	writesPerHour        float64
}

func soakFigures(t *testing.T, run *v1alpha1.TestRun, targetNS string) soakFigure {
	t.Helper()
	var f soakFigure
	raw, _ := json.Marshal(run)
	f.statusBytes = len(raw)
	cm := &corev1.ConfigMap{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: naming.ResultConfigMap(run.Name)}, cm); err == nil {
		raw, _ = json.Marshal(cm)
		f.cmBytes = len(raw)
		f.points = len(targetPoints(cm))
	} else {
		t.Logf("results ConfigMap: %v", err)
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	f.heapMiB = float64(ms.HeapInuse) / (1 << 20)
	f.rssMiB = selfRSSMiB()
	_ = targetNS
	return f
}

func windowsOf(e *measure.Envelope) int {
	n := 0
	for _, m := range e.Metrics {
		for _, s := range m.Series {
			n = max(n, len(s.Windows))
		}
	}
	return n
}

// soakFinish ends a runner pod at the fake clock's time.
func soakFinish(t *testing.T, k *kubelet, pod *corev1.Pod, at time.Time) {
	t.Helper()
	if err := k.c.Get(k.ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
		t.Fatal(err)
	}
	pod.Status.Phase = corev1.PodSucceeded
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: runners.ContainerName,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", FinishedAt: metav1.NewTime(at)}}}}
	if err := k.c.Status().Update(k.ctx, pod); err != nil {
		t.Fatal(err)
	}
}

func selfRSSMiB() float64 {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}
