package target

import (
	"net/netip"
	"strings"
	"testing"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
)

func TestParseEgressAllowList(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{in: "", want: ""},
		{in: " , ", want: ""},
		{in: "10.0.0.0/8, 192.168.0.0/16", want: "10.0.0.0/8,192.168.0.0/16"},
		{in: "2001:db8::/32", want: "2001:db8::/32"},
		{in: "0.0.0.0/0,::/0", want: "0.0.0.0/0,::/0"},
		{in: "10.0.0.1/8", err: "write 10.0.0.0/8"},
		{in: "10.0.0.0", err: "not a CIDR"},
		{in: "example.com/8", err: "not a CIDR"},
	} {
		got, err := ParseEgressAllowList(tc.in)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%q: err %v, want one saying %q", tc.in, err, tc.err)
		case tc.err == "" && (err != nil || got.String() != tc.want):
			t.Errorf("%q: %q, %v; want %q", tc.in, got.String(), err, tc.want)
		}
	}
}

// TestEgressOutsideTheAllowList: a block is allowed only wholly inside an allowed one of its
// own family; an empty list allows none, and the refusal names the field, the list and the fix.
func TestEgressOutsideTheAllowList(t *testing.T) {
	list, err := ParseEgressAllowList("10.20.0.0/16,203.0.113.7/32,2001:db8::/32")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		allowed EgressAllowList
		blocks  []string
		outside string // the block named, "" when allowed
	}{
		{name: "no egress", allowed: nil},
		{name: "inside", allowed: list, blocks: []string{"10.20.0.0/16", "10.20.3.0/24", "203.0.113.7/32", "2001:db8:1::/48"}},
		{name: "everything", allowed: list, blocks: []string{"0.0.0.0/0"}, outside: "0.0.0.0/0"},
		{name: "wider than allowed", allowed: list, blocks: []string{"10.20.0.0/24", "10.0.0.0/8"}, outside: "10.0.0.0/8"},
		{name: "beside", allowed: list, blocks: []string{"10.21.0.0/16"}, outside: "10.21.0.0/16"},
		{name: "neighbour host", allowed: list, blocks: []string{"203.0.113.8/32"}, outside: "203.0.113.8/32"},
		{name: "IPv4-mapped IPv6", allowed: list, blocks: []string{"::ffff:10.20.0.0/112"}, outside: "::ffff:10.20.0.0/112"},
		{name: "IPv6 everything", allowed: list, blocks: []string{"::/0"}, outside: "::/0"},
		{name: "empty list", allowed: nil, blocks: []string{"10.20.0.0/16"}, outside: "10.20.0.0/16"},
		{name: "all allowed", allowed: EgressAllowList{mustPrefix(t, "0.0.0.0/0"), mustPrefix(t, "::/0")}, blocks: []string{"0.0.0.0/0", "8.8.8.8/32", "::/0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := tw.MakeTestRun("egress", "team").Obj()
			for _, b := range tc.blocks {
				tr.Spec.Target.Egress = append(tr.Spec.Target.Egress, v1alpha1.TargetEgress{CIDR: b})
			}
			got := EgressOutside(tr, tc.allowed)
			if tc.outside == "" {
				if got != "" {
					t.Errorf("refused: %s", got)
				}
				return
			}
			for _, want := range []string{"spec.target.egress[", "cidr " + tc.outside + " ", "--egress-allow-list", "ask your admin"} {
				if !strings.Contains(got, want) {
					t.Errorf("%q, want it to say %q", got, want)
				}
			}
			if len(tc.allowed) == 0 && !strings.Contains(got, "none") {
				t.Errorf("%q, want it to say nothing is allowed", got)
			}
		})
	}
}

func mustPrefix(t *testing.T, s string) netip.Prefix {
	t.Helper()
	l, err := ParseEgressAllowList(s)
	if err != nil || len(l) != 1 {
		t.Fatal(s, err)
	}
	return l[0]
}

// FuzzEgressAllowList: any list that parses prints back as itself, and a block is allowed
// exactly when it is one of the list's blocks or a narrower one of the same family: its address
// cut to an allowed block's length is that block.
func FuzzEgressAllowList(f *testing.F) {
	f.Add("10.20.0.0/16,2001:db8::/32", "10.20.3.0/24")
	f.Add("0.0.0.0/0", "::/0")
	f.Add("::/0", "::ffff:10.0.0.0/104")
	f.Add("203.0.113.7/32", "203.0.113.7/32")
	f.Add("", "10.0.0.0/8")
	f.Fuzz(func(t *testing.T, list, block string) {
		allowed, err := ParseEgressAllowList(list)
		if err != nil {
			return
		}
		again, err := ParseEgressAllowList(allowed.String())
		if err != nil || again.String() != allowed.String() {
			t.Fatalf("%q printed as %q, parsed again as %q (%v)", list, allowed.String(), again.String(), err)
		}
		b, err := netip.ParsePrefix(block)
		if err != nil || b.Masked() != b {
			return // admission refuses a block not in canonical form
		}
		want := false
		for _, p := range allowed {
			if p.Addr().BitLen() == b.Addr().BitLen() && b.Bits() >= p.Bits() && netip.PrefixFrom(b.Addr(), p.Bits()).Masked() == p {
				want = true
			}
		}
		tr := tw.MakeTestRun("fuzz", "team").Obj()
		tr.Spec.Target.Egress = []v1alpha1.TargetEgress{{CIDR: block}}
		if got := EgressOutside(tr, allowed) == ""; got != want {
			t.Fatalf("block %s within %s: allowed %v, want %v", block, allowed.String(), got, want)
		}
	})
}
