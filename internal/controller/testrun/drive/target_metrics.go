package drive

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	rc "fleetbench.dev/fleetbench/internal/controller/ctrlkit"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	"fleetbench.dev/fleetbench/internal/controller/testrun/runio"
	"fleetbench.dev/fleetbench/pkg/judge"
	"fleetbench.dev/fleetbench/pkg/judge/capacity"
	"fleetbench.dev/fleetbench/pkg/measure/targetstats"
	"fleetbench.dev/fleetbench/pkg/runners"
)

// errNotScrapedYet: metrics-server lists a pod only after its first scrape of it, up to its
// resolution (10–60 s) after the pod started.
var errNotScrapedYet = errors.New("metrics.k8s.io reports no target container yet (metrics-server has not scraped the new pods)")

// beforeSampleGrace bounds how long the start waits for metrics-server's first scrape of the
// target, so the idle "before" sample exists; past it the load starts unmeasured.
const beforeSampleGrace = 90 * time.Second

const (
	// minSampleInterval is the floor admission sets on spec.stability.sampleInterval; it is
	// kept here too, for objects admitted before the floor: each sample reads the kubelet and
	// writes the result ConfigMap and status.
	minSampleInterval = time.Second
	// targetLogLines bounds how much of each target container's log is scanned for findings.
	targetLogLines = 200000
	// maxTargetLogBytes bounds the target logs one search holds (each read is maxLogBytes at most).
	maxTargetLogBytes = 32 << 20
)

// SampleInterval is spec.stability.sampleInterval, else one that follows the run's length
// (runners.SampleIntervalFor), so a short run's target still draws a curve.
func (r *Stage) SampleInterval(run *v1alpha1.TestRun) time.Duration {
	def := runners.SampleIntervalFor(RunLength(run))
	if run.Spec.Stability != nil {
		return max(rc.Timeout(run.Spec.Stability.SampleInterval, def), minSampleInterval)
	}
	return def
}

// nextSample is how long until the next target sample is due.
func (r *Stage) nextSample(s *decide.Scope) time.Duration {
	interval := r.SampleInterval(s.Run)
	if r.Calls.Busy(s.Run.UID, runio.CallSample) {
		return runio.SampleLimit // its end wakes the run
	}
	if t := s.Target(); t != nil && t.LastSampleTime != nil {
		return max(interval-s.Now.Sub(t.LastSampleTime.Time), time.Millisecond)
	}
	return interval
}

// sampleNow is the target sample taken off the worker (callSample), and errPending while it is
// in flight: its end wakes the run. sample.At is when the call began.
func (r *Stage) sampleNow(s *decide.Scope) (targetstats.Sample, error) {
	in := s.SampleInput()
	res, done := runio.Poll(r.Calls, s.Run, runio.CallSample, runio.SampleLimit, func(ctx context.Context) (targetstats.Sample, error) {
		return r.sampleTarget(ctx, in, r.Clock.Now())
	})
	if !done {
		return targetstats.Sample{}, runio.ErrPending
	}
	return res.Val, res.Err
}

// sampleTarget sums the target's containers from the source this run measures with; the first
// sample picks it (see TargetMetricsAuto) and status.target.source keeps it, so every column of
// one run comes from one source.
func (r *Stage) sampleTarget(ctx context.Context, in decide.SampleInput, at time.Time) (targetstats.Sample, error) {
	switch {
	case in.Source == targetstats.SourceKubeletSummary || (in.Source == "" && r.TargetMetrics == runio.TargetMetricsKubelet):
		return r.sampleKubelet(ctx, in, at)
	case in.Source == targetstats.SourceMetricsAPI || (in.Source == "" && r.TargetMetrics == runio.TargetMetricsMetricsAPI):
		return r.sampleMetricsAPI(ctx, in, at)
	}
	sample, err := r.sampleKubelet(ctx, in, at)
	if err == nil || errors.Is(err, runio.ErrKubeletNoContainers) {
		return sample, err // the summary is readable: it is the source
	}
	fallback, ferr := r.sampleMetricsAPI(ctx, in, at)
	if ferr != nil {
		return sample, fmt.Errorf("%w; metrics.k8s.io: %w", err, ferr)
	}
	logf.FromContext(ctx).Info("the kubelet summary failed; measuring the target with metrics.k8s.io", "error", err.Error())
	return fallback, nil
}

