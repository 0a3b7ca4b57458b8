package preflight

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"fleetbench.dev/fleetbench/pkg/measure"
)

func TestWaitReturnsOnceEveryAddressAccepts(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	// The first two dials are refused, as while a policy controller has not admitted the pod.
	var calls atomic.Int32
	d := &net.Dialer{}
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		if calls.Add(1) <= 2 {
			return nil, &net.OpError{Op: "dial", Err: errRefused}
		}
		return d.DialContext(ctx, network, addr)
	}
	if err := Wait(context.Background(), dial, []string{ln.Addr().String()}, 5*time.Second, 10*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 3 {
		t.Errorf("dialed %d times, want 3 (two refusals, one success)", calls.Load())
	}
}

var errRefused = &net.AddrError{Err: "connection refused"}

func TestWaitNamesWhatStayedUnreachable(t *testing.T) {
	// A port nothing listens on: find one by closing a listener.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	_ = ln.Close()
	var out bytes.Buffer
	if code := Main([]string{"--timeout", "300ms", closed}, &out); code != 1 {
		t.Fatalf("exit %d, want 1; output %s", code, out.String())
	}
	if !strings.Contains(out.String(), closed) || !strings.Contains(out.String(), "NetworkPolicy") {
		t.Errorf("output %q must name the address and the likely cause", out.String())
	}
	if code := Main(nil, &out); code != 2 {
		t.Errorf("no address: exit %d, want 2", code)
	}
}

// StartFromEnv: nothing to reach is ready at once; a target that accepts only later is ready
// once it does, not before; an unreachable one ends the runner with ExitTargetUnreachable and
// says which address, and never reports ready.
func TestStartFromEnvReportsReadyOnlyOnceReached(t *testing.T) {
	const target = "target.ns.svc:8080"
	var listening atomic.Bool
	dial := func(_ context.Context, _, address string) (net.Conn, error) {
		if address != target || !listening.Load() {
			return nil, errors.New("connection refused")
		}
		client, server := net.Pipe()
		_ = server.Close()
		return client, nil
	}
	// out is written before exit is called, and read only after exit's code arrived.
	start := func(env map[string]string) (exited chan int, out *bytes.Buffer) {
		process.started.Store(false)
		process.reached.Store(false)
		exited, out = make(chan int, 1), &bytes.Buffer{}
		startFromEnv(func(k string) string { return env[k] }, out, func(code int) { exited <- code }, dial)
		return exited, out
	}

	if start(map[string]string{}); !Reached() {
		t.Error("nothing to reach: want ready at once")
	}

	exited, _ := start(map[string]string{measure.ReachEnv: target, measure.ReachTimeoutEnv: "20s"})
	time.Sleep(3 * retryInterval) // rounds of refusals
	if Reached() {
		t.Error("a target not accepting yet: reported ready")
	}
	listening.Store(true)
	deadline := time.Now().Add(10 * time.Second)
	for !Reached() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !Reached() {
		t.Error("the target accepts: want ready within 10 s")
	}
	select {
	case code := <-exited:
		t.Errorf("a reached target: the runner exited %d", code)
	default:
	}

	const other = "other.ns.svc:5222"
	exited, out := start(map[string]string{measure.ReachEnv: target + "," + other, measure.ReachTimeoutEnv: "600ms"})
	select {
	case code := <-exited:
		if code != measure.ExitTargetUnreachable || !strings.Contains(out.String(), other) || strings.Contains(out.String(), target+":") {
			t.Errorf("one address unreachable: exit %d, said %q; want %d naming %s only", code, out.String(), measure.ExitTargetUnreachable, other)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("unreachable for longer than its 600ms timeout: the runner did not exit")
	}
	if Reached() {
		t.Error("unreachable: reported ready")
	}
}
