package testrun

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	"fleetbench.dev/fleetbench/pkg/results"
	"fleetbench.dev/fleetbench/pkg/runners"
)

// RunnerAPI talks to one runner's k6 REST API. Only this and LogReader stand between the
// reconciler and the runners, so tests replace just these two.
type RunnerAPI interface {
	// Resume un-pauses a runner started with --paused; resuming a running one is a no-op.
	Resume(ctx context.Context, pod *corev1.Pod) error
	// Stop ends a runner's test early; k6 then flushes its outputs, so the result envelope
	// is still printed.
	Stop(ctx context.Context, pod *corev1.Pod) error
	// Envelope reads what the runner measured so far from its live endpoint.
	Envelope(ctx context.Context, pod *corev1.Pod) (results.Envelope, error)
}

// k6Status is the body of k6's PATCH /v1/status.
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

// DirectRunnerAPI reaches runners at their pod IPs: the manager runs in the cluster.
type DirectRunnerAPI struct {
	Client *http.Client
}

// NewDirectRunnerAPI bounds every call: a runner that does not answer must not hold a reconcile.
func NewDirectRunnerAPI() *DirectRunnerAPI {
	return &DirectRunnerAPI{Client: &http.Client{Timeout: 5 * time.Second}}
}

func (d *DirectRunnerAPI) Resume(ctx context.Context, pod *corev1.Pod) error {
	return d.patch(ctx, pod, map[string]any{"paused": false})
}

func (d *DirectRunnerAPI) Stop(ctx context.Context, pod *corev1.Pod) error {
	return d.patch(ctx, pod, map[string]any{"stopped": true})
}

func (d *DirectRunnerAPI) patch(ctx context.Context, pod *corev1.Pod, attrs map[string]any) error {
	if pod.Status.PodIP == "" {
		return fmt.Errorf("runner pod %s has no IP yet", pod.Name)
	}
	url := "http://" + pod.Status.PodIP + ":" + strconv.Itoa(runners.APIPort) + "/v1/status"
	req, err := http.NewRequestWithContext(ctx, http.MethodPatch, url, bytes.NewReader(statusBody(attrs)))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := d.Client.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	return checkStatus(pod, resp.StatusCode, resp.Body)
}

func (d *DirectRunnerAPI) Envelope(ctx context.Context, pod *corev1.Pod) (results.Envelope, error) {
	if pod.Status.PodIP == "" {
		return results.Envelope{}, fmt.Errorf("runner pod %s has no IP yet", pod.Name)
	}
	url := "http://" + pod.Status.PodIP + ":" + strconv.Itoa(runners.LivePort) + results.LivePath
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return results.Envelope{}, err
	}
	resp, err := d.Client.Do(req)
	if err != nil {
		return results.Envelope{}, err
	}
	defer func() { _ = resp.Body.Close() }()
	if err := checkStatus(pod, resp.StatusCode, nil); err != nil {
		return results.Envelope{}, err
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxLiveEnvelope))
	if err != nil {
		return results.Envelope{}, err
	}
	return results.ExtractEnvelope(b)
}

// maxLiveEnvelope bounds what one runner's live answer may take in memory.
const maxLiveEnvelope = 64 << 20

// ProxyRunnerAPI reaches runners through the API server's pods/proxy: the manager runs outside
// the cluster (make run, tests) and no network path to pod IPs is needed.
type ProxyRunnerAPI struct {
	REST rest.Interface
}

func (p *ProxyRunnerAPI) Resume(ctx context.Context, pod *corev1.Pod) error {
	return p.patch(ctx, pod, map[string]any{"paused": false})
}

func (p *ProxyRunnerAPI) Stop(ctx context.Context, pod *corev1.Pod) error {
	return p.patch(ctx, pod, map[string]any{"stopped": true})
}

func (p *ProxyRunnerAPI) patch(ctx context.Context, pod *corev1.Pod, attrs map[string]any) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	result := p.REST.Patch("application/json").
		Namespace(pod.Namespace).Resource("pods").Name(pod.Name + ":" + strconv.Itoa(runners.APIPort)).
		SubResource("proxy").Suffix("v1/status").Body(statusBody(attrs)).Do(ctx)
	var code int
	result.StatusCode(&code)
	if err := result.Error(); err != nil {
		return fmt.Errorf("runner %s: %w", pod.Name, err)
	}
	return checkStatus(pod, code, nil)
}

func (p *ProxyRunnerAPI) Envelope(ctx context.Context, pod *corev1.Pod) (results.Envelope, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	b, err := p.REST.Get().Namespace(pod.Namespace).Resource("pods").Name(pod.Name + ":" + strconv.Itoa(runners.LivePort)).
		SubResource("proxy").Suffix(results.LivePath).DoRaw(ctx)
	if err != nil {
		return results.Envelope{}, fmt.Errorf("runner %s: %w", pod.Name, err)
	}
	return results.ExtractEnvelope(b)
}

func checkStatus(pod *corev1.Pod, code int, body io.Reader) error {
	if code >= 200 && code < 300 {
		return nil
	}
	msg := ""
	if body != nil {
		b, _ := io.ReadAll(io.LimitReader(body, 512))
		msg = string(b)
	}
	return fmt.Errorf("runner %s answered %d %s", pod.Name, code, msg)
}
