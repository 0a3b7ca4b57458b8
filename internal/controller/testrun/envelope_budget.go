package testrun

import (
	"context"

	"fleetbench.dev/fleetbench/pkg/results"
)

// A run's envelopes are held together (merged at collection, judged live), so what one may
// take shrinks with the run's runner count: a run of N runners holds at most runEnvelopeBudget
// of decoded envelopes, however many runners it has. A run of one runner gets the most any
// envelope may take (results.DefaultLimits); a run of 1,000 runners 192 KiB each, which the
// envelopes of a fleet that large have always had to fit for the manager to hold them at all.
const (
	runEnvelopeBudget = 192 << 20
	minEnvelopeCost   = 128 << 10
)

// envelopeLimits are the limits of one envelope of a run of n runners.
func envelopeLimits(n int) results.Limits {
	l := results.DefaultLimits
	l.MaxCost = min(l.MaxCost, max(minEnvelopeCost, runEnvelopeBudget/int64(max(n, 1))))
	return l
}

type limitsKey struct{}

// withEnvelopeLimits has RunnerAPI calls under ctx decode envelopes within l.
func withEnvelopeLimits(ctx context.Context, l results.Limits) context.Context {
	return context.WithValue(ctx, limitsKey{}, l)
}

func envelopeLimitsOf(ctx context.Context) results.Limits {
	if l, ok := ctx.Value(limitsKey{}).(results.Limits); ok {
		return l
	}
	return results.DefaultLimits
}

// retainedFinals bounds the final envelopes kept in memory between their arrival and their
// run's collection, over every run: one that does not fit is not kept, and its run reads it
// from the runner's log instead (within that run's own budget).
var retainedFinals = results.NewBudget(runEnvelopeBudget)
