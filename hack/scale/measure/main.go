// Command measure drives and times the scale benchmark's TestRuns (hack/scale/run.sh): it creates
// TestRuns against the local kwok cluster, watches their Jobs, pods and phase, reads the
// stand-in's un-pause arrivals, the manager's /metrics, /proc and the API server's audit log,
// and prints one JSON result per scenario.
//
//	measure single -runners N      one TestRun of N runners
//	measure multi -runs 20 -runners 50   20 TestRuns created at once
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"fleetbench.dev/fleetbench/pkg/naming"
)

var testRuns = schema.GroupVersionResource{Group: "fleetbench.dev", Version: "v1alpha1", Resource: "testruns"}

type config struct {
	kubeconfig, standin, metrics, auditLog, managerUser, out string
	pid, runners, runs                                       int
	timeout, hold                                            time.Duration
}

type env struct {
	config
	kube *kubernetes.Clientset
	dyn  dynamic.Interface
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: measure single|multi [flags]")
		os.Exit(2)
	}
	mode := os.Args[1]
	var c config
	fs := flag.NewFlagSet(mode, flag.ExitOnError)
	fs.StringVar(&c.kubeconfig, "kubeconfig", "", "admin kubeconfig")
	fs.StringVar(&c.standin, "standin", "http://127.0.0.1:6599", "stand-in control address")
	fs.StringVar(&c.metrics, "metrics", "http://127.0.0.1:8080/metrics", "manager metrics")
	fs.StringVar(&c.auditLog, "audit-log", "", "API server audit log")
	fs.StringVar(&c.managerUser, "manager-user", "fleetbench-manager", "the manager's user name in the audit log")
	fs.StringVar(&c.out, "out", "", "append the JSON result to this file")
	fs.IntVar(&c.pid, "manager-pid", 0, "the manager's pid")
	fs.IntVar(&c.runners, "runners", 10, "spec.parallelism")
	fs.IntVar(&c.runs, "runs", 20, "TestRuns created at once (multi)")
	fs.DurationVar(&c.timeout, "timeout", 5*time.Minute, "bound of every wait")
	fs.DurationVar(&c.hold, "hold", 5*time.Second, "how long a run stays Running before it is deleted")
	_ = fs.Parse(os.Args[2:])

	if mode == "table" {
		must(table(fs.Args()))
		return
	}
	rest, err := clientcmd.BuildConfigFromFlags("", c.kubeconfig)
	must(err)
	rest.QPS, rest.Burst = 500, 1000
	e := &env{config: c, kube: kubernetes.NewForConfigOrDie(rest), dyn: dynamic.NewForConfigOrDie(rest)}
	var res any
	switch mode {
	case "single":
		res, err = e.single()
	case "multi":
		res, err = e.multi()
	default:
		err = fmt.Errorf("unknown mode %q", mode)
	}
	if res != nil {
		b, _ := json.Marshal(res)
		fmt.Println(string(b))
		if c.out != "" {
			f, ferr := os.OpenFile(c.out, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
			must(ferr)
			_, _ = f.Write(append(b, '\n'))
			_ = f.Close()
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "measure:", err)
		os.Exit(1)
	}
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "measure:", err)
		os.Exit(1)
	}
}

func logf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "   [%s] %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, a...))
}

// testRun is the benchmark's TestRun: an external target (nothing provisioned) and a script
// whose load only the script knows, so the run stays Running until it is deleted.
func testRun(ns, name string, runners int) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "fleetbench.dev/v1alpha1",
		"kind":       "TestRun",
		"metadata":   map[string]any{"name": name, "namespace": ns},
		"spec": map[string]any{
			"target":      map[string]any{"external": map[string]any{"url": "http://127.0.0.1:1/"}},
			"parallelism": int64(runners),
			"script": map[string]any{"inline": "export const options = { vus: 1, duration: '30m' };\n" +
				"export default function () {}\n"},
		},
	}}
}

