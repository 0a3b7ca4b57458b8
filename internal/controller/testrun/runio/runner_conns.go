package runio

import (
	"context"
	"net"
	"net/http"
	"time"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// Connections to runners at their pod IPs. While a fleet runs, the one connection the manager
// needs per runner is its held final-envelope request: every other call's connection closes
// with its answer (an idle connection costs two goroutines and their stacks; 5,000 runners'
// idle k6 API and live connections were most of the manager's memory at that scale). The start
// is the exception: each runner's Resume must go out on the connection its Warm opened, so no
// handshake widens the skew. Those connections live in a transport of that start's own, which
// is closed as soon as every runner answered.

// keptIdleTimeout bounds an idle connection of a start's transport should its release not come.
const keptIdleTimeout = 30 * time.Second

// runnerTransport is the HTTP transport to runners: small buffers, since every runner holds a
// connection for its final envelope (requests are a few hundred bytes; an answer's size is
// bounded by the call). Without keepAlive a connection closes with its answer.
func runnerTransport(keepAlive bool) *http.Transport {
	t := &http.Transport{
		Proxy: nil, DisableKeepAlives: !keepAlive,
		WriteBufferSize: 1 << 10, ReadBufferSize: 2 << 10,
		DialContext: (&net.Dialer{Timeout: CallTimeout, KeepAlive: 30 * time.Second}).DialContext,
	}
	if keepAlive {
		// One idle connection per runner of the start (a pod IP is one host; pods sharing an
		// address, as in tests, still keep theirs); all of them closed by the release.
		t.MaxIdleConns, t.MaxIdleConnsPerHost, t.IdleConnTimeout = 0, v1alpha1.MaxParallelism, keptIdleTimeout
	}
	return t
}

// keptClientKey carries, in a context, the client of a KeepConnections scope.
type keptClientKey struct{}

// directClients picks the client of a call: the start's own under KeepConnections, else the
// one whose connections close with their answers.
type directClients struct{ closing *http.Client }

func newDirectClients() directClients {
	return directClients{closing: &http.Client{Transport: runnerTransport(false), CheckRedirect: refuseRedirect}}
}

func (d directClients) client(ctx context.Context) *http.Client {
	if c, ok := ctx.Value(keptClientKey{}).(*http.Client); ok {
		return c
	}
	return d.closing
}

// keep gives the calls under the returned context a transport of their own whose connections
// stay open for each other until release closes them.
func (directClients) keep(ctx context.Context) (context.Context, func()) {
	t := runnerTransport(true)
	c := &http.Client{Transport: t, CheckRedirect: refuseRedirect}
	// A connection whose answer is still settling into the idle pool when release runs is
	// closed as it arrives: CloseIdleConnections marks the transport so, and nothing asks it
	// for a connection again.
	return context.WithValue(ctx, keptClientKey{}, c), t.CloseIdleConnections
}
