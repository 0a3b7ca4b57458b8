package preflight

import (
	"bytes"
	"context"
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

// FromEnv: nothing to reach goes on at once; a reachable target goes on; an unreachable one
// ends the runner with ExitTargetUnreachable and says which address.
func TestFromEnvWaitsBeforeK6(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := closed.Addr().String()
	closed.Close()
	for _, tc := range []struct {
		name string
		env  map[string]string
		want int
		says string
	}{
		{name: "nothing to reach", env: map[string]string{}, want: 0},
		{name: "reachable", env: map[string]string{measure.ReachEnv: ln.Addr().String(), measure.ReachTimeoutEnv: "5s"}, want: 0},
		{name: "unreachable", env: map[string]string{measure.ReachEnv: ln.Addr().String() + "," + refused, measure.ReachTimeoutEnv: "600ms"},
			want: measure.ExitTargetUnreachable, says: refused},
	} {
		var out bytes.Buffer
		got := FromEnv(func(k string) string { return tc.env[k] }, &out)
		if got != tc.want || !strings.Contains(out.String(), tc.says) {
			t.Errorf("%s: exit %d, said %q; want %d saying %q", tc.name, got, out.String(), tc.want, tc.says)
		}
	}
}