// tracker follows one TestRun's runner Jobs, pods and phase through watches, timing each
// milestone on this process's clock.
type tracker struct {
	ns, name string
	n        int
	created  time.Time

	mu                          sync.Mutex
	jobs, ready                 map[string]bool
	firstJob, allJobs, allReady time.Time
	running                     time.Time
	phase                       string
	status                      map[string]any
	done                        chan struct{}
}

func (e *env) track(ctx context.Context, ns, name string, n int) (*tracker, error) {
	t := &tracker{ns: ns, name: name, n: n, jobs: map[string]bool{}, ready: map[string]bool{}, done: make(chan struct{})}
	sel := naming.LabelRole + "=" + naming.RoleRunner
	jobs := func(rv string) (watch.Interface, error) {
		return e.kube.BatchV1().Jobs(ns).Watch(ctx, metav1.ListOptions{LabelSelector: sel, ResourceVersion: rv})
	}
	pods := func(rv string) (watch.Interface, error) {
		return e.kube.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{LabelSelector: sel, ResourceVersion: rv})
	}
	runs := func(rv string) (watch.Interface, error) {
		return e.dyn.Resource(testRuns).Namespace(ns).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name, ResourceVersion: rv})
	}
	jw, err := resumable(ctx, jobs)
	if err != nil {
		return nil, err
	}
	pw, err := resumable(ctx, pods)
	if err != nil {
		return nil, err
	}
	tw, err := resumable(ctx, runs)
	if err != nil {
		return nil, err
	}
	go func() {
		for ev := range jw {
			if ev.Type != watch.Added {
				continue
			}
			now := time.Now()
			o, ok := ev.Object.(metav1.Object)
			if !ok {
				continue
			}
			t.mu.Lock()
			if t.firstJob.IsZero() {
				t.firstJob = now
			}
			t.jobs[o.GetName()] = true
			if len(t.jobs) == t.n && t.allJobs.IsZero() {
				t.allJobs = now
			}
			t.mu.Unlock()
		}
	}()
	go func() {
		for ev := range pw {
			now := time.Now()
			pod, ok := ev.Object.(*corev1.Pod)
			if !ok || ev.Type == watch.Deleted {
				continue
			}
			ready := false
			for _, c := range pod.Status.Conditions {
				if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
					ready = true
				}
			}
			t.mu.Lock()
			if ready {
				t.ready[pod.Name] = true
			}
			if len(t.ready) == t.n && t.allReady.IsZero() {
				t.allReady = now
			}
			t.mu.Unlock()
		}
	}()
	go func() {
		for ev := range tw {
			now := time.Now()
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				continue
			}
			phase, _, _ := unstructured.NestedString(u.Object, "status", "phase")
			st, _, _ := unstructured.NestedMap(u.Object, "status")
			t.mu.Lock()
			t.phase, t.status = phase, st
			if phase == "Running" && t.running.IsZero() {
				t.running = now
				close(t.done)
			}
			if (phase == "Failed" || phase == "Succeeded") && t.running.IsZero() {
				t.running = now
				close(t.done)
			}
			t.mu.Unlock()
		}
	}()
	return t, nil
}

// resumable watches from now on and, when the API server ends the watch (a slow consumer's
// watch is closed), watches again from the last resource version seen, so no event is lost.
func resumable(ctx context.Context, start func(rv string) (watch.Interface, error)) (<-chan watch.Event, error) {
	w, err := start("")
	if err != nil {
		return nil, err
	}
	out := make(chan watch.Event, 1024)
	go func() {
		defer close(out)
		rv := ""
		for {
			for ev := range w.ResultChan() {
				if ev.Type == watch.Error {
					// e.g. 410 Gone: resume from now; events in between are lost (and logged).
					if ctx.Err() == nil {
						logf("watch error: %v", ev.Object)
					}
					rv = ""
					continue
				}
				if o, ok := ev.Object.(metav1.Object); ok {
					rv = o.GetResourceVersion()
				}
				out <- ev
			}
			if ctx.Err() != nil {
				return
			}
			for {
				if w, err = start(rv); err == nil {
					break
				}
				if ctx.Err() != nil {
					return
				}
				logf("watch again: %v", err)
				time.Sleep(200 * time.Millisecond)
			}
		}
	}()
	return out, nil
}

