package runio

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"unicode"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"fleetbench.dev/fleetbench/pkg/measure"
)

// redirecting is a runner that sends every request on to target, as a look-alike pod aiming
// the manager at another tenant's runner did; hits counts what reaches target.
func redirecting(t *testing.T, code int) (runner *httptest.Server, hits *atomic.Int64) {
	hits = &atomic.Int64{}
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		_, _ = w.Write([]byte(`{"data":{"attributes":{"data":{"secret":"VICTIM-SECRET-4711"}}}}`))
	}))
	t.Cleanup(target.Close)
	runner = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+r.URL.Path, code)
	}))
	t.Cleanup(runner.Close)
	return runner, hits
}

func testPod() *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "r-runner-0-x", Namespace: "team-a"}, Status: corev1.PodStatus{PodIP: "10.0.0.1"}}
}

// everyCall makes each call of the runner API once and returns their errors by name.
func everyCall(api RunnerAPI, pod *corev1.Pod) map[string]error {
	ctx := context.Background()
	_, setupErr := api.Setup(ctx, pod)
	_, envErr := api.Envelope(ctx, pod)
	_, finalErr := api.Final(ctx, pod)
	_, endedErr := api.Ended(ctx, pod)
	return map[string]error{
		"Warm": api.Warm(ctx, pod), "Resume": api.Resume(ctx, pod), "Stop": api.Stop(ctx, pod), "Setup": setupErr,
		"SetSetupData": api.SetSetupData(ctx, pod, []byte(`{"a":1}`)), "Ended": endedErr, "Teardown": api.Teardown(ctx, pod),
		"Release": api.Release(ctx, pod), "Envelope": envErr, "Final": finalErr,
	}
}

// TestDirectClientFollowsNoRedirect: whatever a runner answers with a redirect, no request
// reaches where it points, and each call fails naming the runner.
func TestDirectClientFollowsNoRedirect(t *testing.T) {
	for _, code := range []int{http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		runner, hits := redirecting(t, code)
		api := DirectRunnerAPIAt(func(*corev1.Pod, int) string { return strings.TrimPrefix(runner.URL, "http://") })
		for call, err := range everyCall(api, testPod()) {
			if err == nil || !strings.Contains(err.Error(), "r-runner-0-x") || !strings.Contains(err.Error(), "redirect") {
				t.Errorf("%d: %s: error %v, want one naming the runner and the redirect", code, call, err)
			}
		}
		if n := hits.Load(); n != 0 {
			t.Errorf("%d: %d requests reached the redirect's target", code, n)
		}
	}
}

// TestProxyClientFollowsNoRedirect: the same through the API server's pod proxy, whose answer
// the manager's rest client would otherwise follow with its own credentials.
func TestProxyClientFollowsNoRedirect(t *testing.T) {
	apiServer, hits := redirecting(t, http.StatusTemporaryRedirect)
	api, err := NewProxyRunnerAPI(&rest.Config{Host: apiServer.URL})
	if err != nil {
		t.Fatal(err)
	}
	for call, err := range everyCall(api, testPod()) {
		if err == nil || !strings.Contains(err.Error(), "redirect") {
			t.Errorf("%s: error %v, want a refused redirect", call, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("%d requests reached the redirect's target", n)
	}
	cs, _, err := NoRedirectClientset(&rest.Config{Host: apiServer.URL})
	if err != nil {
		t.Fatal(err)
	}
	_, err = (&APILogReader{Clientset: cs}).Tail(context.Background(), testPod(), "k6", 10, false)
	if err == nil || hits.Load() != 0 {
		t.Errorf("log read through a redirect: %v, %d requests reached its target", err, hits.Load())
	}
}

// TestAnswersAreBounded: an answer over its call's limit is an error, not a truncated parse,
// and an error's body reaches the message short and without control characters.
func TestAnswersAreBounded(t *testing.T) {
	var body atomic.Value
	var code atomic.Int64
	runner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(int(code.Load()))
		_, _ = w.Write(body.Load().([]byte))
	}))
	defer runner.Close()
	api := DirectRunnerAPIAt(func(*corev1.Pod, int) string { return strings.TrimPrefix(runner.URL, "http://") })
	ctx := context.Background()

	code.Store(200)
	body.Store([]byte(`{"data":{"attributes":{"status":9,"pad":"` + strings.Repeat("x", maxSmallAnswer) + `"}}}`))
	if _, err := api.Ended(ctx, testPod()); !errors.Is(err, errTooLarge) {
		t.Errorf("status answer of %d KiB: %v, want too large", maxSmallAnswer>>10, err)
	}
	body.Store([]byte(strings.Repeat("A", measure.MaxWireBytes+1)))
	if _, err := api.Envelope(ctx, testPod()); !errors.Is(err, errTooLarge) {
		t.Errorf("envelope answer of %d MiB: %v, want too large", measure.MaxWireBytes>>20, err)
	}
	if used := WireMemory.Used(); used != 0 {
		t.Errorf("%d bytes of wireMemory still held", used)
	}

	code.Store(403)
	body.Store([]byte("\x1b[31mVICTIM-SECRET\x1b[0m\n\r" + strings.Repeat("internal admin API ", 10_000)))
	err := api.Stop(ctx, testPod())
	if err == nil {
		t.Fatal("a 403 was taken as a stop")
	}
	msg := err.Error()
	if len(msg) > 400 || strings.ContainsFunc(msg, unicode.IsControl) {
		t.Errorf("error of %d bytes with control characters %v: %q", len(msg), strings.ContainsFunc(msg, unicode.IsControl), msg)
	}
}
