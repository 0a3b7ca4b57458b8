package admission

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"

	"fleetbench.dev/fleetbench/internal/testenv"
)

// TestShippedManifestsAreAccepted creates every object of every manifest users are pointed at.
func TestShippedManifestsAreAccepted(t *testing.T) {
	root := testenv.RepoRoot()
	var files []string
	for _, dir := range []string{"examples", "config/samples", "config/profiles"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && strings.HasSuffix(path, ".yaml") && filepath.Base(path) != "kustomization.yaml" {
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// A floor, so a moved folder cannot turn this test into one that checks nothing.
	if len(files) < 12 {
		t.Fatalf("found only %d manifests under examples/, config/samples/ and config/profiles/: %v", len(files), files)
	}

	ctx := context.Background()
	for _, file := range files {
		rel, _ := filepath.Rel(root, file)
		t.Run(rel, func(t *testing.T) {
			objs := readObjects(t, file)
			if len(objs) == 0 {
				t.Fatalf("%s holds no objects", rel)
			}
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "example-"}}
			if err := env.Client.Create(ctx, ns); err != nil {
				t.Fatal(err)
			}
			for _, obj := range objs {
				namespaced, err := env.Client.IsObjectNamespaced(obj)
				if err != nil {
					t.Fatalf("%s: %s %s: %v", rel, obj.GetKind(), obj.GetName(), err)
				}
				if namespaced {
					obj.SetNamespace(ns.Name)
				}
				if err := env.Client.Create(ctx, obj); err != nil {
					t.Errorf("%s: %s %q refused: %v", rel, obj.GetKind(), obj.GetName(), err)
					continue
				}
				if !namespaced {
					// Cluster-scoped objects (Profiles) would collide across files.
					obj := obj
					t.Cleanup(func() { _ = env.Client.Delete(ctx, obj) })
				}
			}
		})
	}
}

func readObjects(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	dec := yaml.NewYAMLOrJSONDecoder(f, 4096)
	var out []*unstructured.Unstructured
	for {
		var raw map[string]any
		if err := dec.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				return out
			}
			t.Fatalf("%s: %v", path, err)
		}
		if len(raw) == 0 {
			continue
		}
		out = append(out, &unstructured.Unstructured{Object: raw})
	}
}
