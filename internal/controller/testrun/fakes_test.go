package testrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"fleetbench.dev/fleetbench/pkg/measure"
)

// fakeRunnerAPI stands in for k6's REST API: it records resumes and stops per pod.
type fakeRunnerAPI struct {
	mu      sync.Mutex
	resumed map[string][]time.Time
	stopped map[string]int
	// stoppedAt is when the first Stop reached each pod.
	stoppedAt map[string]time.Time
	// failResume makes Resume fail for pods whose name is a key.
	failResume map[string]bool
	// live serves each pod's envelope so far.
	live map[string]func() measure.Envelope
	// setups, teardowns and releases count those calls per pod; setupData is what each pod
	// was handed; failSetup makes setup() throw in a namespace.
	setups, teardowns, releases map[string]int
	setupData                   map[string]string
	failSetup                   map[string]string
	// finals answer each pod's held final request once a test puts an envelope in.
	finals map[string]chan measure.Envelope
	// hold (hotloop_test.go) holds setup() or teardown's end in a namespace: see holdOf.
	hold holds
	// aborted pods' scripts called test.abort(): their load ended Interrupted.
	aborted map[string]bool
	// k6Down: in these namespaces k6's REST API does not answer yet.
	k6Down map[string]bool
	warmed map[string]int
}

func newFakeRunnerAPI() *fakeRunnerAPI {
	return &fakeRunnerAPI{resumed: map[string][]time.Time{}, stopped: map[string]int{}, failResume: map[string]bool{},
		live: map[string]func() measure.Envelope{}, stoppedAt: map[string]time.Time{},
		setups: map[string]int{}, teardowns: map[string]int{}, releases: map[string]int{}, setupData: map[string]string{}, failSetup: map[string]string{},
		finals: map[string]chan measure.Envelope{}, aborted: map[string]bool{}, k6Down: map[string]bool{}, warmed: map[string]int{}}
}

// Setup answers as k6 does for a setup() returning {"token":"t-<pod>"}, or with the error set
// for the pod's namespace.
func (f *fakeRunnerAPI) Setup(ctx context.Context, pod *corev1.Pod) (json.RawMessage, error) {
	f.hold.setup(ctx, pod.Namespace)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.setups[key(pod)]++
	if msg := f.failSetup[pod.Namespace]; msg != "" {
		return nil, errors.New(msg)
	}
	data := fmt.Sprintf(`{"token":"t-%s"}`, pod.Name)
	f.setupData[key(pod)] = data
	return json.RawMessage(data), nil
}

// SetupData answers with the data the pod holds, as k6's GET /v1/setup does.
func (f *fakeRunnerAPI) SetupData(_ context.Context, pod *corev1.Pod) (json.RawMessage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if d, ok := f.setupData[key(pod)]; ok {
		return json.RawMessage(d), nil
	}
	return json.RawMessage("null"), nil
}

func (f *fakeRunnerAPI) SetSetupData(_ context.Context, pod *corev1.Pod, data json.RawMessage) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.setupData[key(pod)] = string(data)
	return nil
}

// Ended: a runner the test has not ended is done with its load (lingering), unless the test
// made its namespace's runners never end (hold.neverEnd).
func (f *fakeRunnerAPI) Ended(ctx context.Context, pod *corev1.Pod) (bool, error) {
	if err := f.hold.hang(ctx, pod.Namespace, "Ended"); err != nil {
		return false, err
	}
	return f.hold.Ended(pod.Namespace), nil
}

