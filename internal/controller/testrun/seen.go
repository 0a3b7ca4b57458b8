package testrun

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"fleetbench.dev/fleetbench/pkg/measure"
)

// lastSeen keeps, for runs that replace lost runners, each running runner's envelope from the
// last live read: what a runner measured until then is all that is left of it once its pod is
// deleted with its log. One envelope per runner (bounded by the envelope limits), dropped when
// the runner is replaced or the run is forgotten. Memory only: after a manager restart a runner
// lost before the next live read has no results kept, and its gap starts at the start.
type lastSeen struct {
	mu    sync.Mutex
	byRun map[types.UID]map[types.UID]seenEnvelope
}

type seenEnvelope struct {
	env measure.Envelope
	at  time.Time
}

func newLastSeen() *lastSeen { return &lastSeen{byRun: map[types.UID]map[types.UID]seenEnvelope{}} }

// put keeps pod's envelope as read at; the end of its windows, when it says, is when it covers
// to. That end is the runner's own clock: one past the read would hide a gap, so it is not taken.
func (l *lastSeen) put(run, pod types.UID, env measure.Envelope, at time.Time) {
	if env.EndUnixNano > 0 && env.EndUnixNano < at.UnixNano() {
		at = time.Unix(0, env.EndUnixNano)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byRun[run] == nil {
		l.byRun[run] = map[types.UID]seenEnvelope{}
	}
	l.byRun[run][pod] = seenEnvelope{env: env, at: at}
}

// take returns pod's last envelope and forgets it.
func (l *lastSeen) take(run, pod types.UID) (measure.Envelope, time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.byRun[run][pod]
	delete(l.byRun[run], pod)
	return e.env, e.at, ok
}

func (l *lastSeen) forget(run types.UID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.byRun, run)
}