// sampleKubelet reads the kubelet summary of every node a target pod runs on.
func (r *Stage) sampleKubelet(ctx context.Context, in decide.SampleInput, at time.Time) (targetstats.Sample, error) {
	sample := targetstats.Sample{At: at, Source: targetstats.SourceKubeletSummary}
	if len(in.Nodes) == 0 {
		return sample, fmt.Errorf("no target pod is on a node yet")
	}
	for _, node := range in.Nodes {
		raw, err := r.Stats.NodeSummary(ctx, node)
		if err != nil {
			return sample, fmt.Errorf("kubelet summary of node %s: %w", node, err)
		}
		if err := sample.Add(raw, in.Pods); err != nil {
			return sample, err
		}
	}
	if sample.Containers == 0 {
		return sample, fmt.Errorf("namespace %s: %w", in.Ns, runio.ErrKubeletNoContainers)
	}
	return sample, nil
}

// sampleMetricsAPI reads the target namespace's pod metrics from metrics.k8s.io.
func (r *Stage) sampleMetricsAPI(ctx context.Context, in decide.SampleInput, at time.Time) (targetstats.Sample, error) {
	sample := targetstats.Sample{At: at, Source: targetstats.SourceMetricsAPI}
	raw, err := r.Stats.PodMetrics(ctx, in.Ns)
	if err != nil {
		return sample, fmt.Errorf("metrics.k8s.io pod metrics of namespace %s: %w", in.Ns, err)
	}
	if err := sample.AddPodMetrics(raw, in.Pods); err != nil {
		return sample, err
	}
	if sample.Containers == 0 {
		return sample, fmt.Errorf("namespace %s: %w", in.Ns, errNotScrapedYet)
	}
	return sample, nil
}

// integrateCPU adds, for a metrics API run, the CPU time since the last sample at the rate just
// sampled (metrics-server's rate covers the window before its timestamp).
func integrateCPU(t *v1alpha1.TargetUsage, sample targetstats.Sample) {
	if t.Source != targetstats.SourceMetricsAPI || t.LastSampleTime == nil {
		return
	}
	est, _ := strconv.ParseFloat(t.CPU.EstimatedCoreSeconds, 64)
	est += sample.CoresNow * max(sample.At.Sub(t.LastSampleTime.Time).Seconds(), 0)
	t.CPU.EstimatedCoreSeconds = strconv.FormatFloat(est, 'f', 3, 64)
}

// measureBefore records the idle target just before the load starts. It returns the
// sampling error, which the start may wait out when it is errNotScrapedYet.
func (r *Stage) measureBefore(ctx context.Context, s *decide.Scope) error {
	if s.TargetNS == "" {
		return nil
	}
	sample, err := r.sampleNow(s)
	if errors.Is(err, runio.ErrPending) {
		return err
	}
	if err != nil {
		s.RecordCondition(v1alpha1.ConditionTargetMeasured, metav1.ConditionFalse, v1alpha1.ReasonSampleFailed, err.Error())
		return err
	}
	at := metav1.NewTime(s.Now)
	s.Decided.Target = &v1alpha1.TargetUsage{
		Source:         sample.Source,
		Samples:        1,
		LastSampleTime: &at,
		Memory:         &v1alpha1.MemoryUsage{BeforeMiB: mib(sample.MemoryBytes()), PeakMiB: mib(sample.MemoryBytes())},
		CPU:            &v1alpha1.CPUUsage{UsageCoreSecondsBefore: strconv.FormatFloat(sample.CPUCoreSeconds, 'f', 3, 64)},
	}
	s.RecordCondition(v1alpha1.ConditionTargetMeasured, metav1.ConditionTrue, v1alpha1.ReasonSampled, "the target was sampled before the start from "+sample.Source)
	r.recordTargetPoint(ctx, s, sample)
	return nil
}

