package main

import (
	"flag"
	"fmt"
	"time"

	"fleetbench.dev/fleetbench/internal/controller/testrun/runenv"
	"fleetbench.dev/fleetbench/pkg/target"
)

// tenancyFlags are what an admin lets a tenant's target have: its namespace's labels, egress
// and how long it is kept.
type tenancyFlags struct {
	labels, egress string
	maxKept        time.Duration
}

func bindTenancyFlags(fs *flag.FlagSet) *tenancyFlags {
	f := &tenancyFlags{}
	fs.StringVar(&f.labels, "propagate-namespace-labels", "", "Comma-separated label keys a target namespace copies from its TestRun's "+
		"namespace when it is created (e.g. team,cost-center), so policies selecting namespaces by them follow the tenant; copied once, "+
		"a later change of the tenant's labels is not followed. fleetbench.dev/* and pod-security.kubernetes.io/* are the operator's own.")
	fs.StringVar(&f.egress, "egress-allow-list", "", "Comma-separated CIDRs spec.target.egress may open, each block inside one of them "+
		"(e.g. 10.20.0.0/16); a run asking for another ends Failed EgressNotAllowed. Empty: no egress beyond DNS and the target's own pods. "+
		"The chart's admission policy refuses the same at apply.")
	fs.DurationVar(&f.maxKept, "max-kept-target", runenv.DefaultMaxKeptTarget, "How long after its run's end a KeepUntilDeleted target "+
		"is kept at most; spec.cleanup.keepFor may ask less. Then it is released, with a KeepExpired event and condition TargetKept False.")
	return f
}

// apply checks the flags and sets them on opts.
func (f *tenancyFlags) apply(opts *runenv.Options) error {
	labels, err := target.ParsePropagatedLabels(f.labels)
	if err != nil {
		return fmt.Errorf("--propagate-namespace-labels: %w", err)
	}
	egress, err := target.ParseEgressAllowList(f.egress)
	if err != nil {
		return fmt.Errorf("--egress-allow-list: %w", err)
	}
	if f.maxKept <= 0 {
		return fmt.Errorf("--max-kept-target must be positive, e.g. 24h; got %s", f.maxKept)
	}
	opts.PropagateNamespaceLabels, opts.EgressAllowList, opts.MaxKeptTarget = labels, egress, f.maxKept
	return nil
}
