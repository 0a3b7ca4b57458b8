// Package runio is the TestRun controller's I/O with its runners and the target's nodes, behind
// a few types: RunnerAPI (each runner's k6 REST API, redirects refused, answers bounded),
// FinalEnvelopes (the held request for a runner's last results), AsyncCalls and ScriptCalls (long
// calls off the reconcile workers, one per run and kind, each with a deadline), LastSeen (the
// envelopes kept for replacement), the envelope budgets, the log reader and the target's stats,
// and the bounded fan-out over a fleet (OnRunnersAtMost).
package runio

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	"fleetbench.dev/fleetbench/pkg/measure"
	"fleetbench.dev/fleetbench/pkg/runners"
)

// RunnerAPI talks to one runner's k6 REST API. Only this and LogReader stand between the
// reconciler and the runners, so tests replace just these two.
type RunnerAPI interface {
	// KeepConnections returns a context whose calls keep their connections open for each
	// other until release closes them: the start's Resume goes out on the connection its Warm
	// opened. Outside such a context a call's connection to the runner closes with its answer.
	KeepConnections(ctx context.Context) (context.Context, func())
	// Warm reads the runner's status, opening the connection the start's Resume then goes out
	// on (under KeepConnections).
	Warm(ctx context.Context, pod *corev1.Pod) error
	// Resume un-pauses a runner started with --paused; resuming a running one is a no-op.
	Resume(ctx context.Context, pod *corev1.Pod) error
	// Stop ends a runner's test early; k6 then flushes its outputs, so the result envelope
	// is still printed.
	Stop(ctx context.Context, pod *corev1.Pod) error
	// Envelope reads what the runner measured so far from its live endpoint.
	Envelope(ctx context.Context, pod *corev1.Pod) (measure.Envelope, error)
	// Setup runs the script's setup() on the runner and returns its data as JSON (null when
	// it returns nothing); an exception in setup() is the error, in k6's words.
	Setup(ctx context.Context, pod *corev1.Pod) (json.RawMessage, error)
	// SetSetupData hands setup()'s data to a runner before the start.
	SetSetupData(ctx context.Context, pod *corev1.Pod, data json.RawMessage) error
	// SetupData reads the setup() data a runner holds (GET /v1/setup), for a replacement runner.
	SetupData(ctx context.Context, pod *corev1.Pod) (json.RawMessage, error)
	// Ended says whether the runner's load is over (it may linger for teardown()).
	Ended(ctx context.Context, pod *corev1.Pod) (bool, error)
	// Interrupted says whether the runner's load ended interrupted: by the script's
	// test.abort(), or by a Stop.
	Interrupted(ctx context.Context, pod *corev1.Pod) (bool, error)
	// Teardown runs the script's teardown() on the runner with the setup data.
	Teardown(ctx context.Context, pod *corev1.Pod) error
	// Release ends the linger of a runner whose teardown() ran, so it prints its results and exits.
	Release(ctx context.Context, pod *corev1.Pod) error
	// Final waits, as long as ctx allows, for the runner's final envelope: answered when k6
	// stops its outputs, before the process exits.
	Final(ctx context.Context, pod *corev1.Pod) (measure.Envelope, error)
}

// OnRunners makes call for every pod at once and waits for all: runner calls are independent,
// and one slow runner must not hold up the others. A nil pod is skipped.
func OnRunners(pods []*corev1.Pod, call func(i int, pod *corev1.Pod)) {
	var wg sync.WaitGroup
	for i, pod := range pods {
		if pod != nil {
			wg.Go(func() { call(i, pod) })
		}
	}
	wg.Wait()
}

// Timeouts of the calls: a runner that does not answer must not hold a reconcile, but setup()
// and teardown() take as long as the script makes them (k6 bounds them at 60 s by default).
const (
	CallTimeout   = 5 * time.Second
	scriptTimeout = 2 * time.Minute
)

// transport reaches one port of a runner pod and returns the status code and body; a body of
// more than limit bytes is an error. A large body holds its share of wireMemory until release.
type transport func(ctx context.Context, pod *corev1.Pod, port int, method, path string, body []byte, limit int64) (code int, b []byte, release func(), err error)