// measureDuring keeps the peaks while the load runs, one sample per sample interval whatever
// else wakes the reconcile.
func (r *Stage) measureDuring(ctx context.Context, s *decide.Scope) {
	t := s.Target()
	if s.TargetNS == "" || t == nil || t.Memory == nil {
		return
	}
	if t.LastSampleTime != nil && s.Now.Sub(t.LastSampleTime.Time) < r.SampleInterval(s.Run) {
		return
	}
	sample, err := r.sampleNow(s)
	if errors.Is(err, runio.ErrPending) {
		return // nextSample waits for it
	}
	t = t.DeepCopy() // the sample is decided, not written into the loaded status
	s.Decided.Target = t
	at := metav1.NewTime(s.Now)
	if err != nil {
		t.LastSampleTime = &at
		logf.FromContext(ctx).Info("sampling the target failed", "error", err.Error())
		return
	}
	integrateCPU(t, sample)
	t.LastSampleTime = &at
	t.Samples++
	t.Memory.PeakMiB = max(t.Memory.PeakMiB, mib(sample.MemoryBytes()))
	cores := s.Profile.Spec.CPU.AsApproximateFloat64()
	peak, _ := strconv.ParseFloat(t.CPU.PeakCoresPerCore, 64)
	if now := capacity.LoadPerCore(sample.CoresNow, cores); now > peak {
		t.CPU.PeakCoresPerCore = capacity.Format(now, 2)
	}
	r.recordTargetPoint(ctx, s, sample)
}

