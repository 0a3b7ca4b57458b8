package admission

import (
	"context"
	"testing"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
)

// TestZonesAdmission: spec.zones is refused where it is not honoured (a script on a volume, a
// peak, a runner count or dispatch of its own), and needs exactly one zone of the home
// cluster; a zone run's segments must lie within its fleet.
func TestZonesAdmission(t *testing.T) {
	ctx := context.Background()
	zones := []v1alpha1.ZoneSpec{{Name: "home", Runners: 2}, {Name: "c2", Cluster: "cluster-2", Runners: 2}}
	run := func(name string) *tw.TestRunWrapper {
		return tw.MakeTestRun(name, ns).External("http://10.0.0.1:30080").Zones(zones...)
	}
	refused := []invalidCase{
		{name: "no home zone", obj: tw.MakeTestRun("z-nohome", ns).External("http://10.0.0.1:30080").
			Zones(v1alpha1.ZoneSpec{Name: "a", Cluster: "cluster-2", Runners: 1}, v1alpha1.ZoneSpec{Name: "b", Cluster: "cluster-3", Runners: 1}).Obj(),
			want: []string{"spec.zones needs exactly one zone of this cluster"}},
		{name: "two home zones", obj: tw.MakeTestRun("z-twohome", ns).External("http://10.0.0.1:30080").
			Zones(v1alpha1.ZoneSpec{Name: "a", Runners: 1}, v1alpha1.ZoneSpec{Name: "b", Runners: 1}).Obj(),
			want: []string{"spec.zones needs exactly one zone of this cluster"}},
		{name: "parallelism beside zones", obj: run("z-par").Obj(), edit: set([]string{"spec", "parallelism"}, int64(4)),
			want: []string{"spec.zones", "remove spec.parallelism"}},
		{name: "managedBy beside zones", obj: run("z-mb").Obj(), edit: set([]string{"spec", "managedBy"}, v1alpha1.ManagedByMultiKueue),
			want: []string{"spec.zones", "spec.managedBy"}},
		{name: "a peak", obj: run("z-peak").Type(v1alpha1.TestTypePeak).Obj(),
			want: []string{"spec.zones with type peak is not implemented yet"}},
		{name: "a script on a volume", obj: run("z-pvc").Script(v1alpha1.ScriptSpec{VolumeClaim: &v1alpha1.VolumeClaimScript{Name: "scripts", File: "t.js"}}).Obj(),
			want: []string{"spec.zones: a script on a volumeClaim is not implemented yet"}},
		{name: "a zone run beyond its fleet", obj: tw.MakeTestRun("z-of", ns).External("http://10.0.0.1:30080").Parallelism(3).Obj(),
			edit: set([]string{"spec", "zoneOf"}, map[string]any{"run": "home", "zone": "c2", "firstSegment": int64(2), "fleetRunners": int64(4)}),
			want: []string{"spec.zoneOf", "within fleetRunners"}},
	}
	for _, tc := range refused {
		t.Run(tc.name, tc.refused)
	}
	admitted := map[string]*v1alpha1.TestRun{
		"two zones, an external target":   run("a-zones").Obj(),
		"zones with a load model":         run("a-zones-load").Devices(100, "1s").Duration("1m").Obj(),
		"zones with a provisioned target": tw.MakeTestRun("a-zones-profile", ns).Profile("c1").Zones(zones...).Obj(),
	}
	for name, obj := range admitted {
		if err := env.Client.Create(ctx, obj); err != nil {
			t.Errorf("%s: refused: %v", name, err)
			continue
		}
		_ = env.Client.Delete(ctx, obj)
	}
}