// Interrupted: the test says which pods' scripts called test.abort() (aborted).
func (f *fakeRunnerAPI) Interrupted(ctx context.Context, pod *corev1.Pod) (bool, error) {
	if err := f.hold.hang(ctx, pod.Namespace, "Interrupted"); err != nil {
		return false, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.aborted[key(pod)], nil
}

func (f *fakeRunnerAPI) Teardown(ctx context.Context, pod *corev1.Pod) error {
	if err := f.hold.teardown(ctx, pod.Namespace); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.teardowns[key(pod)]++
	return nil
}

func (f *fakeRunnerAPI) Release(ctx context.Context, pod *corev1.Pod) error {
	if err := f.hold.hang(ctx, pod.Namespace, "Release"); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.releases[key(pod)]++
	return nil
}

// Final is held until the test answers it (answerFinal); a runner the test ends through pod
// status never answers, as a runner killed before its outputs stopped.
func (f *fakeRunnerAPI) Final(ctx context.Context, pod *corev1.Pod) (measure.Envelope, error) {
	select {
	case env := <-f.finalOf(pod):
		return env, nil
	case <-ctx.Done():
		return measure.Envelope{}, ctx.Err()
	}
}

// answerFinal answers a pod's held final request with env.
func (f *fakeRunnerAPI) answerFinal(pod *corev1.Pod, env measure.Envelope) { f.finalOf(pod) <- env }

func (f *fakeRunnerAPI) finalOf(pod *corev1.Pod) chan measure.Envelope {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.finals[key(pod)] == nil {
		f.finals[key(pod)] = make(chan measure.Envelope, 1)
	}
	return f.finals[key(pod)]
}

// calls counts the setup, teardown and release calls made to pods of a namespace, and
// returns the setup data each pod holds.
func (f *fakeRunnerAPI) calls(ns string) (setups, teardowns, releases int, data map[string]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	data = map[string]string{}
	for k, v := range f.setupData {
		if strings.HasPrefix(k, ns+"/") {
			data[strings.TrimPrefix(k, ns+"/")] = v
		}
	}
	sum := func(m map[string]int) int {
		n := 0
		for k, v := range m {
			if strings.HasPrefix(k, ns+"/") {
				n += v
			}
		}
		return n
	}
	return sum(f.setups), sum(f.teardowns), sum(f.releases), data
}

func key(pod *corev1.Pod) string { return pod.Namespace + "/" + pod.Name }

// KeepConnections: the fake has no connections (runner_conns_test.go tests the real ones).
func (f *fakeRunnerAPI) KeepConnections(ctx context.Context) (context.Context, func()) {
	return ctx, func() {}
}

// Warm answers, as an up k6 does, unless the test says k6 of the pod's namespace is still
// loading (k6Down).
func (f *fakeRunnerAPI) Warm(_ context.Context, pod *corev1.Pod) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.warmed[pod.Namespace]++
	if f.k6Down[pod.Namespace] {
		return fmt.Errorf("connection refused")
	}
	return nil
}

// warms counts the status asks made to runners of a namespace.
func (f *fakeRunnerAPI) warms(ns string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.warmed[ns]
}

func (f *fakeRunnerAPI) Resume(_ context.Context, pod *corev1.Pod) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failResume[key(pod)] {
		return fmt.Errorf("connection refused")
	}
	f.resumed[key(pod)] = append(f.resumed[key(pod)], time.Now())
	return nil
}

func (f *fakeRunnerAPI) Stop(ctx context.Context, pod *corev1.Pod) error {
	if err := f.hold.hang(ctx, pod.Namespace, "Stop"); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stopped[key(pod)]++
	if f.stoppedAt[key(pod)].IsZero() {
		f.stoppedAt[key(pod)] = time.Now()
	}
	return nil
}

func (f *fakeRunnerAPI) Envelope(ctx context.Context, pod *corev1.Pod) (measure.Envelope, error) {
	if err := f.hold.hang(ctx, pod.Namespace, "Envelope"); err != nil {
		return measure.Envelope{}, err
	}
	f.mu.Lock()
	serve := f.live[key(pod)]
	f.mu.Unlock()
	if serve == nil {
		return measure.Envelope{}, fmt.Errorf("runner %s: connection refused", pod.Name)
	}
	return serve(), nil
}

// serveLive makes a pod's live endpoint answer with what serve returns at the time.
func (f *fakeRunnerAPI) serveLive(pod *corev1.Pod, serve func() measure.Envelope) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.live[key(pod)] = serve
}

// firstStop is when the first Stop reached a pod; zero if none did.
func (f *fakeRunnerAPI) firstStop(pod *corev1.Pod) time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stoppedAt[key(pod)]
}