// MeasureAfter records the target after the load: memory, average CPU, restarts, OOM kills and
// log findings, and seed 000's derived columns.
func (r *Stage) MeasureAfter(ctx context.Context, s *decide.Scope) error {
	run := s.Run
	t := s.Target()
	if s.TargetNS == "" || t == nil || t.Memory == nil || t.Memory.AfterMiB != 0 {
		return nil
	}
	after, err := r.afterLoad(s)
	if err != nil {
		return err // errPending: its end wakes the run
	}
	sample := after.sample
	if err := after.err; err != nil {
		s.RecordCondition(v1alpha1.ConditionTargetMeasured, metav1.ConditionFalse, v1alpha1.ReasonSampleFailed, "after the load: "+err.Error())
		return nil
	}
	t = t.DeepCopy() // what the load did is decided, not written into the loaded status
	s.Decided.Target = t
	integrateCPU(t, sample)
	t.Samples++
	at := metav1.NewTime(s.Now)
	t.LastSampleTime = &at
	t.Memory.AfterMiB = mib(sample.MemoryBytes())
	t.Memory.PeakMiB = max(t.Memory.PeakMiB, t.Memory.AfterMiB)
	points := r.recordTargetPoint(ctx, s, sample)
	if start := s.StartTime(); start != nil {
		// The load only: the idle point before and this one after would bend the line.
		t.Memory.Trend = judge.MemoryTrend(points, start.Time, decide.LastEnd(s), &run.Spec, s.Profile.Spec.Memory.AsApproximateFloat64()/(1<<20))
	}
	devices := int64(0)
	if run.Spec.Load != nil && run.Spec.Load.Devices != nil {
		devices = int64(*run.Spec.Load.Devices)
	}
	m := capacity.MemoryFrom(capacity.MemoryInputs{
		BeforeRSSMiB: float64(t.Memory.BeforeMiB), AfterRSSMiB: float64(t.Memory.AfterMiB),
		UsedMiB: targetstats.MiB(sample.WorkingSetBytes), TotalMiB: s.Profile.Spec.Memory.AsApproximateFloat64() / (1 << 20),
		Devices: devices,
	})
	t.Memory.IncreaseMiB = int64(m.IncreaseMiB)
	t.Memory.IncreasePercent = capacity.Format(m.IncreasePercent, 2)
	t.Memory.UtilizationPercent = capacity.Format(m.UtilizationPercent, 2)
	if devices > 0 {
		t.Memory.PerDeviceMiB = capacity.Format(m.PerDeviceMiB, 3)
		c := s.Capacity().DeepCopy()
		if c == nil {
			c = &v1alpha1.CapacityResult{}
		}
		c.MaxSafeDevicesByMemory = m.MaxSafeDevices
		s.Decided.Capacity = c
	}
	if est, err := strconv.ParseFloat(t.CPU.EstimatedCoreSeconds, 64); err == nil && t.Source == targetstats.SourceMetricsAPI {
		sample.CPUCoreSeconds = est // integrated since the start, which counts as 0
	}
	if before, err := strconv.ParseFloat(t.CPU.UsageCoreSecondsBefore, 64); err == nil && s.StartTime() != nil {
		avg := targetstats.AverageCores(targetstats.Sample{At: s.StartTime().Time, CPUCoreSeconds: before}, sample)
		t.CPU.AverageCoresPerCore = capacity.Format(capacity.LoadPerCore(avg, s.Profile.Spec.CPU.AsApproximateFloat64()), 2)
	}

	for i := range s.TargetPods {
		for _, cs := range s.TargetPods[i].Status.ContainerStatuses {
			t.Restarts += cs.RestartCount
			if term := cs.LastTerminationState.Terminated; term != nil && term.Reason == "OOMKilled" {
				t.OOMKills++
			}
		}
	}
	// Counted off the worker with the reads (startAfter): only copied here.
	t.LogFindings = nil
	for _, f := range after.findings {
		t.LogFindings = append(t.LogFindings, v1alpha1.LogFinding{Pattern: f.Pattern, Count: f.Count, Sample: f.Sample, Incomplete: f.Incomplete})
	}
	sort.SliceStable(t.LogFindings, func(i, j int) bool { return t.LogFindings[i].Pattern < t.LogFindings[j].Pattern })
	return nil
}

func logPatterns(run *v1alpha1.TestRun) []targetstats.Pattern {
	if run.Spec.Stability == nil || len(run.Spec.Stability.LogPatterns) == 0 {
		return targetstats.DefaultPatterns
	}
	var out []targetstats.Pattern
	for _, p := range run.Spec.Stability.LogPatterns {
		out = append(out, targetstats.Pattern{Name: p.Name, Regex: p.Regex})
	}
	return out
}

func mib(b uint64) int64 { return int64(targetstats.MiB(b) + 0.5) }

// afterSample is what the target showed after the load: a sample, and its logs' findings.
type afterSample struct {
	sample   targetstats.Sample
	err      error
	findings []targetstats.Finding
}

// afterLoad is the sample, log reads and pattern counts of measureAfter, made off the worker
// (callAfter): the logs are up to maxTargetLogBytes from the target's image and the patterns
// the tenant's, so the count's cost is theirs too. errPending while in flight.
func (r *Stage) afterLoad(s *decide.Scope) (afterSample, error) {
	if res, ok := r.Calls.Take(s.Run.UID, runio.CallAfter); ok {
		a, _ := res.Val.(afterSample)
		return a, nil
	}
	r.startAfter(s)
	return afterSample{}, runio.ErrPending
}

