package testrun

import (
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// DefaultPullRetryGrace is how long an image pull may be seen failing before the run gives up on it.
// The kubelet retries after 10 s and 20 s of back-off, so by then it failed at least twice,
// and a transient refusal (a registry's 429 or 5xx, a pull queued behind others) had time to
// heal. What keeps failing that long (an unreachable registry, a wrong name, missing
// credentials) does not heal; waiting out the provisioning timeout would only hide it.
const DefaultPullRetryGrace = time.Minute

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
// no count of failures nor their times, so this in-memory record is what measures how long a
// pull has been failing; after an operator restart it starts again, which only waits longer.
type pullFailures struct {
	grace time.Duration
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

// gaveUp says whether pod's image pull has been failing for the grace, with the kubelet's
// message; otherwise, how long until that is known (0 when nothing fails).
func (p *pullFailures) gaveUp(pod *corev1.Pod, now time.Time) (message string, recheck time.Duration) {
	key, msg := pullFailure(pod)
	if key == "" {
		return "", 0
	}
	if d := p.failingFor(key, now); d < p.grace {
		return "", p.grace - d
	}
	return fmt.Sprintf("%s (still failing after %s of the kubelet's retries)", msg, p.grace), 0
}
