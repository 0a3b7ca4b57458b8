package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"

	"fleetbench.dev/fleetbench/internal/controller/testrun/runio"
)

// TestKubeletSummariesFlags: metrics-api reads no kubelet; auto and kubelet need a ServiceAccount
// named namespace/name and a CA that holds a certificate, never none.
func TestKubeletSummariesFlags(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.pem")
	if err := os.WriteFile(empty, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	const id = "fleetbench-system/fleetbench-kubelet-stats"
	for _, c := range []struct {
		name, metrics, identity, caFile string
		cfg                             rest.Config
		wantErr                         string // "" : a reader (or none with metrics-api)
	}{
		{name: "metrics-api reads no kubelet", metrics: runio.TargetMetricsMetricsAPI, identity: "not/valid/at all"},
		{name: "auto with the API server's CA", metrics: runio.TargetMetricsAuto, identity: id},
		{name: "a bad identity", metrics: runio.TargetMetricsKubelet, identity: "fleetbench-kubelet-stats", wantErr: "--kubelet-stats-identity"},
		{name: "a CA file without a certificate", metrics: runio.TargetMetricsAuto, identity: id, caFile: empty, wantErr: "holds no PEM certificate"},
		{name: "a missing CA file", metrics: runio.TargetMetricsKubelet, identity: id, caFile: filepath.Join(dir, "missing"), wantErr: "--kubelet-ca-file"},
		{name: "an API server CA without a certificate", metrics: runio.TargetMetricsAuto, identity: id,
			cfg: rest.Config{TLSClientConfig: rest.TLSClientConfig{CAData: []byte("junk")}}, wantErr: "the API server's CA holds no PEM certificate"},
	} {
		got, err := kubeletSummaries(c.metrics, c.identity, c.caFile, &c.cfg, fake.NewClientset())
		switch {
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("%s: error %v, want one saying %q", c.name, err, c.wantErr)
		case c.wantErr == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.wantErr == "" && (got == nil) != (c.metrics == runio.TargetMetricsMetricsAPI):
			t.Errorf("%s: reader %v", c.name, got)
		}
	}
}
