package compare

import (
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

func TestShapeOf(t *testing.T) {
	spec := func(mut func(*v1alpha1.TestRunSpec)) *v1alpha1.TestRunSpec {
		s := &v1alpha1.TestRunSpec{Profile: "C1", Load: &v1alpha1.LoadSpec{Devices: ptr.To[int32](400), Period: "10s", Duration: "30s"}}
		if mut != nil {
			mut(s)
		}
		return s
	}
	cases := []struct {
		name string
		spec *v1alpha1.TestRunSpec
		args []string
		want Shape
	}{
		{"a device load", spec(nil), nil, Shape{Type: "load", Profile: "c1", Load: "devices=400 period=10s duration=30s", Script: "sha256:ab"}},
		{"one duration written two ways is one load", spec(func(s *v1alpha1.TestRunSpec) { s.Load.Duration = "0.5m" }), nil,
			Shape{Type: "load", Profile: "c1", Load: "devices=400 period=10s duration=30s", Script: "sha256:ab"}},
		{"the script's own options", spec(func(s *v1alpha1.TestRunSpec) { s.Load = nil; s.Type = v1alpha1.TestTypeBenchmark }), nil,
			Shape{Type: "benchmark", Profile: "c1", Load: "the script's own options", Script: "sha256:ab"}},
		{"load flags count, in any order; tags do not", spec(func(s *v1alpha1.TestRunSpec) { s.Load = nil }),
			[]string{"--tag", "release=v2", "-d", "1m", "--vus=10", "-s", "10s:5", "--stage", "20s:0"},
			Shape{Type: "load", Profile: "c1", Load: "--duration=1m0s --stage=10s:5 --stage=20s:0 --vus=10", Script: "sha256:ab"}},
		{"an external target", spec(func(s *v1alpha1.TestRunSpec) { s.Target.External = &v1alpha1.ExternalTarget{} }), nil,
			Shape{Type: "load", Profile: "external", Load: "devices=400 period=10s duration=30s", Script: "sha256:ab"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := ShapeOf(c.spec, c.args, "sha256:ab"); got != c.want {
				t.Errorf("ShapeOf = %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestDifferences(t *testing.T) {
	base := Shape{Type: "load", Profile: "c1", Load: "devices=400 period=10s duration=30s", Script: "sha256:" + strings.Repeat("a", 64)}
	with := func(mut func(*Shape)) Shape { s := base; mut(&s); return s }
	cases := []struct {
		name    string
		cur     Shape
		allowed []v1alpha1.ShapePart
		want    []string // each a substring of one difference, in order
	}{
		{"the same experiment", base, nil, nil},
		{"another load", with(func(s *Shape) { s.Load = "devices=800 period=10s duration=30s" }), nil,
			[]string{`load "devices=800 period=10s duration=30s" here, "devices=400 period=10s duration=30s" in the baseline`}},
		{"another load, allowed", with(func(s *Shape) { s.Load = "devices=800" }), []v1alpha1.ShapePart{v1alpha1.ShapeLoad}, nil},
		{"another script, named by its digest's start", with(func(s *Shape) { s.Script = "sha256:" + strings.Repeat("b", 64) }), nil,
			[]string{`script "sha256:bbbbbbbbbbbb" here, "sha256:aaaaaaaaaaaa" in the baseline`}},
		{"a script never read is not another script", with(func(s *Shape) { s.Script = "" }), nil, nil},
		{"type and Profile, one allowed", with(func(s *Shape) { s.Type = "peak"; s.Profile = "c2" }), []v1alpha1.ShapePart{v1alpha1.ShapeType},
			[]string{`profile "c2" here, "c1" in the baseline`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Differences(base, c.cur, c.allowed)
			if len(got) != len(c.want) {
				t.Fatalf("Differences = %q, want %d like %q", got, len(c.want), c.want)
			}
			for i := range got {
				if !strings.Contains(got[i], c.want[i]) {
					t.Errorf("difference %d = %q, want it to say %q", i, got[i], c.want[i])
				}
			}
		})
	}
}

func TestRecordKeepsItsShape(t *testing.T) {
	sh := Shape{Type: "load", Profile: "c1", Load: "devices=400", Script: "sha256:ab"}
	data, err := EncodeRecord(Record{Run: RunRef{Name: "a"}, Shape: &sh})
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeRecord(data)
	if err != nil {
		t.Fatal(err)
	}
	if got.Shape == nil || *got.Shape != sh {
		t.Errorf("decoded shape %+v, want %+v", got.Shape, sh)
	}
}
