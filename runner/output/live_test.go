package output

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.k6.io/k6/v2/metrics"
	"go.k6.io/k6/v2/output"

	"fleetbench.dev/fleetbench/pkg/measure"
)

// TestLiveEndpointServesTheEnvelopeSoFar: mid-run the endpoint returns what was folded so far
// (not final), in the log's encoding; after Stop it is closed.
func TestLiveEndpointServesTheEnvelopeSoFar(t *testing.T) {
	addr := freeAddr(t)
	var stdout bytes.Buffer
	o := startedWithRequests(t, map[string]string{"K6_FLEETBENCH_WINDOW": "1s", "K6_FLEETBENCH_LIVE": addr}, &stdout, make([]string, 42))
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get("http://" + addr + measure.LivePath)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	env, err := measure.ExtractEnvelope(body)
	if err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	s, err := measure.Merge(env)
	if err != nil {
		t.Fatal(err)
	}
	if env.Final || s.Metrics["http_reqs"].Stats.Count != 42 {
		t.Errorf("final %v, %d requests, want a partial envelope with 42", env.Final, s.Metrics["http_reqs"].Stats.Count)
	}
	if err := o.Stop(); err != nil {
		t.Fatal(err)
	}
	if resp, err := client.Get("http://" + addr + measure.LivePath); err == nil {
		resp.Body.Close()
		t.Error("the live endpoint still answers after the output stopped")
	}
}

// TestFinalEndpointAnswersWhenTheOutputStops: a GET of the final envelope is held until Stop and
// then answered with exactly what the log ends with; nothing answers it before.
func TestFinalEndpointAnswersWhenTheOutputStops(t *testing.T) {
	addr := freeAddr(t)
	var stdout bytes.Buffer
	o := startedWithRequests(t, map[string]string{"K6_FLEETBENCH_LIVE": addr}, &stdout, make([]string, 7))
	type answer struct {
		body []byte
		err  error
	}
	answered := make(chan answer, 1)
	go func() {
		resp, err := (&http.Client{Timeout: time.Minute}).Get("http://" + addr + measure.FinalPath)
		if err != nil {
			answered <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		answered <- answer{body, err}
	}()
	select {
	case a := <-answered:
		t.Fatalf("the final request was answered before the output stopped: %q %v", a.body, a.err)
	case <-time.After(300 * time.Millisecond):
	}
	if err := o.Stop(); err != nil {
		t.Fatal(err)
	}
	a := <-answered
	if a.err != nil {
		t.Fatal(a.err)
	}
	if !bytes.Equal(a.body, stdout.Bytes()) {
		t.Errorf("the final endpoint answered %d bytes, the log holds %d: they must be the same envelope", len(a.body), stdout.Len())
	}
	env, err := measure.ExtractEnvelope(a.body)
	if err != nil {
		t.Fatal(err)
	}
	if !env.Final {
		t.Error("the answer is not the final envelope")
	}
}

// freeAddr is a loopback address nothing listens on, for the output's live endpoint.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestExcludedScenariosDoNotCount: a benchmark's warm-up runs, and none of it is counted.
func TestExcludedScenariosDoNotCount(t *testing.T) {
	var stdout bytes.Buffer
	o := startedWithRequests(t, map[string]string{"K6_FLEETBENCH_EXCLUDE_SCENARIOS": "warmup, other"}, &stdout,
		[]string{"warmup", "devices", "warmup", "devices", "devices"})
	if err := o.Stop(); err != nil {
		t.Fatal(err)
	}
	env, err := measure.ExtractEnvelope(stdout.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	s, err := measure.Merge(env)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Metrics["http_reqs"].Stats.Count; got != 3 {
		t.Errorf("%d requests counted, want the 3 of scenario devices", got)
	}
}

// startedWithRequests starts an output with env and feeds it one http_reqs sample per entry of
// scenarios, tagged with that scenario when it is not empty.
func startedWithRequests(t *testing.T, env map[string]string, stdout *bytes.Buffer, scenarios []string) *Output {
	t.Helper()
	o, err := New(output.Params{Environment: env, StdOut: stdout})
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Start(); err != nil {
		t.Fatal(err)
	}
	reg := metrics.NewRegistry()
	reqs := reg.MustNewMetric("http_reqs", metrics.Counter)
	now := time.Now()
	for i, scenario := range scenarios {
		tags := reg.RootTagSet()
		if scenario != "" {
			tags = tags.With("scenario", scenario)
		}
		o.AddMetricSamples([]metrics.SampleContainer{metrics.Sample{TimeSeries: metrics.TimeSeries{Metric: reqs, Tags: tags},
			Time: now.Add(time.Duration(i) * time.Millisecond), Value: 1}})
	}
	return o
}

// TestReleaseEndsTheLingerOnce: the operator's POST after teardown prints the final envelope and
// interrupts the runner once, however often it is repeated (a second interrupt would kill k6
// before it flushes).
func TestReleaseEndsTheLingerOnce(t *testing.T) {
	addr := freeAddr(t)
	var stdout lockedBuffer
	o, err := New(output.Params{Environment: map[string]string{"K6_FLEETBENCH_LIVE": addr}, StdOut: &stdout})
	if err != nil {
		t.Fatal(err)
	}
	var released atomic.Int32
	o.release = func() { released.Add(1) }
	if err := o.Start(); err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 5 * time.Second}
	for range 2 {
		resp, err := client.Post("http://"+addr+measure.ReleasePath, "text/plain", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			t.Errorf("release answered %d", resp.StatusCode)
		}
	}
	if env, err := measure.ExtractEnvelope(stdout.Bytes()); err != nil || !env.Final {
		t.Errorf("after the release, before k6 stops the output, stdout holds no final envelope: %v", err)
	}
	if err := o.Stop(); err != nil {
		t.Fatal(err)
	}
	if n := released.Load(); n != 1 {
		t.Errorf("released %d times, want once", n)
	}
}

// lockedBuffer is stdout written by the live server's goroutines and read by the test.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]byte(nil), b.buf.Bytes()...)
}