// k6API is RunnerAPI over a transport: pod IPs (NewDirectRunnerAPI) or the API server's pod
// proxy (NewProxyRunnerAPI).
type k6API struct {
	call transport
	// keep scopes kept connections (KeepConnections); nil when the transport keeps none of
	// its own (the pod proxy's connections are to the API server).
	keep func(ctx context.Context) (context.Context, func())
}

func (k *k6API) KeepConnections(ctx context.Context) (context.Context, func()) {
	if k.keep == nil {
		return ctx, func() {}
	}
	return k.keep(ctx)
}

// NewDirectRunnerAPI reaches runners at their pod IPs: the manager runs in the cluster.
func NewDirectRunnerAPI() RunnerAPI {
	return DirectRunnerAPIAt(func(pod *corev1.Pod, port int) string {
		return net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(port))
	})
}

// DirectRunnerAPIAt reaches each runner at the address addr gives (tests point it elsewhere).
func DirectRunnerAPIAt(addr func(pod *corev1.Pod, port int) string) RunnerAPI {
	clients := newDirectClients() // runner_conns.go: which connections stay open
	return &k6API{call: func(ctx context.Context, pod *corev1.Pod, port int, method, path string, body []byte, limit int64) (int, []byte, func(), error) {
		if pod.Status.PodIP == "" {
			return 0, nil, nil, fmt.Errorf("runner pod %s has no IP yet", pod.Name)
		}
		return doHTTP(ctx, clients.client(ctx), method, "http://"+addr(pod, port)+path, body, limit)
	}, keep: clients.keep}
}

// NewProxyRunnerAPI reaches runners through the API server's pods/proxy: the manager runs
// outside the cluster (make run, tests) and no network path to pod IPs is needed. Its own HTTP
// client follows no redirect, whatever the runner answers.
func NewProxyRunnerAPI(cfg *rest.Config) (RunnerAPI, error) {
	cs, hc, err := NoRedirectClientset(cfg)
	if err != nil {
		return nil, err
	}
	rc := cs.CoreV1().RESTClient()
	return &k6API{call: func(ctx context.Context, pod *corev1.Pod, port int, method, path string, body []byte, limit int64) (int, []byte, func(), error) {
		u := rc.Verb(method).Namespace(pod.Namespace).Resource("pods").Name(pod.Name + ":" + strconv.Itoa(port)).
			SubResource("proxy").Suffix(strings.TrimPrefix(path, "/")).URL()
		return doHTTP(ctx, hc, method, u.String(), body, limit)
	}}, nil
}

// doHTTP makes one request and reads at most limit bytes of the answer. A body that may be
// larger than maxSmallAnswer is read within wireMemory, held until release: its size as
// announced, else the limit.
func doHTTP(ctx context.Context, client *http.Client, method, url string, body []byte, limit int64) (int, []byte, func(), error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	// Once the answer began, its body must follow at once (a held request waits for its
	// headers only): a runner that trickles it must not keep wireMemory.
	stop := time.AfterFunc(bodyTimeout, cancel)
	defer stop.Stop()
	if resp.StatusCode >= 300 {
		// An error's text is shown, not parsed: a little of it is enough.
		limit = min(limit, maxSmallAnswer)
	}
	if resp.ContentLength > limit {
		return resp.StatusCode, nil, nil, fmt.Errorf("%w: %d bytes announced, at most %d", errTooLarge, resp.ContentLength, limit)
	}
	release := func() {}
	if weight := limit; weight > maxSmallAnswer {
		if resp.ContentLength >= 0 {
			weight = resp.ContentLength // the body cannot be longer: net/http stops there
		}
		if release, err = WireMemory.Acquire(ctx, weight); err != nil {
			return 0, nil, nil, err
		}
	}
	b, err := readAtMost(resp.Body, limit)
	if err != nil && resp.StatusCode < 300 {
		release()
		return resp.StatusCode, nil, nil, err
	}
	return resp.StatusCode, b, release, nil
}

// bodyTimeout bounds the read of an answer's body, after its headers.
const bodyTimeout = 10 * time.Second

