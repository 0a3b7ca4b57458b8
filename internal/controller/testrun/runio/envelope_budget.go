package runio

import (
	"context"

	"fleetbench.dev/fleetbench/pkg/measure"
)

// A run's envelopes are held together (merged at collection, judged live), so what one may
// hold decoded shrinks with the run's runner count: a run of N runners holds at most
// runEnvelopeBudget of decoded envelopes, however many runners it has. A run of one runner gets
// the most any envelope may take (measure.DefaultLimits); a run of 1,000 runners 192 KiB each.
// What a decode allocates besides (garbage, gone once it returns) is bounded per envelope by
// measure.DefaultLimits.MaxCost and over the process by measure.DecodeMemory, not by the run.
//
// Decoded histograms take what their data takes (measure.Histogram), so this fits: 8 runners
// of 8 trends x 5 series x 60 windows (1.1 MiB each; up to 181 such runners), and 1,000
// runners of a 10-minute single-series load (68 KiB each; up to 2,878). With dense
// histograms, priced at 25 MiB and 317 KiB, neither did.
const (
	runEnvelopeBudget = 192 << 20
	minEnvelopeCost   = 128 << 10
)

// EnvelopeLimits are the limits of one envelope of a run of n runners in namespace tenant,
// whose decodes are charged to it.
func EnvelopeLimits(n int, tenant string) measure.Limits {
	l := measure.DefaultLimits
	l.Tenant = tenant
	l.MaxHeld = min(l.MaxCost, max(minEnvelopeCost, runEnvelopeBudget/int64(max(n, 1))))
	return l
}

type limitsKey struct{}

// WithEnvelopeLimits has RunnerAPI calls under ctx decode envelopes within l.
func WithEnvelopeLimits(ctx context.Context, l measure.Limits) context.Context {
	return context.WithValue(ctx, limitsKey{}, l)
}

func envelopeLimitsOf(ctx context.Context) measure.Limits {
	if l, ok := ctx.Value(limitsKey{}).(measure.Limits); ok {
		return l
	}
	return measure.DefaultLimits
}

// HeldEnvelopes bounds the decoded envelopes kept in memory until their run's collection, over
// every run and fair by namespace: the final envelopes runners hand over (one that does not
// fit is not kept, and its run reads it from the runner's log instead) and those read from the
// runners' logs (a read waits for its namespace's share). Without it, runs of many namespaces
// collected at once each held up to runEnvelopeBudget.
var HeldEnvelopes = measure.NewHeldBudget(runEnvelopeBudget)
