// Package targetstats reads what the target did from the kubelet's summary API (or
// metrics.k8s.io) and its logs:
// memory and CPU samples, and counts of log lines matching the user's patterns (seed 000's
// "Log analysis"). It parses and counts; fetching is the controller's job.
package targetstats

import (
	"encoding/json"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
)

// nodeSummary is the part of the kubelet's /stats/summary this package reads.
type nodeSummary struct {
	Pods []struct {
		PodRef struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"podRef"`
		Containers []struct {
			Name string `json:"name"`
			CPU  *struct {
				UsageNanoCores       *uint64 `json:"usageNanoCores"`
				UsageCoreNanoSeconds *uint64 `json:"usageCoreNanoSeconds"`
			} `json:"cpu"`
			Memory *struct {
				WorkingSetBytes *uint64 `json:"workingSetBytes"`
				RSSBytes        *uint64 `json:"rssBytes"`
			} `json:"memory"`
		} `json:"containers"`
	} `json:"pods"`
}

// Where samples come from; the values of status.target.source.
const (
	SourceKubeletSummary = "kubeletSummary"
	SourceMetricsAPI     = "metricsAPI"
)

// Sample is the target's containers summed at one moment.
type Sample struct {
	At time.Time
	// Source is SourceKubeletSummary or SourceMetricsAPI.
	Source          string
	Containers      int
	WorkingSetBytes uint64
	RSSBytes        uint64
	// CPUCoreSeconds is cumulative CPU time; the difference of two samples over their
	// distance in time is the average cores used.
	CPUCoreSeconds float64
	// CoresNow is the kubelet's recent CPU rate, for the peak.
	CoresNow float64
}

// Pods are the pods whose containers a sample sums: every pod of Namespace or, where Names is
// set (a namespace the targets of several TestRuns share), only the pods named.
type Pods struct {
	Namespace string
	Names     map[string]bool
}

func (p Pods) has(namespace, name string) bool {
	return namespace == p.Namespace && (p.Names == nil || p.Names[name])
}

// Add sums the containers of pods from one node's summary into s.
func (s *Sample) Add(summaryJSON []byte, pods Pods) error {
	var sum nodeSummary
	if err := json.Unmarshal(summaryJSON, &sum); err != nil {
		return fmt.Errorf("decoding the kubelet summary: %w", err)
	}
	for _, pod := range sum.Pods {
		if !pods.has(pod.PodRef.Namespace, pod.PodRef.Name) {
			continue
		}
		for _, c := range pod.Containers {
			s.Containers++
			if m := c.Memory; m != nil {
				s.WorkingSetBytes += deref(m.WorkingSetBytes)
				s.RSSBytes += deref(m.RSSBytes)
			}
			if cpu := c.CPU; cpu != nil {
				s.CPUCoreSeconds += float64(deref(cpu.UsageCoreNanoSeconds)) / 1e9
				s.CoresNow += float64(deref(cpu.UsageNanoCores)) / 1e9
			}
		}
	}
	return nil
}

// MemoryBytes is resident memory (RSS) where the source has it, else the working set.
func (s *Sample) MemoryBytes() uint64 {
	if s.Source == SourceMetricsAPI {
		return s.WorkingSetBytes
	}
	return s.RSSBytes
}

// podMetricsList is the part of a metrics.k8s.io/v1beta1 PodMetricsList this package reads.
type podMetricsList struct {
	Items []struct {
		Metadata struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
		Containers []struct {
			Name  string            `json:"name"`
			Usage map[string]string `json:"usage"`
		} `json:"containers"`
	} `json:"items"`
}

// AddPodMetrics sums the containers of pods in a metrics.k8s.io PodMetricsList into s: the
// working set and the recent CPU rate. The API has no RSS and no cumulative CPU time.
func (s *Sample) AddPodMetrics(listJSON []byte, pods Pods) error {
	var list podMetricsList
	if err := json.Unmarshal(listJSON, &list); err != nil {
		return fmt.Errorf("decoding metrics.k8s.io pod metrics: %w", err)
	}
	for _, pod := range list.Items {
		if !pods.has(pod.Metadata.Namespace, pod.Metadata.Name) {
			continue
		}
		for _, c := range pod.Containers {
			cpu, err := resource.ParseQuantity(c.Usage["cpu"])
			if err != nil {
				return fmt.Errorf("container %s: cpu %q: %w", c.Name, c.Usage["cpu"], err)
			}
			mem, err := resource.ParseQuantity(c.Usage["memory"])
			if err != nil {
				return fmt.Errorf("container %s: memory %q: %w", c.Name, c.Usage["memory"], err)
			}
			s.Containers++
			s.CoresNow += cpu.AsApproximateFloat64()
			s.WorkingSetBytes += uint64(max(mem.Value(), 0))
		}
	}
	return nil
}

func deref(p *uint64) uint64 {
	if p == nil {
		return 0
	}
	return *p
}

// MiB converts bytes to mebibytes.
func MiB(b uint64) float64 { return float64(b) / (1 << 20) }

// AverageCores is the CPU used between two samples, in cores.
func AverageCores(before, after Sample) float64 {
	d := after.At.Sub(before.At).Seconds()
	if d <= 0 || after.CPUCoreSeconds < before.CPUCoreSeconds {
		return 0
	}
	return (after.CPUCoreSeconds - before.CPUCoreSeconds) / d
}