func secs(from, to time.Time) float64 {
	if from.IsZero() || to.IsZero() {
		return -1
	}
	return math.Round(to.Sub(from).Seconds()*1000) / 1000
}

// targetReady is the TestRun's TargetReady condition's lastTransitionTime (1 s resolution).
func targetReady(st map[string]any) time.Time {
	conds, _, _ := unstructured.NestedSlice(st, "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "TargetReady" && m["status"] == "True" {
			ts, _ := m["lastTransitionTime"].(string)
			t, _ := time.Parse(time.RFC3339, ts)
			return t
		}
	}
	return time.Time{}
}

// Metrics of the manager, parsed from the Prometheus text format.
type metrics map[string]float64

func (e *env) scrape() (metrics, error) {
	resp, err := http.Get(e.metrics)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	m := metrics{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		m[line[:i]] = v
	}
	return m, sc.Err()
}

// sum adds every series whose name is name and whose labels contain all of want.
func (m metrics) sum(name string, want ...string) float64 {
	total := 0.0
	for k, v := range m {
		if k != name && !strings.HasPrefix(k, name+"{") {
			continue
		}
		ok := true
		for _, w := range want {
			if !strings.Contains(k, w) {
				ok = false
			}
		}
		if ok {
			total += v
		}
	}
	return total
}

