// Package k6convert rewrites k6-operator v1.6 TestRuns (k6.io/v1alpha1) as fleetbench TestRuns,
// and says for every field what it became: kept, mapped, or dropped and why. It works on plain
// decoded YAML so that it reads any k6-operator manifest, also one with fields fleetbench
// refuses. docs/migrating-from-k6-operator.md is the same table for people.
package k6convert

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TargetPlaceholder is the target URL written when none is given: not a URL, so admission
// refuses the TestRun at spec.target.external.url until the user fills it in.
const TargetPlaceholder = "TODO: the URL of the system the script loads"

// Options are the user's answers to what the conversion cannot know.
type Options struct {
	// TargetURL is the system under test, as fleetbench's spec.target.external.url.
	TargetURL string
}

// Note is one thing the conversion changed, or one the user must decide (Decide).
type Note struct {
	// Object is kind/name of the manifest object.
	Object string
	// Field is the k6-operator field the note is about, e.g. spec.cleanup.
	Field string
	Text  string
	// Decide marks what the user must still do before the TestRun runs as it did.
	Decide bool
}

func (n Note) String() string {
	mark := "changed"
	if n.Decide {
		mark = "TODO"
	}
	return fmt.Sprintf("%s %s: %s: %s", n.Object, mark, n.Field, n.Text)
}

// Convert rewrites every k6-operator TestRun of docs and passes other objects (the script's
// ConfigMap) through unchanged. A PrivateLoadZone, any other k6.io kind, or a TestRun whose
// script cannot be read is an error naming the object and field.
func Convert(docs []map[string]any, opts Options) ([]map[string]any, []Note, error) {
	var out []map[string]any
	var notes []Note
	for _, doc := range docs {
		u := unstructured.Unstructured{Object: doc}
		group := strings.SplitN(u.GetAPIVersion(), "/", 2)[0]
		switch {
		case group != "k6.io":
			out = append(out, doc)
		case u.GetKind() == "TestRun":
			run, n, err := convertTestRun(&u, opts)
			if err != nil {
				return nil, nil, err
			}
			out = append(out, run)
			notes = append(notes, n...)
		case u.GetKind() == "PrivateLoadZone":
			return nil, nil, fmt.Errorf("PrivateLoadZone/%s: a Grafana Cloud k6 private load zone has no fleetbench equivalent "+
				"(fleetbench runs in your cluster without Grafana Cloud); remove it from the input", u.GetName())
		default:
			return nil, nil, fmt.Errorf("%s/%s: %s is not a k6-operator v1.6 TestRun; only TestRuns convert", u.GetKind(), u.GetName(), u.GetAPIVersion())
		}
	}
	return out, notes, nil
}

// converter holds one TestRun's conversion.
type converter struct {
	object string
	notes  []Note
}

func (c *converter) note(field, format string, args ...any) {
	c.notes = append(c.notes, Note{Object: c.object, Field: field, Text: fmt.Sprintf(format, args...)})
}

func (c *converter) todo(field, format string, args ...any) {
	c.notes = append(c.notes, Note{Object: c.object, Field: field, Text: fmt.Sprintf(format, args...), Decide: true})
}

// dropped is what k6-operator spec fields fleetbench has none of become, and why.
var dropped = map[string]string{
	"initializer": "dropped: fleetbench checks the script in its own pre-flight pod, built like a runner from spec.runner",
	"starter":     "dropped: fleetbench starts the runners itself, together, through k6's REST API",
	"paused":      "dropped: fleetbench always starts the runners paused and un-pauses them together once all are Ready",
	"scuttle":     "dropped: fleetbench manages no Envoy sidecar; keep the mesh out of runner pods with spec.runner.metadata.annotations {sidecar.istio.io/inject: \"false\"}",
	"testRunId":   "dropped: reserved by Grafana Cloud k6, which fleetbench does not use; the run's id is status.testID",
	"token":       "dropped: reserved by Grafana Cloud k6, which fleetbench does not use",
}

// runnerDropped are k6-operator runner fields fleetbench has none of.
var runnerDropped = map[string]string{
	"disabled":       "dropped: it applies to k6-operator's initializer only",
	"readinessProbe": "dropped: fleetbench's own readiness probe on k6's REST API gates the synchronized start",
	"livenessProbe":  "dropped: a liveness kill would lose the run; spec.timeouts.run bounds a hung run",
}

