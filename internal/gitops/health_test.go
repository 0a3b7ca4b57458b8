package gitops

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite config/gitops/argocd/argocd-cm-patch.yaml from the Lua files")

const (
	argocdDir = "../../config/gitops/argocd"
	cmPatch   = argocdDir + "/argocd-cm-patch.yaml"
	group     = "fleetbench.dev"
)

// kinds with a health check, in the order the argocd-cm patch lists them.
var kinds = []string{"CapacityPlan", "TestRun"}

func scriptPath(kind string) string {
	return filepath.Join(argocdDir, group, kind, "health.lua")
}

func readScript(t *testing.T, kind string) string {
	t.Helper()
	b, err := os.ReadFile(scriptPath(kind))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// healthStatus is what Argo CD reads back from the table the script returns.
type healthStatus struct {
	Status  string `json:"status"`
	Message string `json:"message"`
}

// runHealth runs script as Argo CD runs a health check from argocd-cm (util/lua in argo-cd):
// no standard libraries but package, base and table (string, math and os are not there unless
// useOpenLibs is set), a 1 s deadline, the object as the global obj, the returned table read as
// JSON, and a status that must be one Argo CD knows.
func runHealth(t *testing.T, script string, obj *unstructured.Unstructured) healthStatus {
	t.Helper()
	l := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer l.Close()
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{{lua.LoadLibName, lua.OpenPackage}, {lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}} {
		if err := l.CallByParam(lua.P{Fn: l.NewFunction(lib.open), Protect: true}, lua.LString(lib.name)); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	l.SetContext(ctx)
	l.SetGlobal("obj", toLua(l, obj.Object))
	if err := l.DoString(script); err != nil {
		t.Fatalf("script failed: %v", err)
	}
	ret, ok := l.Get(-1).(*lua.LTable)
	if !ok {
		t.Fatalf("script returned %s, Argo CD wants a table", l.Get(-1).Type())
	}
	raw, err := json.Marshal(fromLua(ret))
	if err != nil {
		t.Fatal(err)
	}
	var hs healthStatus
	if err := json.Unmarshal(raw, &hs); err != nil {
		t.Fatalf("returned table %s: %v", raw, err)
	}
	switch hs.Status {
	case "Healthy", "Progressing", "Degraded", "Suspended", "Missing", "Unknown":
	default:
		t.Fatalf("status %q is not an Argo CD health status (Argo CD would show Unknown)", hs.Status)
	}
	return hs
}

// toLua converts an unstructured object as Argo CD's decodeValue does: maps to tables with
// string keys, slices to 1-based arrays, every number to a Lua number.
func toLua(l *lua.LState, v any) lua.LValue {
	switch v := v.(type) {
	case bool:
		return lua.LBool(v)
	case string:
		return lua.LString(v)
	case float64:
		return lua.LNumber(v)
	case int64:
		return lua.LNumber(v)
	case int:
		return lua.LNumber(v)
	case json.Number:
		return lua.LString(v)
	case []any:
		arr := l.CreateTable(len(v), 0)
		for _, item := range v {
			arr.Append(toLua(l, item))
		}
		return arr
	case map[string]any:
		tbl := l.CreateTable(0, len(v))
		for k, item := range v {
			tbl.RawSetH(lua.LString(k), toLua(l, item))
		}
		return tbl
	}
	return lua.LNil
}

// fromLua turns the returned table back into Go values (only string keys matter here).
func fromLua(v lua.LValue) any {
	switch v := v.(type) {
	case lua.LString:
		return string(v)
	case lua.LNumber:
		return float64(v)
	case lua.LBool:
		return bool(v)
	case *lua.LTable:
		m := map[string]any{}
		v.ForEach(func(k, val lua.LValue) { m[k.String()] = fromLua(val) })
		return m
	}
	return nil
}

func loadFixture(t *testing.T, name string) *unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	j, err := yaml.YAMLToJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{}
	// The API machinery's decoder, as in the Argo CD controller: whole numbers become int64.
	if err := obj.UnmarshalJSON(j); err != nil {
		t.Fatal(err)
	}
	return obj
}

func TestHealth(t *testing.T) {
	for _, tc := range []struct {
		fixture, status, message string
	}{
		{"testrun-no-status.yaml", "Progressing", "Waiting for the fleetbench operator to pick up the TestRun"},
		{"testrun-provisioning.yaml", "Progressing", "Provisioning: WaitingForTarget: 0/1 target pods Ready"},
		{"testrun-running.yaml", "Progressing", "Running: 40s/1m0s 66%"},
		{"testrun-passed.yaml", "Healthy", "PASSED: Completed: 6000 requests, 0.00% dropped, p95 12ms"},
		{"testrun-verdict-failed.yaml", "Degraded", "FAILED: Completed: threshold http_req_duration p(95)<5 failed: 12.1"},
		{"testrun-regressed.yaml", "Degraded", "REGRESSED: throughput 71.20 % of baseline (ok ≥ 80 %)"},
		{"testrun-inconclusive.yaml", "Degraded", "INCONCLUSIVE: GeneratorBound: the runners, not the target, were the limit"},
		{"testrun-failed.yaml", "Degraded", "ProfileNotFound: no Profile named c9; kubectl get profiles lists them"},
		{"testrun-stale-generation.yaml", "Progressing", "Waiting for the operator to observe generation 2 (status describes 1)"},
		{"capacityplan-no-status.yaml", "Progressing", "Waiting for the fleetbench operator to pick up the CapacityPlan"},
		{"capacityplan-running.yaml", "Progressing", "1/2 cells; RunningChildren: sizing-c2 is Running"},
		{"capacityplan-succeeded.yaml", "Healthy", "2/2 cells; Completed: every cell was measured"},
		{"capacityplan-succeeded-not-ready.yaml", "Degraded", "2/2 cells; Completed: 1 of 2 cells failed: sizing-c1 TargetNotReady"},
		{"capacityplan-failed.yaml", "Degraded", "1/2 cells; ChildFailed: sizing-c1 failed (TargetNotReady); failurePolicy StopOnFailure"},
		{"capacityplan-stale-generation.yaml", "Progressing", "Waiting for the operator to observe generation 3 (status describes 2)"},
	} {
		t.Run(strings.TrimSuffix(tc.fixture, ".yaml"), func(t *testing.T) {
			obj := loadFixture(t, tc.fixture)
			if obj.GroupVersionKind().Group != group {
				t.Fatalf("fixture is a %s, not a %s kind", obj.GroupVersionKind(), group)
			}
			got := runHealth(t, readScript(t, obj.GetKind()), obj)
			if got.Status != tc.status || got.Message != tc.message {
				t.Errorf("got %s %q, want %s %q", got.Status, got.Message, tc.status, tc.message)
			}
		})
	}
}

// TestHealthUnknownPhase: a phase the script does not know is Unknown, not an error.
func TestHealthUnknownPhase(t *testing.T) {
	for _, kind := range kinds {
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": group + "/v1alpha1", "kind": kind,
			"metadata": map[string]any{"name": "x", "generation": int64(1)},
			"status":   map[string]any{"observedGeneration": int64(1), "phase": "Paused"},
		}}
		if got := runHealth(t, readScript(t, kind), obj); got.Status != "Unknown" {
			t.Errorf("%s: got %s %q, want Unknown", kind, got.Status, got.Message)
		}
	}
}