// WireMemory bounds the large answers (envelopes, logs) the manager holds at once, with what
// they decode into: a fleet's answers are read a few at a time when they are large.
var WireMemory = measure.NewBudget(32 << 20)

// MaxSetupData bounds setup()'s data, which every runner gets a copy of.
const MaxSetupData = 1 << 20

// do makes one call whose answer is small; a zero timeout leaves the bound to ctx.
func (k *k6API) do(ctx context.Context, pod *corev1.Pod, timeout time.Duration, port int, method, path string, body []byte, limit int64) ([]byte, error) {
	b, release, err := k.doLarge(ctx, pod, timeout, port, method, path, body, limit)
	if release != nil {
		release()
	}
	return b, err
}

// doLarge makes one call; the answer holds wireMemory until release (nil on error).
func (k *k6API) doLarge(ctx context.Context, pod *corev1.Pod, timeout time.Duration, port int, method, path string, body []byte, limit int64) ([]byte, func(), error) {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	code, b, release, err := k.call(ctx, pod, port, method, path, body, limit)
	if err != nil {
		return nil, nil, fmt.Errorf("runner %s: %s %s: %w", pod.Name, method, path, err)
	}
	fail := func(err error) ([]byte, func(), error) {
		release()
		return nil, nil, err
	}
	if code >= 300 && code < 400 {
		return fail(fmt.Errorf("runner %s answered %s %s with a redirect (%d), which the operator does not follow: %s",
			pod.Name, method, path, code, k6Detail(b)))
	}
	if code < 200 || code >= 300 {
		return fail(fmt.Errorf("runner %s answered %d: %s", pod.Name, code, k6Detail(b)))
	}
	return b, release, nil
}

// k6Detail is the error text of a k6 REST API answer ({"errors":[{"title","detail"}]}): a short,
// printable excerpt, since it ends up in status.message.
func k6Detail(b []byte) string {
	var e struct {
		Errors []struct{ Title, Detail string } `json:"errors"`
	}
	if json.Unmarshal(b, &e) == nil && len(e.Errors) > 0 {
		return decide.Excerpt(e.Errors[0].Title+": "+e.Errors[0].Detail, decide.MaxExcerpt)
	}
	return decide.Excerpt(string(b), decide.MaxExcerpt)
}

func (k *k6API) patchStatus(ctx context.Context, pod *corev1.Pod, attrs map[string]any) error {
	_, err := k.do(ctx, pod, CallTimeout, runners.APIPort, http.MethodPatch, "/v1/status", statusBody(attrs), maxSmallAnswer)
	return err
}

func (k *k6API) status(ctx context.Context, pod *corev1.Pod) ([]byte, error) {
	return k.do(ctx, pod, CallTimeout, runners.APIPort, http.MethodGet, "/v1/status", nil, maxSmallAnswer)
}

// Warm asks what the runner's readiness probe asks (the live port's ReadyPath: the script
// loaded and the target reached) and k6's own API, which the start calls next.
func (k *k6API) Warm(ctx context.Context, pod *corev1.Pod) error {
	if _, err := k.do(ctx, pod, CallTimeout, runners.LivePort, http.MethodGet, measure.ReadyPath, nil, maxSmallAnswer); err != nil {
		return err
	}
	_, err := k.status(ctx, pod)
	return err
}

func (k *k6API) Resume(ctx context.Context, pod *corev1.Pod) error {
	return k.patchStatus(ctx, pod, map[string]any{"paused": false})
}

func (k *k6API) Stop(ctx context.Context, pod *corev1.Pod) error {
	return k.patchStatus(ctx, pod, map[string]any{"stopped": true})
}

func (k *k6API) Envelope(ctx context.Context, pod *corev1.Pod) (measure.Envelope, error) {
	b, release, err := k.doLarge(ctx, pod, 2*CallTimeout, runners.LivePort, http.MethodGet, measure.LivePath, nil, measure.MaxWireBytes)
	if err != nil {
		return measure.Envelope{}, err
	}
	defer release()
	return measure.ExtractEnvelopeWithin(b, envelopeLimitsOf(ctx))
}