// runnerKept are k6-operator runner fields with the same name and meaning in fleetbench.
var runnerKept = []string{"affinity", "automountServiceAccountToken", "containerSecurityContext", "env", "envFrom", "imagePullPolicy",
	"imagePullSecrets", "initContainers", "metadata", "nodeSelector", "priorityClassName", "resources", "schedulerName",
	"securityContext", "serviceAccountName", "tolerations", "topologySpreadConstraints", "volumeMounts", "volumes"}

func convertTestRun(in *unstructured.Unstructured, opts Options) (map[string]any, []Note, error) {
	c := &converter{object: "TestRun/" + in.GetName()}
	spec, _, err := unstructured.NestedMap(in.Object, "spec")
	if err != nil {
		return nil, nil, fmt.Errorf("%s: spec: %w", c.object, err)
	}
	outSpec := map[string]any{}
	script, err := c.script(spec["script"])
	if err != nil {
		return nil, nil, err
	}
	outSpec["script"] = script

	url := opts.TargetURL
	if url == "" {
		url = TargetPlaceholder
		c.todo("spec.target", "fleetbench needs a target and k6-operator has none: the script still loads whatever URLs it loads, and "+
			"spec.target.external.url reaches it as TARGET_URL. It is %q, which admission refuses until you set it "+
			"(or pass --target-url); fleetbench provisions nothing for an external target", TargetPlaceholder)
	}
	outSpec["target"] = map[string]any{"external": map[string]any{"url": url}}

	for _, key := range slices.Sorted(maps.Keys(spec)) {
		v := spec[key]
		switch key {
		case "script":
		case "parallelism", "separate", "ports":
			outSpec[key] = c.ports(key, v)
		case "arguments", "args":
			if key == "arguments" && spec["args"] != nil && len(asSlice(spec["args"])) > 0 {
				c.note("spec.arguments", "dropped: k6-operator ignores arguments when args is set, and fleetbench refuses both")
				continue
			}
			if args := c.args(key, v); args != nil {
				outSpec[key] = args
			}
		case "quiet":
			if fmt.Sprint(v) == "false" {
				c.note("spec.quiet", "dropped: fleetbench passes no --quiet, as quiet: \"false\" asked")
			} else {
				c.note("spec.quiet", "dropped: k6-operator passed --quiet; fleetbench does not, so k6's progress lines appear in the runner logs (add \"--quiet\" to spec.args to silence them)")
			}
		case "cleanup":
			if v == "post" {
				outSpec["ttlSecondsAfterFinished"] = int64(0)
				c.note("spec.cleanup", "post became spec.ttlSecondsAfterFinished: 0: the finished TestRun is deleted with everything it made")
			} else {
				c.note("spec.cleanup", "dropped: %v is not a k6-operator cleanup value", v)
			}
		case "runner":
			if r := c.runner(v); len(r) > 0 {
				outSpec["runner"] = r
			}
		default:
			if why, ok := dropped[key]; ok {
				c.note("spec."+key, "%s", why)
			} else {
				c.note("spec."+key, "dropped: not a k6-operator v1.6 field")
			}
		}
	}
	if p, ok := outSpec["parallelism"].(int64); ok && p > 100 && outSpec["separate"] == true {
		c.todo("spec.separate", "fleetbench puts at most 100 runners on separate nodes; lower spec.parallelism or remove spec.separate")
	}

	meta := map[string]any{"name": in.GetName()}
	if ns := in.GetNamespace(); ns != "" {
		meta["namespace"] = ns
	}
	if l := in.GetLabels(); len(l) > 0 {
		meta["labels"] = toAny(l)
	}
	ann := in.GetAnnotations()
	delete(ann, "kubectl.kubernetes.io/last-applied-configuration")
	if len(ann) > 0 {
		meta["annotations"] = toAny(ann)
	}
	return map[string]any{"apiVersion": "fleetbench.dev/v1alpha1", "kind": "TestRun", "metadata": meta, "spec": outSpec}, c.notes, nil
}

