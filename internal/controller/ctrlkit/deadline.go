package ctrlkit

import (
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// Timeout is a spec duration, or fallback where the spec leaves it unset. Admission has
// checked the format, so an unparsable value cannot arrive; it falls back all the same.
func Timeout(spec v1alpha1.Duration, fallback time.Duration) time.Duration {
	if spec == "" {
		return fallback
	}
	d, err := time.ParseDuration(string(spec))
	if err != nil {
		return fallback
	}
	return d
}

// Expired says whether deadline has come.
func Expired(now, deadline time.Time) bool { return !now.Before(deadline) }

// WaitUntil is the Result of a wait bounded by deadline: come back when it passes, or after
// poll (when poll > 0) if that is sooner, for what no watch reports.
func WaitUntil(now, deadline time.Time, poll time.Duration) ctrl.Result {
	return After(min(deadline.Sub(now), poll), deadline.Sub(now))
}

// After is a Result that comes back after the smallest positive duration given, and at least
// a millisecond later: a zero Result would mean "only when something changes".
func After(ds ...time.Duration) ctrl.Result {
	var d time.Duration
	for _, x := range ds {
		if x > 0 && (d == 0 || x < d) {
			d = x
		}
	}
	return ctrl.Result{RequeueAfter: max(d, time.Millisecond)}
}

// TTLLeft is how long a finished object has before ttlSeconds after completion delete it;
// expired says it is due. No TTL or no completion: nothing is due.
func TTLLeft(completion *time.Time, ttlSeconds *int32, now time.Time) (left time.Duration, expired bool) {
	if completion == nil || ttlSeconds == nil {
		return 0, false
	}
	left = completion.Add(time.Duration(*ttlSeconds) * time.Second).Sub(now)
	return max(left, time.Millisecond), left <= 0
}