func (k *k6API) Setup(ctx context.Context, pod *corev1.Pod) (json.RawMessage, error) {
	b, err := k.do(ctx, pod, scriptTimeout, runners.APIPort, http.MethodPost, "/v1/setup", nil, maxSetupAnswer)
	if err != nil {
		return nil, err
	}
	return setupAnswer(pod, b)
}

// setupAnswer is the data of k6's answer to POST or GET /v1/setup.
func setupAnswer(pod *corev1.Pod, b []byte) (json.RawMessage, error) {
	var answer struct {
		Data struct {
			Attributes struct {
				Data json.RawMessage `json:"data"`
			} `json:"attributes"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &answer); err != nil {
		return nil, fmt.Errorf("runner %s: setup answer: %w", pod.Name, err)
	}
	if len(answer.Data.Attributes.Data) == 0 {
		return json.RawMessage("null"), nil
	}
	return answer.Data.Attributes.Data, nil
}

func (k *k6API) SetupData(ctx context.Context, pod *corev1.Pod) (json.RawMessage, error) {
	b, err := k.do(ctx, pod, CallTimeout, runners.APIPort, http.MethodGet, "/v1/setup", nil, maxSetupAnswer)
	if err != nil {
		return nil, err
	}
	return setupAnswer(pod, b)
}

func (k *k6API) SetSetupData(ctx context.Context, pod *corev1.Pod, data json.RawMessage) error {
	_, err := k.do(ctx, pod, CallTimeout, runners.APIPort, http.MethodPut, "/v1/setup", data, maxSmallAnswer)
	return err
}

func (k *k6API) Ended(ctx context.Context, pod *corev1.Pod) (bool, error) {
	status, err := k.executionStatus(ctx, pod)
	return status >= k6StatusEnded, err
}

func (k *k6API) Interrupted(ctx context.Context, pod *corev1.Pod) (bool, error) {
	status, err := k.executionStatus(ctx, pod)
	return status == k6StatusInterrupted, err
}

// k6's lib.ExecutionStatus values the manager reads: Ended (9), Interrupted (10); MarkedAsFailed
// (11) is past the end too.
const (
	k6StatusEnded       = 9
	k6StatusInterrupted = 10
)

// executionStatus is k6's lib.ExecutionStatus of the runner.
func (k *k6API) executionStatus(ctx context.Context, pod *corev1.Pod) (int, error) {
	b, err := k.status(ctx, pod)
	if err != nil {
		return 0, err
	}
	var st k6Status
	if err := json.Unmarshal(b, &st); err != nil {
		return 0, fmt.Errorf("runner %s: status answer: %w", pod.Name, err)
	}
	status, _ := st.Data.Attributes["status"].(float64)
	return int(status), nil
}

func (k *k6API) Teardown(ctx context.Context, pod *corev1.Pod) error {
	_, err := k.do(ctx, pod, scriptTimeout, runners.APIPort, http.MethodPost, "/v1/teardown", nil, maxSmallAnswer)
	return err
}

func (k *k6API) Release(ctx context.Context, pod *corev1.Pod) error {
	_, err := k.do(ctx, pod, CallTimeout, runners.LivePort, http.MethodPost, measure.ReleasePath, nil, maxSmallAnswer)
	return err
}

func (k *k6API) Final(ctx context.Context, pod *corev1.Pod) (measure.Envelope, error) {
	b, release, err := k.doLarge(ctx, pod, 0, runners.LivePort, http.MethodGet, measure.FinalPath, nil, measure.MaxWireBytes)
	if err != nil {
		return measure.Envelope{}, err
	}
	defer release()
	return measure.ExtractEnvelopeWithin(b, envelopeLimitsOf(ctx))
}

// k6Status is the body of k6's /v1/status.
type k6Status struct {
	Data struct {
		Type       string         `json:"type"`
		ID         string         `json:"id"`
		Attributes map[string]any `json:"attributes"`
	} `json:"data"`
}

func statusBody(attrs map[string]any) []byte {
	var s k6Status
	s.Data.Type, s.Data.ID, s.Data.Attributes = "status", "default", attrs
	b, _ := json.Marshal(s)
	return b
}