// TestHealthFixturesCovered: every fixture is in TestHealth's table, so none is dead.
func TestHealthFixturesCovered(t *testing.T) {
	src, err := os.ReadFile("health_test.go")
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("testdata/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !bytes.Contains(src, []byte(`"`+filepath.Base(f)+`"`)) {
			t.Errorf("%s is not used by TestHealth", f)
		}
	}
}

// renderConfigMapPatch is argocd-cm-patch.yaml: the Lua files under the keys Argo CD reads
// (resource.customizations.health.<group>_<kind>), verbatim.
func renderConfigMapPatch(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	b.WriteString(`# Generated by ` + "`go test ./internal/gitops -update`" + ` from fleetbench.dev/*/health.lua; do not edit.
# Argo CD health checks for fleetbench's kinds, to merge into Argo CD's argocd-cm, e.g.
#   kubectl -n argocd patch configmap argocd-cm --type merge --patch-file argocd-cm-patch.yaml
# or as a patch in the kustomization that installs Argo CD.
apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-cm
  namespace: argocd
data:
`)
	sorted := append([]string(nil), kinds...)
	sort.Strings(sorted)
	for _, kind := range sorted {
		b.WriteString("  resource.customizations.health." + group + "_" + kind + ": |\n")
		for _, line := range strings.SplitAfter(readScript(t, kind), "\n") {
			if strings.TrimSpace(line) == "" {
				b.WriteString(strings.TrimLeft(line, " \t"))
				continue
			}
			b.WriteString("    " + line)
		}
	}
	return b.Bytes()
}

// TestConfigMapPatchCarriesTheScripts: the argocd-cm patch is the Lua files, byte for byte once
// YAML is parsed, and is what -update writes.
func TestConfigMapPatchCarriesTheScripts(t *testing.T) {
	want := renderConfigMapPatch(t)
	if *update {
		if err := os.WriteFile(cmPatch, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(cmPatch)
	if err != nil {
		t.Fatal(err)
	}
	var cm struct {
		APIVersion string            `json:"apiVersion"`
		Kind       string            `json:"kind"`
		Metadata   map[string]string `json:"metadata"`
		Data       map[string]string `json:"data"`
	}
	if err := yaml.UnmarshalStrict(got, &cm); err != nil {
		t.Fatalf("%s: %v", cmPatch, err)
	}
	if cm.Kind != "ConfigMap" || cm.Metadata["name"] != "argocd-cm" {
		t.Errorf("%s is a %s %s, want the ConfigMap argocd-cm", cmPatch, cm.Kind, cm.Metadata["name"])
	}
	if len(cm.Data) != len(kinds) {
		t.Errorf("%s has %d keys, want one per kind (%v)", cmPatch, len(cm.Data), kinds)
	}
	for _, kind := range kinds {
		key := "resource.customizations.health." + group + "_" + kind
		if cm.Data[key] != readScript(t, kind) {
			t.Errorf("%s: %s differs from %s: run go test ./internal/gitops -update", cmPatch, key, scriptPath(kind))
		}
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is not what the Lua files generate: run go test ./internal/gitops -update", cmPatch)
	}
}
