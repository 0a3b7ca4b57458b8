package drive

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	"fleetbench.dev/fleetbench/internal/controller/testrun/runenv"
	"fleetbench.dev/fleetbench/internal/controller/testrun/runio"
	"fleetbench.dev/fleetbench/pkg/measure"
)

// connCounter counts the connections runners' servers saw opened and closed.
type connCounter struct {
	mu             sync.Mutex
	opened, closed int
}

func (c *connCounter) hook(_ net.Conn, st http.ConnState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch st {
	case http.StateNew:
		c.opened++
	case http.StateClosed, http.StateHijacked:
		c.closed++
	}
}

func (c *connCounter) counts() (opened, closed int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.opened, c.closed
}

// allClosed waits, up to a deadline, for every connection opened to be closed; it reports
// the counts seen last.
func (c *connCounter) allClosed() (opened, closed int) {
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		opened, closed = c.counts()
		if opened == closed || time.Now().After(deadline) {
			return opened, closed
		}
	}
}

// k6Like answers as a paused k6 and its live port do: readiness, status, resume, the envelopes.
func k6Like(t *testing.T, conns *connCounter) *httptest.Server {
	env := measure.Envelope{Runner: "r", K6Version: "v", StartUnixNano: 1, EndUnixNano: 2, WindowNanos: 1e9,
		Accuracy: measure.RelativeAccuracy, Metrics: []measure.Metric{}}
	var live bytes.Buffer
	if err := measure.Encode(&live, &env); err != nil {
		t.Fatal(err)
	}
	env.Final = true
	var final bytes.Buffer
	if err := measure.Encode(&final, &env); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case measure.ReadyPath:
			_, _ = w.Write([]byte("ok"))
		case measure.LivePath:
			_, _ = w.Write(live.Bytes())
		case measure.FinalPath:
			_, _ = w.Write(final.Bytes())
		case "/v1/setup":
			_, _ = w.Write([]byte(`{"data":{"attributes":{"data":{"token":"t"}}}}`))
		default:
			_, _ = w.Write([]byte(`{"data":{"type":"status","id":"default","attributes":{"status":9,"paused":false}}}`))
		}
	}))
	srv.Config.ConnState = conns.hook
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// runnerPods are n pods, each reached at its own server (a pod IP is one host).
func runnerPods(t *testing.T, n int, conns *connCounter) (runio.RunnerAPI, []decide.RunnerState) {
	addrs := map[string]string{}
	states := make([]decide.RunnerState, n)
	for i := range n {
		srv := k6Like(t, conns)
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("r-runner-%d", i), Namespace: "team-a"},
			Status: corev1.PodStatus{PodIP: "10.0.0.1", Phase: corev1.PodRunning}}
		addrs[pod.Name] = strings.TrimPrefix(srv.URL, "http://")
		states[i] = decide.RunnerState{Index: i, Pod: pod}
	}
	return runio.DirectRunnerAPIAt(func(pod *corev1.Pod, _ int) string { return addrs[pod.Name] }), states
}

// TestStartKeepsConnectionsOnlyForItself: the start's Resume calls go out on the connections
// their Warm opened (one connection per runner, no handshake between the two), and once every
// runner answered none of them stays open: idle, 5,000 of them were most of the manager's
// memory at that scale.
func TestStartKeepsConnectionsOnlyForItself(t *testing.T) {
	const n = 6
	conns := &connCounter{}
	api, states := runnerPods(t, n, conns)
	r := New(&runenv.Env{Options: runenv.Options{RunnerAPI: api}})
	acks := r.resumeAll(context.Background(), &decide.Scope{Runners: states}, time.Time{})
	for i, a := range acks {
		if a.err != nil || a.at.IsZero() {
			t.Errorf("runner %d: ack %+v, want a resume", i, a)
		}
	}
	if opened, _ := conns.counts(); opened != n {
		t.Errorf("%d connections opened for %d runners' Warm and Resume, want one each", opened, n)
	}
	if opened, closed := conns.allClosed(); opened != closed {
		t.Errorf("after the start %d of %d connections to the runners are still open", opened-closed, opened)
	}
}

// TestCallsOutsideTheStartKeepNoConnection: every other call's connection closes with its
// answer (the live reads every few seconds, the held final request, the k6-up check, setup
// data), and the calls still answer as before.
func TestCallsOutsideTheStartKeepNoConnection(t *testing.T) {
	conns := &connCounter{}
	api, states := runnerPods(t, 1, conns)
	pod, ctx := states[0].Pod, context.Background()
	if err := api.Warm(ctx, pod); err != nil {
		t.Fatalf("Warm: %v", err)
	}
	live, err := api.Envelope(ctx, pod)
	if err != nil || live.Runner != "r" || live.Final {
		t.Fatalf("Envelope: %+v, %v", live, err)
	}
	final, err := api.Final(ctx, pod)
	if err != nil || !final.Final {
		t.Fatalf("Final: %+v, %v", final, err)
	}
	if ended, err := api.Ended(ctx, pod); err != nil || !ended {
		t.Fatalf("Ended: %v, %v", ended, err)
	}
	if data, err := api.SetupData(ctx, pod); err != nil || string(data) != `{"token":"t"}` {
		t.Fatalf("SetupData: %s, %v", data, err)
	}
	// Warm asks twice (the readiness on the live port, then k6's status): six calls.
	opened, closed := conns.allClosed()
	if opened != 6 || closed != opened {
		t.Errorf("6 calls opened %d connections and %d are still open, want one each, all closed", opened, opened-closed)
	}
}

// TestARunnerCannotKeepItsConnection: a runner that answers "keep-alive" and then waits on the
// connection does not keep it (nor the manager's two goroutines behind it): the manager closes
// it after the answer, whatever the runner asked for.
func TestARunnerCannotKeepItsConnection(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	closed := make(chan error, 1)
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			closed <- err
			return
		}
		defer func() { _ = conn.Close() }()
		br := bufio.NewReader(conn)
		if _, err := http.ReadRequest(br); err != nil {
			closed <- err
			return
		}
		body := `{"data":{"type":"status","id":"default","attributes":{"status":9}}}`
		_, _ = fmt.Fprintf(conn, "HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nKeep-Alive: timeout=3600\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err = br.ReadByte() // the manager's close ends this read with EOF; a kept connection, with the deadline
		closed <- err
	}()
	api := runio.DirectRunnerAPIAt(func(*corev1.Pod, int) string { return ln.Addr().String() })
	if ended, err := api.Ended(context.Background(), testPod()); err != nil || !ended {
		t.Fatalf("Ended: %v, %v", ended, err)
	}
	if err := <-closed; !errors.Is(err, io.EOF) {
		t.Errorf("the runner's connection after its answer: %v, want closed by the manager (EOF)", err)
	}
}

func testPod() *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "r-runner-0-x", Namespace: "team-a"}, Status: corev1.PodStatus{PodIP: "10.0.0.1"}}
}
