package admission

// A small generator of values from the CRD's own OpenAPI schema, for the property test in
// admitted_test.go. It reads the generated CRD rather than the Go types so that it draws what
// the API server validates (bounds, enums, required fields, CEL hints), and it mutates valid
// base specs a few subtrees at a time: fully random specs are almost all refused, and a refused
// spec tests nothing downstream.

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"fleetbench.dev/fleetbench/internal/testenv"
)

// schema is the part of apiextensions' JSONSchemaProps the generator reads; its own type keeps
// the test from adding apiextensions-apiserver to go.mod.
type schema struct {
	Type                 string             `json:"type"`
	Format               string             `json:"format"`
	Pattern              string             `json:"pattern"`
	Enum                 []any              `json:"enum"`
	Nullable             bool               `json:"nullable"`
	Minimum              *float64           `json:"minimum"`
	Maximum              *float64           `json:"maximum"`
	MinLength            *int               `json:"minLength"`
	MaxLength            *int               `json:"maxLength"`
	MinItems             *int               `json:"minItems"`
	MaxItems             *int               `json:"maxItems"`
	MaxProperties        *int               `json:"maxProperties"`
	Required             []string           `json:"required"`
	Properties           map[string]*schema `json:"properties"`
	Items                *schema            `json:"items"`
	AdditionalProperties json.RawMessage    `json:"additionalProperties"`
	IntOrString          bool               `json:"x-kubernetes-int-or-string"`
	PreserveUnknown      bool               `json:"x-kubernetes-preserve-unknown-fields"`
	ListType             string             `json:"x-kubernetes-list-type"`
	ListMapKeys          []string           `json:"x-kubernetes-list-map-keys"`
	Validations          []struct {
		Rule string `json:"rule"`
	} `json:"x-kubernetes-validations"`
}

// refused says a field is declared only to be refused (k6-operator's fields fleetbench has no
// equivalent of, rule "false"): drawing it would only add refused candidates.
func (s *schema) refused() bool {
	return slices.ContainsFunc(s.Validations, func(v struct {
		Rule string `json:"rule"`
	}) bool {
		return v.Rule == "false"
	})
}

// values is the schema of a map's values, or nil when the object is not a map.
func (s *schema) values() *schema {
	if len(s.AdditionalProperties) == 0 || s.AdditionalProperties[0] != '{' {
		return nil
	}
	var v schema
	if err := json.Unmarshal(s.AdditionalProperties, &v); err != nil {
		return nil
	}
	return &v
}