// startAfter starts measureAfter's reads unless they are in flight or measureAfter has
// nothing to do; collection starts them with its log reads, so both come back together.
func (r *Stage) startAfter(s *decide.Scope) {
	t := s.Target()
	if s.TargetNS == "" || t == nil || t.Memory == nil || t.Memory.AfterMiB != 0 {
		return
	}
	in := s.SampleInput()
	pods := make([]corev1.Pod, len(s.TargetPods))
	for i := range s.TargetPods {
		s.TargetPods[i].DeepCopyInto(&pods[i])
	}
	patterns := logPatterns(s.Run)
	// ctx ends at LogsLimit or when the run is forgotten (ended, deleted): the count stops then,
	// and its findings say how far it got.
	r.Calls.Begin(s.Run, runio.CallAfter, runio.LogsLimit, false, func(ctx context.Context) (any, error) {
		sample, err := r.sampleTarget(ctx, in, r.Clock.Now())
		if err != nil {
			return afterSample{sample: sample, err: err}, nil
		}
		// The logs, and the search over them, take what the target's image and the tenant's
		// patterns make them: within the namespace's share of the process's memory and CPUs.
		release, err := runio.TargetLogMemory.Acquire(ctx, maxTargetLogBytes)
		if err != nil {
			unread := "the target's logs were not read: no memory was free for them before the deadline (other runs of this namespace hold its share)"
			return afterSample{sample: sample, findings: targetstats.CountPatterns(ctx, nil, patterns, targetstats.DefaultLimits, unread)}, nil
		}
		defer release()
		logs, unread := r.targetLogs(ctx, pods)
		findings, err := runio.OnCPU(ctx, func() ([]targetstats.Finding, error) {
			return targetstats.CountPatterns(ctx, logs, patterns, targetstats.DefaultLimits, unread), nil
		})
		if err != nil {
			findings = targetstats.CountPatterns(ctx, nil, patterns, targetstats.DefaultLimits, "the target's logs were not searched: "+err.Error())
		}
		return afterSample{sample: sample, findings: findings}, nil
	})
}

// targetLogs reads the end of every target container's log, and of its instance before the
// last restart, where a crash is written (older instances are gone). unread says what could not
// be read, for the findings: "" when every log was.
func (r *Stage) targetLogs(ctx context.Context, pods []corev1.Pod) (logs [][]byte, unread string) {
	read, skipped, failed := 0, 0, 0
	for i := range pods {
		for _, cs := range pods[i].Status.ContainerStatuses {
			for _, previous := range []bool{false, true} {
				if previous && cs.RestartCount == 0 {
					continue
				}
				if read >= maxTargetLogBytes {
					// The target's image writes these logs: what they may take is bounded.
					logf.FromContext(ctx).Info("target logs past the limit are not searched", "pod", pods[i].Name, "container", cs.Name, "limit", maxTargetLogBytes)
					skipped++
					continue
				}
				tail, err := r.Logs.Tail(ctx, &pods[i], cs.Name, targetLogLines, previous)
				read += len(tail)
				if err != nil {
					logf.FromContext(ctx).Info("reading a target log failed", "pod", pods[i].Name, "container", cs.Name, "previous", previous, "error", err.Error())
					failed++
					continue
				}
				logs = append(logs, tail)
			}
		}
	}
	var notes []string
	if skipped > 0 {
		notes = append(notes, fmt.Sprintf("%d container logs past the %d MiB the manager reads were not searched", skipped, maxTargetLogBytes>>20))
	}
	if failed > 0 {
		notes = append(notes, fmt.Sprintf("%d container logs could not be read (the manager's log says why)", failed))
	}
	return logs, strings.Join(notes, "; ")
}

// RunLength is the run's length as its spec says it (runners.RunLength), else as k6 planned it
// in the pre-flight (status.plannedDuration): a script-only run's, known once its script was
// checked; 0 before.
func RunLength(run *v1alpha1.TestRun) time.Duration {
	if l := runners.RunLength(&run.Spec); l > 0 {
		return l
	}
	return planned(run)
}

// planned is status.plannedDuration; 0 when unknown.
func planned(run *v1alpha1.TestRun) time.Duration {
	d, err := time.ParseDuration(run.Status.PlannedDuration)
	if err != nil || d < 0 {
		return 0
	}
	return d
}
