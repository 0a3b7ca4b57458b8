// Package preflight is the runner's `wait-for-target` command: it returns once every target
// address accepts a TCP connection from this pod, so a runner reports Ready only when the
// network lets it reach the target (a NetworkPolicy controller may admit a new pod a moment
// after it starts; a load started before that would count refused requests against the target).
package preflight

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"time"

	"fleetbench.dev/fleetbench/pkg/measure"
)

// Command is the first argument that selects the preflight instead of k6.
const Command = "wait-for-target"

// retryInterval bounds each dial and the pause between rounds: a target that refuses is
// asked again this soon, and one a NetworkPolicy drops costs one interval per round.
const retryInterval = 250 * time.Millisecond

// Dialer opens a connection; net.Dialer's DialContext in production.
type Dialer func(ctx context.Context, network, address string) (net.Conn, error)

// Wait dials every address until each has accepted once, retrying every interval, for at most
// timeout. The error names the addresses still unreachable and the last dial error of each.
func Wait(ctx context.Context, dial Dialer, addrs []string, timeout, interval time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	pending := map[string]error{}
	for _, a := range addrs {
		pending[a] = errors.New("not tried")
	}
	for {
		for _, a := range addrs {
			if _, ok := pending[a]; !ok {
				continue
			}
			attempt, stop := context.WithTimeout(ctx, interval)
			conn, err := dial(attempt, "tcp", a)
			stop()
			if err != nil {
				pending[a] = err
				continue
			}
			_ = conn.Close()
			delete(pending, a)
		}
		if len(pending) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			msg := ""
			for _, a := range addrs {
				if err, ok := pending[a]; ok {
					msg += fmt.Sprintf("; %s: %v", a, err)
				}
			}
			return fmt.Errorf("the target was not reachable from this runner within %s%s "+
				"(a NetworkPolicy or the network keeps the runner out)", timeout, msg)
		case <-time.After(interval):
		}
	}
}

// process is this process's wait for the target, begun by StartFromEnv. k6 builds the output
// that serves the runner's readiness itself, so a package variable is the one way to hand the
// wait over to it.
var process struct {
	started, reached atomic.Bool
}

// Reached says whether this runner may report ready: no wait was begun (nothing to reach, or
// the operator's pre-flight check), or every address accepted a connection.
func Reached() bool {
	return !process.started.Load() || process.reached.Load()
}

// StartFromEnv begins the wait for the addresses in measure.ReachEnv beside k6, in k6's own
// container (an init container would cost every runner pod a container start): k6 loads the
// script and initializes its VUs meanwhile, paused, and the runner reports ready (Reached) only
// once the wait is over, so a target that starts slowly no longer has the script's load after
// it. If an address is never reached, the reason is printed (the log's end is the pod's
// termination message) and exit is called with measure.ExitTargetUnreachable.
func StartFromEnv(getenv func(string) string, out io.Writer, exit func(int)) {
	d := &net.Dialer{}
	startFromEnv(getenv, out, exit, d.DialContext)
}

func startFromEnv(getenv func(string) string, out io.Writer, exit func(int), dial Dialer) {
	list := getenv(measure.ReachEnv)
	if list == "" {
		return
	}
	timeout, err := time.ParseDuration(getenv(measure.ReachTimeoutEnv))
	if err != nil || timeout <= 0 {
		timeout = time.Minute
	}
	process.started.Store(true)
	go func() {
		if err := Wait(context.Background(), dial, strings.Split(list, ","), timeout, retryInterval); err != nil {
			_, _ = fmt.Fprintln(out, err)
			exit(measure.ExitTargetUnreachable)
			return
		}
		process.reached.Store(true)
	}()
}

// Main runs `wait-for-target [--timeout D] host:port...` and returns the exit code.
func Main(args []string, out io.Writer) int {
	fs := flag.NewFlagSet(Command, flag.ContinueOnError)
	fs.SetOutput(out)
	timeout := fs.Duration("timeout", time.Minute, "how long to wait for every address")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		_, _ = fmt.Fprintln(out, "usage: wait-for-target [--timeout D] host:port...")
		return 2
	}
	start := time.Now()
	d := &net.Dialer{}
	if err := Wait(context.Background(), d.DialContext, fs.Args(), *timeout, retryInterval); err != nil {
		_, _ = fmt.Fprintln(out, err)
		return 1
	}
	_, _ = fmt.Fprintf(out, "target reachable after %s: %v\n", time.Since(start).Round(time.Millisecond), fs.Args())
	return 0
}
