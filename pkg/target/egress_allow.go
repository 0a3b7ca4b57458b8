package target

import (
	"fmt"
	"net/netip"
	"strings"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// EgressAllowList is what an admin lets targets reach beyond DNS and their own pods
// (--egress-allow-list, the chart's egressAllowList): a spec.target.egress block must lie inside
// one of these. Empty allows no egress at all: a target reaching out of the cluster, or into
// other tenants' pods, is the admin's choice, never a tenant's.
type EgressAllowList []netip.Prefix

// ParseEgressAllowList reads a comma-separated list of CIDRs in canonical form, as the chart's
// admission policy compares them; "" is the empty list.
func ParseEgressAllowList(s string) (EgressAllowList, error) {
	var out EgressAllowList
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			return nil, fmt.Errorf("%q is not a CIDR such as 10.20.0.0/16: %w", f, err)
		}
		if p.Masked() != p {
			return nil, fmt.Errorf("%q has bits set beyond its prefix: write %s", f, p.Masked())
		}
		out = append(out, p)
	}
	return out, nil
}

// String is the list as the flag takes it.
func (l EgressAllowList) String() string {
	parts := make([]string, len(l))
	for i, p := range l {
		parts[i] = p.String()
	}
	return strings.Join(parts, ",")
}

// Contains says whether block lies wholly inside one of the list's blocks (same address family;
// an IPv4-mapped IPv6 block is IPv6 here, as in the policy's CEL).
func (l EgressAllowList) Contains(block netip.Prefix) bool {
	for _, p := range l {
		if p.Addr().Is4() == block.Addr().Is4() && p.Bits() <= block.Bits() && p.Contains(block.Addr()) {
			return true
		}
	}
	return false
}

// EgressOutside says which of tr's spec.target.egress blocks lies outside allowed and what to
// do, or "" when every block is inside it.
func EgressOutside(tr *v1alpha1.TestRun, allowed EgressAllowList) string {
	for i, e := range tr.Spec.Target.Egress {
		block, err := netip.ParsePrefix(e.CIDR)
		if err == nil && allowed.Contains(block) {
			continue
		}
		list := "none: this operator lets targets reach only DNS and their own pods"
		if len(allowed) > 0 {
			list = allowed.String()
		}
		return fmt.Sprintf("spec.target.egress[%d].cidr %s is outside the blocks the admin lets targets reach (the operator's --egress-allow-list: %s); "+
			"narrow it to a block inside one of those, drop it, or ask your admin to allow it", i, e.CIDR, list)
	}
	return ""
}
