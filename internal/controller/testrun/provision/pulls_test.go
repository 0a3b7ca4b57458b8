package provision

import (
	"strings"
	"testing"
	"time"

	tw "fleetbench.dev/fleetbench/internal/testwrappers"
)

// A failing pull is given up only when it has been failing for pullRetryGrace, through the
// kubelet's retries.
func TestPullGivenUpAfterTheFirstBackOff(t *testing.T) {
	p := PullFailures{Grace: DefaultPullRetryGrace}
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	failing := runnerPod().Waiting("ErrImagePull", "dial tcp: no such host").Obj()
	failing.UID = "u1"
	if msg, recheck := p.GaveUp(failing, t0); msg != "" || recheck != DefaultPullRetryGrace {
		t.Fatalf("first sight: %q, recheck %s; want to look again after %s", msg, recheck, DefaultPullRetryGrace)
	}
	backingOff := runnerPod().Waiting("ImagePullBackOff", `Back-off pulling image "x"`).Obj()
	backingOff.UID = "u1"
	if msg, recheck := p.GaveUp(backingOff, t0.Add(40*time.Second)); msg != "" || recheck != 20*time.Second {
		t.Fatalf("in the back-off: %q, recheck %s; want 20s more", msg, recheck)
	}
	if msg, _ := p.GaveUp(failing, t0.Add(61*time.Second)); !strings.Contains(msg, "ErrImagePull dial tcp: no such host") {
		t.Fatalf("still failing after a minute: %q, want the kubelet's message", msg)
	}
	pulled := tw.MakePod("r-runner-0-y", "ns", "k6").Ready("10.0.0.2").Obj()
	if msg, recheck := p.GaveUp(pulled, t0); msg != "" || recheck != 0 {
		t.Errorf("a running pod: %q, %s", msg, recheck)
	}
}