// A gRPC call keeps its method, so the operator can tell the script's calls from k6's own
// reflection RPCs, which carry none; an HTTP request keeps no method.
func TestGRPCCallsKeepTheirMethod(t *testing.T) {
	var stdout bytes.Buffer
	o, err := New(output.Params{Environment: map[string]string{}, StdOut: &stdout})
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Start(); err != nil {
		t.Fatal(err)
	}
	reg := metrics.NewRegistry()
	grpcDur := reg.MustNewMetric("grpc_req_duration", metrics.Trend, metrics.Time)
	httpDur := reg.MustNewMetric("http_req_duration", metrics.Trend, metrics.Time)
	now := time.Now()
	for _, s := range []metrics.Sample{
		{TimeSeries: metrics.TimeSeries{Metric: grpcDur, Tags: reg.RootTagSet().With("status", "0").With("method", "/sut.GoalState/Push")}, Time: now, Value: 3},
		{TimeSeries: metrics.TimeSeries{Metric: grpcDur, Tags: reg.RootTagSet().With("status", "0")}, Time: now, Value: 1},
		{TimeSeries: metrics.TimeSeries{Metric: httpDur, Tags: reg.RootTagSet().With("status", "200").With("method", "GET")}, Time: now, Value: 2},
	} {
		o.AddMetricSamples([]metrics.SampleContainer{s})
	}
	if err := o.Stop(); err != nil {
		t.Fatal(err)
	}
	env, err := measure.ExtractEnvelope(stdout.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	s, err := measure.Merge(env)
	if err != nil {
		t.Fatal(err)
	}
	methods := map[string]uint64{}
	for _, sr := range s.Metrics["grpc_req_duration"].Series {
		methods[sr.Tags["method"]] += sr.Stats.Count
	}
	if methods["/sut.GoalState/Push"] != 1 || methods[""] != 1 {
		t.Errorf("grpc series by method %v, want the call and the untagged reflection apart", methods)
	}
	for _, sr := range s.Metrics["http_req_duration"].Series {
		if sr.Tags["method"] != "" {
			t.Errorf("http series %v keeps the method", sr.Tags)
		}
	}
}

// TestReadyOnlyOnceTheTargetIsReached: the live port's ReadyPath, which the kubelet's probe and
// the operator's start ask, answers 503 while the runner still waits for its target (k6 has
// loaded the script meanwhile) and 200 once it reached it.
func TestReadyOnlyOnceTheTargetIsReached(t *testing.T) {
	addr := freeAddr(t)
	var stdout bytes.Buffer
	o, err := New(output.Params{Environment: map[string]string{"K6_FLEETBENCH_LIVE": addr}, StdOut: &stdout})
	if err != nil {
		t.Fatal(err)
	}
	var reached atomic.Bool
	o.reached = reached.Load
	if err := o.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = o.Stop() }()
	client := &http.Client{Timeout: 5 * time.Second}
	status := func() int {
		t.Helper()
		resp, err := client.Get("http://" + addr + measure.ReadyPath)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := status(); got != http.StatusServiceUnavailable {
		t.Errorf("waiting for the target: %d, want 503", got)
	}
	reached.Store(true)
	if got := status(); got != http.StatusOK {
		t.Errorf("target reached: %d, want 200", got)
	}
}