// loadSpecSchema reads spec's schema of the served version from the generated CRD file.
func loadSpecSchema(t *testing.T, file string) *schema {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "crd", "bases", file))
	if err != nil {
		t.Fatal(err)
	}
	var crd struct {
		Spec struct {
			Versions []struct {
				Name   string `json:"name"`
				Served bool   `json:"served"`
				Schema struct {
					OpenAPIV3Schema *schema `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	for _, v := range crd.Spec.Versions {
		if v.Served && v.Schema.OpenAPIV3Schema != nil {
			if spec := v.Schema.OpenAPIV3Schema.Properties["spec"]; spec != nil {
				return spec
			}
		}
	}
	t.Fatalf("%s has no served version with a spec schema", file)
	return nil
}

// schemaGen draws values for a schema from one seeded source, so a seed replays a run.
type schemaGen struct {
	r *rand.Rand
}

// maxDepth is how deep optional fields are drawn below the mutated node; deeper, only required
// ones. Embedded core types (affinity, probes, volumes) are otherwise unbounded in practice.
const maxDepth = 4

// draw makes a value for s; name is the property's name, a hint for free-form strings. false
// means the generator has no safe value for it (a pattern or format it does not know).
func (g *schemaGen) draw(s *schema, name string, depth int) (any, bool) {
	if s.Nullable && g.r.Intn(20) == 0 {
		return nil, true
	}
	if len(s.Enum) > 0 {
		return s.Enum[g.r.Intn(len(s.Enum))], true
	}
	if s.IntOrString {
		if g.r.Intn(2) == 0 {
			return g.integer(s), true
		}
		return g.str(s, name)
	}
	switch s.Type {
	case "boolean":
		return g.r.Intn(2) == 0, true
	case "integer":
		return g.integer(s), true
	case "number":
		return float64(g.integer(s)) + []float64{0, 0.5, 0.25}[g.r.Intn(3)], true
	case "string":
		return g.str(s, name)
	case "array":
		return g.array(s, name, depth), true
	case "object":
		return g.object(s, depth), true
	}
	return nil, false
}

// integer is an edge of the range (where off-by-one bugs live) or a small value inside it.
func (g *schemaGen) integer(s *schema) int64 {
	lo, hi := int64(math.MinInt32), int64(math.MaxInt32)
	if s.Format == "int64" {
		lo, hi = -1<<40, 1<<40 // beyond float64's exact range the JSON round trip is lossy
	}
	if s.Minimum != nil {
		lo = int64(*s.Minimum)
	}
	if s.Maximum != nil {
		hi = int64(*s.Maximum)
	}
	small := max(lo, min(hi, 0))
	candidates := []int64{lo, hi, min(lo+1, hi), max(hi-1, lo), small, small + g.r.Int63n(min(hi-small, 100)+1)}
	if s.Minimum == nil {
		candidates = append(candidates, 1, 8080, 30) // ports and seconds are the common unbounded ints
	}
	v := candidates[g.r.Intn(len(candidates))]
	return max(lo, min(hi, v))
}

func (g *schemaGen) array(s *schema, name string, depth int) []any {
	lo, hi := 0, 3
	if s.MinItems != nil {
		lo = *s.MinItems
	}
	if s.MaxItems != nil {
		hi = min(*s.MaxItems, max(hi, lo))
	}
	n := lo + g.r.Intn(hi-lo+1)
	out := []any{}
	seen := map[string]bool{}
	for range n * 2 {
		if len(out) == n || s.Items == nil {
			break
		}
		v, ok := g.draw(s.Items, strings.TrimSuffix(name, "s"), depth+1)
		if !ok {
			continue
		}
		// Sets and maps-as-lists refuse duplicates: skip them rather than waste the draw.
		if key := listKey(v, s); key != "" {
			if seen[key] {
				continue
			}
			seen[key] = true
		}
		out = append(out, v)
	}
	return out
}

func listKey(v any, s *schema) string {
	if m, ok := v.(map[string]any); ok && len(s.ListMapKeys) > 0 {
		var parts []string
		for _, k := range s.ListMapKeys {
			parts = append(parts, fmt.Sprint(m[k]))
		}
		return strings.Join(parts, "\x00")
	}
	if s.ListType == "set" || len(s.ListMapKeys) > 0 {
		b, _ := json.Marshal(v)
		return string(b)
	}
	return "" // atomic lists may repeat
}

func (g *schemaGen) object(s *schema, depth int) map[string]any {
	out := map[string]any{}
	if vs := s.values(); vs != nil {
		hi := 3
		if s.MaxProperties != nil {
			hi = min(hi, *s.MaxProperties)
		}
		keys := fits(slices.Concat(mapKeys, metricKeys), &schema{}, ruleRegexps(s, celKeyMatch))
		for range g.r.Intn(hi + 1) {
			if v, ok := g.draw(vs, "value", depth+1); ok && len(keys) > 0 {
				out[g.pick(keys)] = v
			}
		}
		return out
	}
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	slices.Sort(names) // map order is random; the seed must replay
	for _, n := range names {
		optional := !slices.Contains(s.Required, n)
		if optional && s.Properties[n].refused() {
			continue
		}
		if optional && (depth >= maxDepth || g.r.Intn(depth+3) != 0) {
			continue
		}
		if v, ok := g.draw(s.Properties[n], n, depth+1); ok {
			out[n] = v
		}
	}
	return out
}

// String pools. The schema of an embedded Kubernetes type carries no patterns (the API server
// checks those when a Pod is made), so plausible values come from the field's name; nasty
// values probe what a field without a pattern lets through.
var (
	safeStrings = []string{"a", "web", "app-db", "x1", "team-a", "example", "fleetbench", "k6", "v1", "value"}
	nastyValues = []string{"", " ", "Upper Case", "a_b", "-a", "a-", "a/b", "x:y", "ü", "$(X)", "a\tb", "..", "0", "a=b"}
	durations   = []string{"250ms", "1s", "30s", "5m", "2h", "1h30m", "0.5s"}
	absPaths    = []string{"/data", "/scripts/test.js", "/etc/certs", "/var/run/app"}
	relPaths    = []string{"test.js", "scripts/push.js", "a/b.js"}
	urls        = []string{"http://api.example.svc:8080", "https://example.com/path", "ws://broker:5280/ws", "grpc://grpc.example:9000", "tcp://db:5432"}
	quantities  = []string{"100m", "1", "250m", "64Mi", "1Gi", "0", "2"}
	images      = []string{"nginx:1.27", "registry.example.com/team/app:v1", "fleetbench/runner:dev", "busybox@sha256:" + strings.Repeat("a", 64)}
	mapKeys     = []string{"app", "example.com/role", "tier", "kubernetes.io/hostname", "Bad Key"}
	byName      = map[string][]string{
		"image":             images,
		"mountPath":         absPaths,
		"path":              absPaths,
		"operator":          {"In", "NotIn", "Exists", "DoesNotExist", "Equal", "Gt"},
		"effect":            {"NoSchedule", "PreferNoSchedule", "NoExecute"},
		"protocol":          {"TCP", "UDP", "SCTP"},
		"imagePullPolicy":   {"Always", "IfNotPresent", "Never"},
		"topologyKey":       {"kubernetes.io/hostname", "topology.kubernetes.io/zone"},
		"whenUnsatisfiable": {"DoNotSchedule", "ScheduleAnyway"},
		"key":               mapKeys,
		"scheme":            {"HTTP", "HTTPS"},
		"medium":            {"", "Memory"},
		"type":              {"RuntimeDefault", "Unconfined", "Localhost"},
		"url":               urls,
	}
	expressions = []string{"avg", "p(95)", "p(99.9)", "med", "max", "p(95)<200", "rate<0.01", "avg<=150", "count>100", "p(100)<1e3"}
	metricKeys  = []string{"http_req_duration", "http_req_failed", "checks", "http_req_duration{scenario:push}", "iterations{name:a b}"}
	allPools    = slices.Concat(safeStrings, durations, absPaths, relPaths, urls, quantities, images, expressions, metricKeys,
		[]string{"fleetbench.local", "robot", "iot_db", "C1", "h3", "push.js"})
)

// celMatch finds the regular expressions a CEL rule requires the value (self) or, in a map's
// rule, its keys (k) to match; group 3 is a raw string, group 4 an escaped one.
var (
	celMatch    = regexp.MustCompile(`(?:^|[^!])self(?:\.lowerAscii\(\))?\.matches\((?:r'([^']*)'|'((?:[^'\\]|\\.)*)')\)`)
	celKeyMatch = regexp.MustCompile(`(?:^|[^!])k\.matches\((?:r'([^']*)'|'((?:[^'\\]|\\.)*)')\)`)
)

// ruleRegexps compiles what re finds in the rules.
func ruleRegexps(s *schema, re *regexp.Regexp) []*regexp.Regexp {
	var out []*regexp.Regexp
	for _, v := range s.Validations {
		for _, m := range re.FindAllStringSubmatch(v.Rule, -1) {
			expr := m[1]
			if expr == "" {
				expr = strings.ReplaceAll(m[2], `\\`, `\`)
			}
			if r, err := regexp.Compile(expr); err == nil {
				out = append(out, r)
			}
		}
	}
	return out
}

// fits filters pool to the values within the length bounds that match every regular expression.
func fits(pool []string, s *schema, res []*regexp.Regexp) []string {
	return slices.DeleteFunc(slices.Clone(pool), func(v string) bool {
		if s.MinLength != nil && len(v) < *s.MinLength || s.MaxLength != nil && len(v) > *s.MaxLength {
			return true
		}
		for _, re := range res {
			if !re.MatchString(v) && !re.MatchString(strings.ToLower(v)) {
				return true
			}
		}
		return false
	})
}

// str draws a string that fits the schema's length bounds and the regular expressions its
// pattern or CEL rules require; the rules also hint at durations, URLs and paths. Where a
// regular expression applies, every pool is a candidate and only what matches is kept.
func (g *schemaGen) str(s *schema, name string) (any, bool) {
	if s.Format != "" && s.Format != "int-or-string" {
		return nil, false
	}
	res := ruleRegexps(s, celMatch)
	if s.Pattern != "" {
		re, err := regexp.Compile(s.Pattern)
		if err != nil {
			return nil, false
		}
		res = append(res, re)
	}
	var pool []string
	for _, v := range s.Validations {
		switch {
		case strings.Contains(v.Rule, "duration("):
			pool = append(pool, durations...)
		case strings.Contains(v.Rule, "isURL("):
			pool = append(pool, urls...)
		case strings.Contains(v.Rule, "!self.startsWith('/')"):
			pool = append(pool, relPaths...)
		case strings.Contains(v.Rule, "self.startsWith('/')"):
			pool = append(pool, absPaths...)
		}
	}
	switch {
	case len(res) > 0:
		pool = slices.Concat(pool, allPools)
	case len(pool) == 0:
		pool = append(pool, byName[name]...)
	}
	if len(pool) == 0 || g.r.Intn(4) == 0 {
		pool = append(pool, safeStrings...)
	}
	if g.r.Intn(4) == 0 {
		pool = append(pool, nastyValues...)
	}
	if s.MaxLength != nil && *s.MaxLength <= 1024 && g.r.Intn(8) == 0 {
		pool = append(pool, strings.Repeat("a", *s.MaxLength)) // the longest value allowed
	} else if s.MaxLength == nil && g.r.Intn(8) == 0 {
		pool = append(pool, strings.Repeat("a", 64)) // one past a label's 63
	}
	if pool = fits(pool, s, res); len(pool) == 0 {
		return nil, false
	}
	return g.pick(pool), true
}

func (g *schemaGen) pick(pool []string) string { return pool[g.r.Intn(len(pool))] }

// mutate replaces or adds one subtree of obj, found by a random walk down the schema that may
// stop at any level, so top-level fields are touched as often as deep ones. It returns the
// schema path it changed, e.g. spec.runner.env[].name.
func (g *schemaGen) mutate(obj map[string]any, s *schema, path string) (string, bool) {
	var cur any = obj
	set := func(v any) {} // writes the new value where cur came from
	for depth := 0; ; depth++ {
		stop := depth > 0 && g.r.Intn(3) == 0
		switch {
		case s.Type == "object" && len(s.Properties) > 0 && !stop:
			m, ok := cur.(map[string]any)
			if !ok {
				m = g.object(s, maxDepth) // a new parent holds its required fields only
				set(m)
			}
			names := make([]string, 0, len(s.Properties))
			for n, p := range s.Properties {
				if !p.refused() {
					names = append(names, n)
				}
			}
			slices.Sort(names)
			n := g.pick(names)
			if g.r.Intn(10) == 0 && !slices.Contains(s.Required, n) {
				delete(m, n) // an optional field left out is a spec too
				return path + "." + n + "(deleted)", true
			}
			cur, s, path = m[n], s.Properties[n], path+"."+n
			set = func(v any) { m[n] = v }
		case s.Type == "array" && s.Items != nil && !stop:
			a, _ := cur.([]any)
			if len(a) == 0 || g.r.Intn(3) == 0 {
				if s.MaxItems != nil && len(a) >= *s.MaxItems {
					return "", false
				}
				a = append(a, nil)
				set(a)
			}
			i := g.r.Intn(len(a))
			cur, s, path = a[i], s.Items, path+"[]"
			set = func(v any) { a[i] = v }
		default:
			v, ok := g.draw(s, lastName(path), depth)
			if !ok {
				return "", false
			}
			set(v)
			return path, true
		}
	}
}

func lastName(path string) string {
	path = strings.TrimRight(path, "[]")
	return path[strings.LastIndex(path, ".")+1:]
}

// seedFrom reads the seed from FLEETBENCH_SEED or the -fleetbench.seed flag, else def.
func seedFrom(flagValue int64, def int64) int64 {
	if flagValue != 0 {
		return flagValue
	}
	if v, err := strconv.ParseInt(os.Getenv("FLEETBENCH_SEED"), 10, 64); err == nil {
		return v
	}
	return def
}
