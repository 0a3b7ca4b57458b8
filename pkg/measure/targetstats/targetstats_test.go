package targetstats

import (
	"testing"
	"time"
)

const summary = `{"node":{"nodeName":"n1"},"pods":[
 {"podRef":{"name":"target-stack-1","namespace":"fb-team-run"},"containers":[
   {"name":"web","cpu":{"usageNanoCores":50000000,"usageCoreNanoSeconds":2000000000},"memory":{"workingSetBytes":10485760,"rssBytes":8388608}},
   {"name":"app","cpu":{"usageNanoCores":150000000,"usageCoreNanoSeconds":6000000000},"memory":{"workingSetBytes":31457280,"rssBytes":29360128}}]},
 {"podRef":{"name":"other","namespace":"kube-system"},"containers":[
   {"name":"coredns","cpu":{"usageNanoCores":999000000,"usageCoreNanoSeconds":999000000000},"memory":{"workingSetBytes":999999999}}]}]}`

func TestSampleSumsOnlyTheTargetNamespace(t *testing.T) {
	s := Sample{At: time.Unix(100, 0)}
	if err := s.Add([]byte(summary), Pods{Namespace: "fb-team-run"}); err != nil {
		t.Fatal(err)
	}
	if s.Containers != 2 || MiB(s.WorkingSetBytes) != 40 || MiB(s.RSSBytes) != 36 || s.CPUCoreSeconds != 8 || s.CoresNow != 0.2 {
		t.Fatalf("sample = %+v", s)
	}
	later := Sample{At: time.Unix(120, 0), CPUCoreSeconds: 12}
	if got := AverageCores(s, later); got != 0.2 {
		t.Errorf("4 core-seconds over 20 s = 0.2 cores, got %v", got)
	}
	if err := s.Add([]byte("{"), Pods{Namespace: "x"}); err == nil {
		t.Error("a broken summary must be an error")
	}
}

// In a namespace the targets of several TestRuns share, a sample sums only the run's own pods.
func TestSampleSumsOnlyTheNamedPodsOfASharedNamespace(t *testing.T) {
	const shared = `{"pods":[
 {"podRef":{"name":"fb-a-stack-1","namespace":"fb-targets"},"containers":[{"name":"web","memory":{"workingSetBytes":10485760,"rssBytes":8388608}}]},
 {"podRef":{"name":"fb-b-stack-1","namespace":"fb-targets"},"containers":[{"name":"web","memory":{"workingSetBytes":99999999,"rssBytes":99999999}}]}]}`
	const metrics = `{"items":[
 {"metadata":{"name":"fb-a-stack-1","namespace":"fb-targets"},"containers":[{"name":"web","usage":{"cpu":"10m","memory":"10Mi"}}]},
 {"metadata":{"name":"fb-b-stack-1","namespace":"fb-targets"},"containers":[{"name":"web","usage":{"cpu":"1","memory":"1Gi"}}]}]}`
	own := Pods{Namespace: "fb-targets", Names: map[string]bool{"fb-a-stack-1": true}}
	var kubelet, api Sample
	if err := kubelet.Add([]byte(shared), own); err != nil {
		t.Fatal(err)
	}
	if err := api.AddPodMetrics([]byte(metrics), own); err != nil {
		t.Fatal(err)
	}
	if kubelet.Containers != 1 || kubelet.RSSBytes != 8<<20 || api.Containers != 1 || api.WorkingSetBytes != 10<<20 {
		t.Errorf("summed another run's pod: kubelet %+v, metrics API %+v", kubelet, api)
	}
}

// podMetrics is metrics-server v0.9.0's answer as read off the local cluster, plus a second pod.
const podMetrics = `{"kind":"PodMetricsList","apiVersion":"metrics.k8s.io/v1beta1","metadata":{},"items":[
 {"metadata":{"name":"target-stack-1","namespace":"fb-team-run"},"timestamp":"2026-11-22T08:00:00Z","window":"10.2s",
  "containers":[{"name":"web","usage":{"cpu":"1645936n","memory":"10116Ki"}},{"name":"db","usage":{"cpu":"48m","memory":"20Mi"}}]},
 {"metadata":{"name":"coredns","namespace":"kube-system"},"containers":[{"name":"coredns","usage":{"cpu":"1","memory":"1Gi"}}]}]}`

func TestAddPodMetricsSumsWorkingSetAndRates(t *testing.T) {
	s := Sample{Source: SourceMetricsAPI}
	if err := s.AddPodMetrics([]byte(podMetrics), Pods{Namespace: "fb-team-run"}); err != nil {
		t.Fatal(err)
	}
	if s.Containers != 2 || s.WorkingSetBytes != 10116<<10+20<<20 || s.RSSBytes != 0 || s.CPUCoreSeconds != 0 {
		t.Fatalf("sample = %+v", s)
	}
	if d := s.CoresNow - 0.049645936; d > 1e-9 || d < -1e-9 {
		t.Errorf("cores now = %v, want 1645936n + 48m", s.CoresNow)
	}
	// The metrics API has no RSS: memory columns use the working set.
	if s.MemoryBytes() != s.WorkingSetBytes {
		t.Errorf("memory basis = %d, want the working set %d", s.MemoryBytes(), s.WorkingSetBytes)
	}
	kubelet := Sample{Source: SourceKubeletSummary, RSSBytes: 1, WorkingSetBytes: 2}
	if kubelet.MemoryBytes() != 1 {
		t.Error("the kubelet summary's memory columns are RSS")
	}
	bad := Sample{}
	if err := bad.AddPodMetrics([]byte(`{"items":[{"metadata":{"namespace":"x"},"containers":[{"name":"c","usage":{"cpu":"lots","memory":"1Mi"}}]}]}`), Pods{Namespace: "x"}); err == nil {
		t.Error("an unparsable quantity must be an error")
	}
}
