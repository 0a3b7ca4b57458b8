package testrun

import (
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// pullRetryGrace is the kubelet's first image back-off: a pull still failing this long after
// the first failure was seen has failed again, and will keep failing (an unreachable registry,
// a wrong name, missing credentials). Waiting out the provisioning timeout would only hide it.
const pullRetryGrace = 10 * time.Second

// pullFailure is a container waiting because its image cannot be pulled, with the kubelet's
// words; "" if none.
func pullFailure(pod *corev1.Pod) (key, message string) {
	for _, cs := range pod.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil && (w.Reason == "ErrImagePull" || w.Reason == "ImagePullBackOff") {
			return string(pod.UID) + "/" + cs.Name, strings.TrimSpace(fmt.Sprintf("image %s: %s %s", cs.Image, w.Reason, w.Message))
		}
	}
	return "", ""
}

// pullFailures remembers when each container's pull failure was first seen. Pod status keeps
// no count of failures, so this in-memory record is what tells a second failure from the
// first; after an operator restart the count starts again, which only waits longer.
type pullFailures struct {
	mu    sync.Mutex
	since map[string]time.Time
}

// failingFor is how long the pull of key has been seen failing, counting from now on the first call.
func (p *pullFailures) failingFor(key string, now time.Time) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.since == nil || len(p.since) > 10000 { // bounded: entries of pods long gone are dropped
		p.since = map[string]time.Time{}
	}
	first, ok := p.since[key]
	if !ok {
		p.since[key] = now
		return 0
	}
	return now.Sub(first)
}

// gaveUp says whether pod's image pull failed again after the kubelet's first back-off, with
// its message; otherwise, how long until that is known (0 when nothing fails).
func (p *pullFailures) gaveUp(pod *corev1.Pod, now time.Time) (message string, recheck time.Duration) {
	key, msg := pullFailure(pod)
	if key == "" {
		return "", 0
	}
	if d := p.failingFor(key, now); d < pullRetryGrace {
		return "", pullRetryGrace - d
	}
	return msg, 0
}