// script maps k6-operator's script source; the same three exist in fleetbench. k6-operator
// writes every source, empty ones included, when a TestRun is read back from its cluster.
func (c *converter) script(v any) (map[string]any, error) {
	s, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: spec.script must be an object with configMap, volumeClaim or localFile, not %T %v", c.object, v, v)
	}
	out := map[string]any{}
	if cm, ok := s["configMap"].(map[string]any); ok && cm["name"] != nil && cm["name"] != "" {
		out["configMap"] = cm
	}
	if vc, ok := s["volumeClaim"].(map[string]any); ok && vc["name"] != nil && vc["name"] != "" {
		vc = maps.Clone(vc)
		if f, ok := vc["file"].(string); ok && strings.HasPrefix(f, "/") {
			rel := strings.TrimPrefix(strings.TrimPrefix(f, "/test/"), "/")
			vc["file"] = rel
			c.note("spec.script.volumeClaim.file", "%q became %q: fleetbench names the file relative to the claim's root, which it mounts at /fleetbench/script and at /test", f, rel)
		}
		out["volumeClaim"] = vc
	}
	if lf, ok := s["localFile"].(string); ok && lf != "" {
		out["localFile"] = lf
		c.todo("spec.script.localFile", "the file is read from the runner image, and fleetbench runs its own image (spec.runner.image below): "+
			"put %s into an image built from fleetbench's runner, or have spec.runner.initContainers write it to a volume mounted there", lf)
	}
	if len(out) != 1 {
		return nil, fmt.Errorf("%s: spec.script needs exactly one of configMap, volumeClaim or localFile with a name or path", c.object)
	}
	return out, nil
}

func (c *converter) ports(key string, v any) any {
	if key != "ports" {
		return v
	}
	var kept []any
	for _, p := range asSlice(v) {
		if m, ok := p.(map[string]any); ok && fmt.Sprint(m["containerPort"]) == "6565" {
			c.note("spec.ports", "port 6565 dropped: every runner exposes k6's REST API on it already")
			continue
		}
		kept = append(kept, p)
	}
	return kept
}

// args keeps k6's flags as they are, except --out: fleetbench's runners keep their own output
// (k6-operator's flags are otherwise the flags of the same k6).
func (c *converter) args(key string, v any) any {
	var argv []string
	if key == "arguments" {
		argv = strings.Fields(fmt.Sprint(v))
	} else {
		for _, a := range asSlice(v) {
			argv = append(argv, fmt.Sprint(a))
		}
	}
	var kept []string
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		out := ""
		switch {
		case (a == "--out" || a == "-o") && i+1 < len(argv):
			out = argv[i+1]
			i++
		case strings.HasPrefix(a, "--out="), strings.HasPrefix(a, "-o="):
			_, out, _ = strings.Cut(a, "=")
		default:
			kept = append(kept, a)
			continue
		}
		c.todo("spec."+key, "--out %s dropped: fleetbench's runners stream to its own output and merge the results; for Prometheus remote write "+
			"or OpenTelemetry list the receiver in spec.outputs; other outputs (cloud, kafka, json, csv) have no equivalent", out)
	}
	if len(kept) == 0 {
		return nil
	}
	if key == "arguments" {
		return strings.Join(kept, " ")
	}
	res := make([]any, len(kept))
	for i, a := range kept {
		res[i] = a
	}
	return res
}

func (c *converter) runner(v any) map[string]any {
	r, _ := v.(map[string]any)
	out := map[string]any{}
	for _, key := range slices.Sorted(maps.Keys(r)) {
		val := r[key]
		switch {
		case slices.Contains(runnerKept, key):
			out[key] = val
		case key == "image":
			c.todo("spec.runner.image", "%v dropped: fleetbench's runner is k6 with fleetbench's output compiled in; a k6 image of your own "+
				"(extensions) must be rebuilt from fleetbench's runner before you set spec.runner.image", val)
		case runnerDropped[key] != "":
			c.note("spec.runner."+key, "%s", runnerDropped[key])
		default:
			c.note("spec.runner."+key, "dropped: not a k6-operator v1.6 runner field")
		}
	}
	if _, ok := r["serviceAccountName"]; ok && r["automountServiceAccountToken"] == nil {
		c.todo("spec.runner.automountServiceAccountToken", "k6-operator mounts the service account's token by default, fleetbench does not: "+
			"set it to \"true\" if the script calls the Kubernetes API")
	}
	return out
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

func toAny(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