// resumes counts Resume calls for pods of a namespace.
func (f *fakeRunnerAPI) resumes(ns string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for k, v := range f.resumed {
		if len(k) > len(ns) && k[:len(ns)+1] == ns+"/" {
			n += len(v)
		}
	}
	return n
}

func (f *fakeRunnerAPI) stops(pod *corev1.Pod) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stopped[key(pod)]
}

// fakeLogs serves the log tail a test set for each pod; a pod with none has an empty log.
type fakeLogs struct {
	mu   sync.Mutex
	tail map[string][]byte
	err  map[string]error
}

func newFakeLogs() *fakeLogs {
	return &fakeLogs{tail: map[string][]byte{}, err: map[string]error{}}
}

func (f *fakeLogs) set(pod *corev1.Pod, tail []byte, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tail[key(pod)], f.err[key(pod)] = tail, err
}

func (f *fakeLogs) Tail(_ context.Context, pod *corev1.Pod, _ string, _ int64, previous bool) ([]byte, error) {
	if previous {
		return nil, fmt.Errorf("previous terminated container not found")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tail[key(pod)], f.err[key(pod)]
}

// fakeStats plays the kubelet summary API and metrics.k8s.io: every target container reports
// the memory and CPU a test sets, per namespace (working set = RSS + 50 MiB, rate 0.1 cores).
type fakeStats struct {
	mu      sync.Mutex
	rssMiB  map[string]uint64
	cpuSecs map[string]float64
	// summaryErr, when set, is what reading a kubelet gives, as where its certificate does not verify.
	summaryErr error
	// hung nodes' summaries answer only once released or their context ends; entered counts
	// the calls that hung.
	hung    map[string]chan struct{}
	entered map[string]int
}

// hangNode makes node's kubelet summary hang until the returned release is called.
func (f *fakeStats) hangNode(node string) (release func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.hung == nil {
		f.hung, f.entered = map[string]chan struct{}{}, map[string]int{}
	}
	gate := make(chan struct{})
	f.hung[node] = gate
	var once sync.Once
	return func() { once.Do(func() { close(gate) }) }
}

// hangs counts the summaries of node that hung.
func (f *fakeStats) hangs(node string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.entered[node]
}

func (f *fakeStats) failSummary(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.summaryErr = err
}

func (f *fakeStats) PodMetrics(_ context.Context, namespace string) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	rss, ok := f.rssMiB[namespace]
	if !ok {
		return []byte(`{"kind":"PodMetricsList","items":[]}`), nil
	}
	return []byte(fmt.Sprintf(`{"kind":"PodMetricsList","items":[{"metadata":{"name":"target","namespace":%q},"window":"10s",`+
		`"containers":[{"name":"web","usage":{"cpu":"100m","memory":"%dMi"}}]}]}`, namespace, rss+50)), nil
}

func newFakeStats() *fakeStats {
	return &fakeStats{rssMiB: map[string]uint64{}, cpuSecs: map[string]float64{}}
}

func (f *fakeStats) set(ns string, rssMiB uint64, cpuSeconds float64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rssMiB[ns], f.cpuSecs[ns] = rssMiB, cpuSeconds
}

func (f *fakeStats) NodeSummary(ctx context.Context, node string) ([]byte, error) {
	f.mu.Lock()
	if gate := f.hung[node]; gate != nil {
		f.entered[node]++
		f.mu.Unlock()
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		f.mu.Lock()
	}
	defer f.mu.Unlock()
	if f.summaryErr != nil {
		return nil, f.summaryErr
	}
	var pods []string
	for ns, rss := range f.rssMiB {
		pods = append(pods, fmt.Sprintf(`{"podRef":{"name":"target","namespace":%q},"containers":[{"name":"web",`+
			`"cpu":{"usageNanoCores":100000000,"usageCoreNanoSeconds":%d},"memory":{"workingSetBytes":%d,"rssBytes":%d}}]}`,
			ns, uint64(f.cpuSecs[ns]*1e9), (rss+50)<<20, rss<<20))
	}
	return []byte(fmt.Sprintf(`{"node":{"nodeName":%q},"pods":[%s]}`, node, strings.Join(pods, ","))), nil
}