func (m metrics) has(prefix string) bool {
	for k := range m {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}

// quantile of the delta of a histogram between two scrapes.
func quantile(before, after metrics, name, label string, q float64) float64 {
	type bucket struct{ le, n float64 }
	var bs []bucket
	for k, v := range after {
		if !strings.HasPrefix(k, name+"_bucket{") || !strings.Contains(k, label) {
			continue
		}
		i := strings.Index(k, `le="`)
		if i < 0 {
			continue
		}
		rest := k[i+4:]
		leS := rest[:strings.IndexByte(rest, '"')]
		le := math.Inf(1)
		if leS != "+Inf" {
			le, _ = strconv.ParseFloat(leS, 64)
		}
		bs = append(bs, bucket{le, v - before[k]})
	}
	sort.Slice(bs, func(i, j int) bool { return bs[i].le < bs[j].le })
	if len(bs) == 0 || bs[len(bs)-1].n == 0 {
		return -1
	}
	total := bs[len(bs)-1].n
	prevLe, prevN := 0.0, 0.0
	for _, b := range bs {
		if b.n >= q*total {
			if math.IsInf(b.le, 1) {
				return prevLe
			}
			// linear inside the bucket, as Prometheus' histogram_quantile
			return prevLe + (b.le-prevLe)*(q*total-prevN)/math.Max(b.n-prevN, 1e-9)
		}
		prevLe, prevN = b.le, b.n
	}
	return -1
}

// proc is the manager's CPU seconds and peak RSS.
type proc struct {
	cpu     float64
	peakMiB float64
}

func (e *env) readProc() (proc, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", e.pid))
	if err != nil {
		return proc{}, err
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	// fields after the command: state is f[0]; utime and stime are stat fields 14 and 15.
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	p := proc{cpu: (ut + st) / 100} // USER_HZ is 100 on Linux
	s, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", e.pid))
	if err != nil {
		return p, err
	}
	for _, l := range strings.Split(string(s), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			kb, _ := strconv.ParseFloat(strings.Fields(l)[1], 64)
			p.peakMiB = math.Round(kb/1024*10) / 10
		}
	}
	return p, nil
}

// resetPeak makes VmHWM start again from the current RSS (clear_refs 5).
func (e *env) resetPeak() {
	_ = os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", e.pid), []byte("5"), 0o200)
}

// standinStats is what the harness reads of GET /standin/stats (it also serves every arrival).
type standinStats struct {
	Resumed int            `json:"resumed"`
	SkewMs  float64        `json:"skewMs"`
	Calls   map[string]int `json:"calls"`
}

func (e *env) standinReset() error {
	resp, err := http.Post(e.standin+"/standin/reset", "", nil)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

func (e *env) standinStats() (standinStats, error) {
	var s standinStats
	resp, err := http.Get(e.standin + "/standin/stats")
	if err != nil {
		return s, err
	}
	defer func() { _ = resp.Body.Close() }()
	return s, json.NewDecoder(resp.Body).Decode(&s)
}

// writes counts the manager's write requests per namespace in the audit log from offset on.
type writeCount struct {
	Total, Events int
	ByResource    map[string]int
}

func (e *env) auditSize() int64 {
	fi, err := os.Stat(e.auditLog)
	if err != nil {
		return 0
	}
	return fi.Size()
}

func (e *env) writes(offset int64, namespaces map[string]bool) (map[string]*writeCount, error) {
	f, err := os.Open(e.auditLog)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, err
	}
	out := map[string]*writeCount{}
	for ns := range namespaces {
		out[ns] = &writeCount{ByResource: map[string]int{}}
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 4<<20), 4<<20)
	writeVerbs := map[string]bool{"create": true, "update": true, "patch": true, "delete": true, "deletecollection": true}
	for sc.Scan() {
		var ev struct {
			Stage string `json:"stage"`
			Verb  string `json:"verb"`
			User  struct {
				Username string `json:"username"`
			} `json:"user"`
			ObjectRef struct {
				Resource, Namespace, Subresource string
			} `json:"objectRef"`
			ResponseStatus struct {
				Code int `json:"code"`
			} `json:"responseStatus"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Stage != "ResponseComplete" || !writeVerbs[ev.Verb] || ev.User.Username != e.managerUser {
			continue
		}
		w := out[ev.ObjectRef.Namespace]
		if w == nil {
			continue
		}
		res := ev.ObjectRef.Resource
		if ev.ObjectRef.Subresource != "" {
			res += "/" + ev.ObjectRef.Subresource
		}
		if res == "events" {
			w.Events++
			continue
		}
		w.Total++
		key := ev.Verb + " " + res
		if ev.ResponseStatus.Code >= 300 {
			key += fmt.Sprintf(" (%d)", ev.ResponseStatus.Code)
		}
		w.ByResource[key]++
	}
	return out, sc.Err()
}

// createNamespace makes ns and waits for its default ServiceAccount: without it the
// ServiceAccount admission plugin refuses the Job controller's pods, which then backs off.
func (e *env) createNamespace(ctx context.Context, ns string) error {
	_, err := e.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	for {
		if _, err := e.kube.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{}); err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("no default ServiceAccount in %s: %w", ns, ctx.Err())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// cleanup deletes the TestRuns' namespaces and waits until they and their pods are gone.
func (e *env) cleanup(namespaces []string) error {
	ctx, cancel := context.WithTimeout(context.Background(), e.timeout)
	defer cancel()
	for _, ns := range namespaces {
		if err := e.kube.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	for _, ns := range namespaces {
		for {
			_, err := e.kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				break
			}
			if ctx.Err() != nil {
				return fmt.Errorf("namespace %s still there after %s", ns, e.timeout)
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	// Namespaces can go before the GC has deleted their pods from a kwok node: wait for none.
	for {
		pods, err := e.kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: naming.LabelRole})
		if err == nil && len(pods.Items) == 0 {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("runner pods still there after %s", e.timeout)
		}
		time.Sleep(time.Second)
	}
}

type singleResult struct {
	Scenario            string         `json:"scenario"`
	Runners             int            `json:"runners"`
	Phase               string         `json:"phase"`
	JobsFromCreate      float64        `json:"jobsFromCreateS"`
	ReadyFromCreate     float64        `json:"readyFromCreateS"`
	RunningFromCreate   float64        `json:"runningFromCreateS"`
	JobsFromTargetReady float64        `json:"jobsFromTargetReadyS"`
	ReadyFromTarget     float64        `json:"readyFromTargetReadyS"`
	JobsFromFirstJob    float64        `json:"jobsFromFirstJobS"`
	ReadyFromFirstJob   float64        `json:"readyFromFirstJobS"`
	RunningFromReady    float64        `json:"runningFromAllReadyS"`
	SkewMs              float64        `json:"standinSkewMs"`
	Resumed             int            `json:"standinResumed"`
	StatusSkew          string         `json:"statusStartSkew"`
	Writes              int            `json:"apiWrites"`
	EventWrites         int            `json:"eventWrites"`
	WritesByResource    map[string]int `json:"writesByResource"`
	Reconciles          float64        `json:"reconciles"`
	CPU                 float64        `json:"managerCPUSeconds"`
	PeakRSSMiB          float64        `json:"managerPeakRSSMiB"`
	RateLimiterWait     string         `json:"rateLimiterWait"`
	StandinCalls        map[string]int `json:"standinCalls"`
	Message             string         `json:"message,omitempty"`
}

func (e *env) rateLimiterWait(before, after metrics) string {
	const name = "rest_client_rate_limiter_duration_seconds"
	if !after.has(name) {
		return "not exposed"
	}
	sum := after.sum(name+"_sum") - before.sum(name+"_sum")
	count := after.sum(name+"_count") - before.sum(name+"_count")
	return fmt.Sprintf("%.3fs total over %.0f requests", sum, count)
}

func (e *env) single() (*singleResult, error) {
	ns := fmt.Sprintf("fbscale-n%d", e.runners)
	name := "scale"
	ctx, cancel := context.WithTimeout(context.Background(), e.timeout+time.Minute)
	defer cancel()
	if err := e.cleanup([]string{ns}); err != nil {
		return nil, err
	}
	if err := e.createNamespace(ctx, ns); err != nil {
		return nil, err
	}
	if err := e.standinReset(); err != nil {
		return nil, fmt.Errorf("stand-in: %w", err)
	}
	before, err := e.scrape()
	if err != nil {
		return nil, fmt.Errorf("manager metrics: %w", err)
	}
	e.resetPeak()
	p0, err := e.readProc()
	if err != nil {
		return nil, err
	}
	offset := e.auditSize()
	t, err := e.track(ctx, ns, name, e.runners)
	if err != nil {
		return nil, err
	}
	t.created = time.Now()
	if _, err := e.dyn.Resource(testRuns).Namespace(ns).Create(ctx, testRun(ns, name, e.runners), metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	logf("created TestRun %s/%s with %d runners", ns, name, e.runners)
	var waitErr error
	select {
	case <-t.done:
	case <-time.After(e.timeout):
		waitErr = fmt.Errorf("TestRun %s/%s did not reach Running within %s", ns, name, e.timeout)
	}
	t.mu.Lock()
	phase := t.phase
	t.mu.Unlock()
	logf("phase %s; holding %s", phase, e.hold)
	time.Sleep(e.hold)
	after, _ := e.scrape()
	p1, _ := e.readProc()
	ss, _ := e.standinStats()
	t.mu.Lock()
	st := t.status
	res := &singleResult{
		Scenario: "single", Runners: e.runners, Phase: t.phase,
		JobsFromCreate: secs(t.created, t.allJobs), ReadyFromCreate: secs(t.created, t.allReady),
		RunningFromCreate: secs(t.created, t.running),
		JobsFromFirstJob:  secs(t.firstJob, t.allJobs), ReadyFromFirstJob: secs(t.firstJob, t.allReady),
		RunningFromReady: secs(t.allReady, t.running),
		SkewMs:           math.Round(ss.SkewMs*1000) / 1000, Resumed: ss.Resumed, StandinCalls: ss.Calls,
		Reconciles:      after.sum("controller_runtime_reconcile_total", `controller="testrun"`) - before.sum("controller_runtime_reconcile_total", `controller="testrun"`),
		CPU:             math.Round((p1.cpu-p0.cpu)*100) / 100,
		PeakRSSMiB:      p1.peakMiB,
		RateLimiterWait: e.rateLimiterWait(before, after),
	}
	if tr := targetReady(st); !tr.IsZero() {
		res.JobsFromTargetReady, res.ReadyFromTarget = secs(tr, t.allJobs), secs(tr, t.allReady)
	} else {
		res.JobsFromTargetReady, res.ReadyFromTarget = -1, -1
	}
	res.StatusSkew, _, _ = unstructured.NestedString(st, "runners", "startSkew")
	res.Message, _, _ = unstructured.NestedString(st, "message")
	t.mu.Unlock()

	// Stop: delete the TestRun, then its namespace; the writes are counted once all is gone.
	_ = e.dyn.Resource(testRuns).Namespace(ns).Delete(context.Background(), name, metav1.DeleteOptions{})
	cleanErr := e.cleanup([]string{ns})
	w, err := e.writes(offset, map[string]bool{ns: true})
	if err == nil {
		res.Writes, res.EventWrites, res.WritesByResource = w[ns].Total, w[ns].Events, w[ns].ByResource
	}
	return res, errors.Join(waitErr, cleanErr, err)
}

type multiResult struct {
	Scenario        string             `json:"scenario"`
	Runs            int                `json:"runs"`
	Runners         int                `json:"runners"`
	Reached         int                `json:"reachedRunning"`
	ToRunning       map[string]float64 `json:"toRunningS"`
	MaxToRunning    float64            `json:"maxToRunningS"`
	ReconcileP99    float64            `json:"reconcileTimeP99S"`
	Reconciles      float64            `json:"reconciles"`
	Writes          int                `json:"apiWrites"`
	CPU             float64            `json:"managerCPUSeconds"`
	PeakRSSMiB      float64            `json:"managerPeakRSSMiB"`
	RateLimiterWait string             `json:"rateLimiterWait"`
	Failed          map[string]string  `json:"failed,omitempty"`
}

func (e *env) multi() (*multiResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), e.timeout+2*time.Minute)
	defer cancel()
	var namespaces []string
	nsSet := map[string]bool{}
	for i := range e.runs {
		ns := fmt.Sprintf("fbscale-m%02d", i)
		namespaces = append(namespaces, ns)
		nsSet[ns] = true
	}
	if err := e.cleanup(namespaces); err != nil {
		return nil, err
	}
	for _, ns := range namespaces {
		if err := e.createNamespace(ctx, ns); err != nil {
			return nil, err
		}
	}
	_ = e.standinReset()
	before, err := e.scrape()
	if err != nil {
		return nil, err
	}
	e.resetPeak()
	p0, _ := e.readProc()
	offset := e.auditSize()
	trackers := make([]*tracker, len(namespaces))
	for i, ns := range namespaces {
		if trackers[i], err = e.track(ctx, ns, "scale", e.runners); err != nil {
			return nil, err
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, len(namespaces))
	for i, ns := range namespaces {
		wg.Go(func() {
			trackers[i].created = time.Now()
			_, errs[i] = e.dyn.Resource(testRuns).Namespace(ns).Create(ctx, testRun(ns, "scale", e.runners), metav1.CreateOptions{})
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	logf("created %d TestRuns of %d runners at once", e.runs, e.runners)
	deadline := time.After(e.timeout)
	res := &multiResult{Scenario: "multi", Runs: e.runs, Runners: e.runners, ToRunning: map[string]float64{}, Failed: map[string]string{}}
	for _, t := range trackers {
		select {
		case <-t.done:
		case <-deadline:
		}
	}
	time.Sleep(e.hold)
	after, _ := e.scrape()
	p1, _ := e.readProc()
	for _, t := range trackers {
		t.mu.Lock()
		if t.phase == "Running" {
			res.Reached++
			s := secs(t.created, t.running)
			res.ToRunning[t.ns] = s
			res.MaxToRunning = math.Max(res.MaxToRunning, s)
		} else {
			msg, _, _ := unstructured.NestedString(t.status, "message")
			res.Failed[t.ns] = t.phase + ": " + msg
		}
		t.mu.Unlock()
	}
	res.ReconcileP99 = math.Round(quantile(before, after, "controller_runtime_reconcile_time_seconds", `controller="testrun"`, 0.99)*1000) / 1000
	res.Reconciles = after.sum("controller_runtime_reconcile_total", `controller="testrun"`) - before.sum("controller_runtime_reconcile_total", `controller="testrun"`)
	res.CPU = math.Round((p1.cpu-p0.cpu)*100) / 100
	res.PeakRSSMiB = p1.peakMiB
	res.RateLimiterWait = e.rateLimiterWait(before, after)
	for _, ns := range namespaces {
		_ = e.dyn.Resource(testRuns).Namespace(ns).Delete(context.Background(), "scale", metav1.DeleteOptions{})
	}
	cleanErr := e.cleanup(namespaces)
	if w, err := e.writes(offset, nsSet); err == nil {
		for _, c := range w {
			res.Writes += c.Total
		}
	}
	var waitErr error
	if res.Reached < e.runs {
		waitErr = fmt.Errorf("%d of %d TestRuns reached Running within %s", res.Reached, e.runs, e.timeout)
	}
	return res, errors.Join(waitErr, cleanErr)
}

// table prints the results file (one JSON object a line) as the benchmark's table, with the goals.
func table(args []string) error {
	if len(args) != 1 {
		return errors.New("usage: measure table RESULTS.jsonl")
	}
	f, err := os.Open(args[0])
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	num := func(v float64) string {
		if v == -1 {
			return "n/a"
		}
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	fmt.Println("| runners | Jobs created s (from TestRun created / first runner Job / TargetReady*) | pods Ready s (from created / first runner Job / TargetReady*) | to Running s | start skew (stand-in / status) | API writes (+events) | writes per runner | goal 40+6N | reconciles | manager CPU s | peak RSS MiB | rate-limiter wait |")
	fmt.Println("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
	var multis []multiResult
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var probe struct{ Scenario string }
		if json.Unmarshal(sc.Bytes(), &probe) != nil {
			continue
		}
		if probe.Scenario == "multi" {
			var m multiResult
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				multis = append(multis, m)
			}
			continue
		}
		var r singleResult
		if json.Unmarshal(sc.Bytes(), &r) != nil {
			continue
		}
		goal := 40 + 6*r.Runners
		fmt.Printf("| %d | %s / %s / %s | %s / %s / %s | %s | %.1f ms / %s | %d (+%d) | %.2f | %d %s | %.0f | %.2f | %.1f | %s |\n",
			r.Runners, num(r.JobsFromCreate), num(r.JobsFromFirstJob), num(r.JobsFromTargetReady),
			num(r.ReadyFromCreate), num(r.ReadyFromFirstJob), num(r.ReadyFromTarget), num(r.RunningFromCreate),
			r.SkewMs, r.StatusSkew, r.Writes, r.EventWrites, float64(r.Writes)/float64(max(r.Runners, 1)), goal, okText(r.Writes <= goal),
			r.Reconciles, r.CPU, r.PeakRSSMiB, r.RateLimiterWait)
		if r.Phase != "Running" {
			fmt.Printf("|   | phase %s: %s |||||||||\n", r.Phase, r.Message)
		}
	}
	fmt.Println()
	fmt.Println("* TargetReady's lastTransitionTime has 1 s resolution (truncated), so these read up to 1 s long; with an external")
	fmt.Println("  target it is set in the reconcile that starts creating the runner Jobs, so \"first runner Job\" is the precise start;")
	fmt.Println("  a negative value means the condition was only written later (status patches refused, see writesByResource 422).")
	for _, m := range multis {
		fmt.Printf("\n%d TestRuns x %d runners at once: %d of %d reached Running; slowest %.2f s; testrun reconcile_time p99 %.3f s; reconciles %.0f; API writes %d; manager CPU %.2f s; peak RSS %.1f MiB; rate-limiter wait: %s\n",
			m.Runs, m.Runners, m.Reached, m.Runs, m.MaxToRunning, m.ReconcileP99, m.Reconciles, m.Writes, m.CPU, m.PeakRSSMiB, m.RateLimiterWait)
		keys := make([]string, 0, len(m.ToRunning))
		for k := range m.ToRunning {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var parts []string
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%s %.2f", strings.TrimPrefix(k, "fbscale-"), m.ToRunning[k]))
		}
		fmt.Println("  time to Running (s): " + strings.Join(parts, ", "))
		for ns, why := range m.Failed {
			fmt.Printf("  %s did not reach Running: %s\n", ns, why)
		}
	}
	return sc.Err()
}

func okText(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}
