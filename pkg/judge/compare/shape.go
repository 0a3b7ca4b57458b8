package compare

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// Shape is what makes two runs the same experiment. A kept Record carries its run's; a run
// compared with a baseline of another shape measured something else (twice the devices, a
// changed script), and its ratios say nothing about a regression, so the controller refuses
// the comparison (BaselineMismatch) unless spec.baseline.allowDifferent names the difference.
type Shape struct {
	// Type is spec.type ("load" when unset).
	Type string `json:"type"`
	// Profile is spec.profile in lower case; "external" for an external target.
	Profile string `json:"profile"`
	// Load is spec.load and the k6 flags that set load, in one canonical text.
	Load string `json:"load"`
	// Script is the script's digest (status.scriptDigest).
	Script string `json:"script"`
}

// loadFlags are the k6 run flags that change how much load a script makes; their short forms
// map to the long. Tags, outputs and the like do not change the experiment.
var loadFlags = map[string]string{
	"--vus": "vus", "-u": "vus", "--duration": "duration", "-d": "duration",
	"--iterations": "iterations", "-i": "iterations", "--stage": "stage", "-s": "stage", "--rps": "rps",
}

// ShapeOf is the shape of a run of spec whose script has digest script; args are the k6 flags
// the user added (runners.UserArgs).
func ShapeOf(spec *v1alpha1.TestRunSpec, args []string, script string) Shape {
	s := Shape{Type: string(spec.Type), Profile: strings.ToLower(spec.Profile), Script: script}
	if s.Type == "" {
		s.Type = string(v1alpha1.TestTypeLoad)
	}
	if spec.Target.External != nil {
		s.Profile = "external"
	}
	var parts []string
	if l := spec.Load; l != nil {
		add := func(name string, v *int32) {
			if v != nil {
				parts = append(parts, fmt.Sprintf("%s=%d", name, *v))
			}
		}
		dur := func(name string, d v1alpha1.Duration) {
			if d != "" {
				parts = append(parts, name+"="+canonicalDuration(string(d)))
			}
		}
		add("devices", l.Devices)
		dur("period", l.Period)
		dur("duration", l.Duration)
		add("iterations", l.Iterations)
		dur("rampUp", l.RampUp)
		add("preAllocatedVUs", l.PreAllocatedVUs)
		add("maxVUs", l.MaxVUs)
	}
	var flags []string
	for i := 0; i < len(args); i++ {
		name, value, hasValue := strings.Cut(args[i], "=")
		long, ok := loadFlags[name]
		if !ok {
			continue
		}
		if !hasValue && i+1 < len(args) {
			i++
			value = args[i]
		}
		if long == "duration" {
			value = canonicalDuration(value)
		}
		flags = append(flags, "--"+long+"="+value)
	}
	// By name, so the flags' order does not matter, but stably: the stages' order does.
	slices.SortStableFunc(flags, func(a, b string) int {
		an, _, _ := strings.Cut(a, "=")
		bn, _, _ := strings.Cut(b, "=")
		return strings.Compare(an, bn)
	})
	parts = append(parts, flags...)
	if len(parts) == 0 {
		s.Load = "the script's own options"
	} else {
		s.Load = strings.Join(parts, " ")
	}
	return s
}

// canonicalDuration writes a duration the way Go prints it (1m and 60s are one load), or as
// given when it is not one.
func canonicalDuration(d string) string {
	if v, err := time.ParseDuration(d); err == nil {
		return v.String()
	}
	return d
}

// Differences are the parts of the shape in which base and cur differ and that allowed does
// not allow, each saying both sides, e.g. `load: "devices=400 …" here, "devices=800 …" in the
// baseline`. Empty when they are the same experiment.
func Differences(base, cur Shape, allowed []v1alpha1.ShapePart) []string {
	var out []string
	check := func(part v1alpha1.ShapePart, b, c string) {
		if b != c && !slices.Contains(allowed, part) {
			out = append(out, fmt.Sprintf("%s %s here, %s in the baseline", strings.ToLower(string(part)), strconv.Quote(short(c)), strconv.Quote(short(b))))
		}
	}
	check(v1alpha1.ShapeType, base.Type, cur.Type)
	check(v1alpha1.ShapeProfile, base.Profile, cur.Profile)
	check(v1alpha1.ShapeLoad, base.Load, cur.Load)
	if base.Script != "" && cur.Script != "" { // "": a ConfigMap script never read, not a different one
		check(v1alpha1.ShapeScript, base.Script, cur.Script)
	}
	return out
}

// Text is the shape as status.comparison.baseline.shape says it.
func (s Shape) Text() string {
	return truncate(fmt.Sprintf("type %s, profile %s, load %s, script %s", s.Type, s.Profile, short(s.Load), short(s.Script)), 512)
}

// short keeps a part readable in a message: a digest's first 12 hex digits, a load's first 120
// bytes.
func short(v string) string {
	if d, ok := strings.CutPrefix(v, "sha256:"); ok && len(d) > 12 {
		return "sha256:" + d[:12]
	}
	return truncate(v, 120)
}
