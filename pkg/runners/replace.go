package runners

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/naming"
)

// A replacement runner takes a lost runner's execution segment and device-id range for the
// rest of the load. What can be resumed is a load whose length is time and whose k6 config
// fleetbench writes (spec.load):
//   - devices at a constant arrival rate: the same rate for the remaining duration;
//   - devices ramping up (spec.load.rampUp) and a peak climb (ramping-arrival-rate): the stages
//     cut at the elapsed time, starting from the rate reached there;
//   - spec.load.duration without devices (the script's VUs for a duration): the remaining duration.
// Iterations cannot be resumed (k6 cannot say which the lost runner finished), nor a load the
// script's own options decide: a config file does not override them.

// ErrNotResumable says the load cannot be resumed for its remaining time.
var ErrNotResumable = errors.New("the load cannot be resumed for its remaining time")

// LossPolicy is spec.runnerLoss.policy with its default, for a fleet of n runners (the run's
// RunnerCount): Replace for a stability test of two runners or more, Fail otherwise. A lone
// runner is never replaced, whatever the policy says (admission refuses Replace with
// parallelism 1; an auto fleet that chose 1 gets here): it runs setup() itself, so the
// operator holds no setup() data to hand a replacement.
func LossPolicy(spec *v1alpha1.TestRunSpec, n int) v1alpha1.RunnerLossPolicy {
	switch {
	case n < 2:
		return v1alpha1.RunnerLossFail
	case spec.RunnerLoss != nil && spec.RunnerLoss.Policy != "":
		return spec.RunnerLoss.Policy
	case spec.Type == v1alpha1.TestTypeStability:
		return v1alpha1.RunnerLossReplace
	}
	return v1alpha1.RunnerLossFail
}

// MaxReplacements is spec.runnerLoss.maxReplacements with its default, within the limit.
func MaxReplacements(spec *v1alpha1.TestRunSpec) int {
	if spec.RunnerLoss != nil && spec.RunnerLoss.MaxReplacements != nil {
		return min(max(int(*spec.RunnerLoss.MaxReplacements), 0), v1alpha1.MaxReplacementsLimit)
	}
	return v1alpha1.DefaultMaxReplacements
}

// Drain is spec.runnerLoss.drain with its default, Wait; Replace only under policy Replace.
func Drain(spec *v1alpha1.TestRunSpec, n int) v1alpha1.DrainPolicy {
	if spec.RunnerLoss != nil && spec.RunnerLoss.Drain == v1alpha1.DrainReplace && LossPolicy(spec, n) == v1alpha1.RunnerLossReplace {
		return v1alpha1.DrainReplace
	}
	return v1alpha1.DrainWait
}

// Resumable says why the load cannot be resumed for its remaining time; nil when it can.
func Resumable(spec *v1alpha1.TestRunSpec) error {
	switch {
	case spec.Load == nil:
		return fmt.Errorf("%w: only the script's options know the load (set spec.load with a duration)", ErrNotResumable)
	case spec.Load.Iterations != nil:
		return fmt.Errorf("%w: a load of iterations cannot be resumed exactly (k6 cannot say which iterations the lost runner finished)", ErrNotResumable)
	case ExpectedDuration(spec) <= 0:
		return fmt.Errorf("%w: the load has no duration", ErrNotResumable)
	}
	return nil
}

// RemainingConfig is the k6 config (--config) of a replacement in a fleet of n joining elapsed
// after the start: the fleet's config (K6Config, with its segment sequence) with every scenario
// cut at elapsed. remaining is how long its load runs; zero when nothing is left.
func RemainingConfig(spec *v1alpha1.TestRunSpec, testRun string, n int, elapsed time.Duration) (cfg []byte, remaining time.Duration, err error) {
	if err := Resumable(spec); err != nil {
		return nil, 0, err
	}
	raw, err := K6Config(spec, testRun, n)
	if err != nil {
		return nil, 0, err
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, 0, err
	}
	elapsed = max(elapsed, 0)
	if d, ok := doc["duration"].(string); ok {
		total, err := time.ParseDuration(d)
		if err != nil {
			return nil, 0, fmt.Errorf("duration %q: %w", d, err)
		}
		remaining = max(total-elapsed, 0).Truncate(time.Millisecond)
		doc["duration"] = remaining.String()
		out, err := json.Marshal(doc)
		return out, remaining, err
	}
	scenarios, _ := doc["scenarios"].(map[string]any)
	kept := map[string]any{}
	for name, v := range scenarios {
		sc, _ := v.(map[string]any)
		left, err := cutScenario(sc, elapsed)
		if err != nil {
			return nil, 0, fmt.Errorf("scenario %s: %w", name, err)
		}
		if left > 0 {
			kept[name] = sc
			remaining = max(remaining, left)
		}
	}
	doc["scenarios"] = kept
	out, err := json.Marshal(doc)
	return out, remaining, err
}

// cutScenario rewrites one scenario in place to what is left of it elapsed after the start;
// it returns how long after the replacement's start the scenario ends (0: nothing left).
func cutScenario(sc map[string]any, elapsed time.Duration) (time.Duration, error) {
	start, err := durationOf(sc["startTime"])
	if err != nil {
		return 0, err
	}
	into := elapsed - start // how far into the scenario the replacement joins
	if into < 0 {
		sc["startTime"] = (-into).String()
		into = 0
	} else {
		delete(sc, "startTime")
	}
	lead := max(start-elapsed, 0)
	switch sc["executor"] {
	case "constant-arrival-rate", "constant-vus":
		d, err := durationOf(sc["duration"])
		if err != nil {
			return 0, err
		}
		left := (d - into).Truncate(time.Millisecond)
		if left <= 0 {
			return 0, nil
		}
		sc["duration"] = left.String()
		return lead + left, nil
	case "ramping-arrival-rate":
		stages, startRate, err := stagesOf(sc)
		if err != nil {
			return 0, err
		}
		rate, rest := CutStages(startRate, stages, into)
		if len(rest) == 0 {
			return 0, nil
		}
		sc["startRate"] = int64(math.Floor(rate))
		var out []map[string]any
		var left time.Duration
		for _, st := range rest {
			out = append(out, map[string]any{"target": st.Target, "duration": st.Duration.String()})
			left += st.Duration
		}
		sc["stages"] = out
		return lead + left, nil
	}
	return 0, fmt.Errorf("%w: executor %v", ErrNotResumable, sc["executor"])
}

// Stage is one stage of a ramping executor: reach Target over Duration.
type Stage struct {
	Target   int64
	Duration time.Duration
}

// CutStages is what is left of stages (starting from startRate) at, after their start: the
// rate reached there and the stages from there on, the first shortened. k6 ramps linearly
// within a stage.
func CutStages(startRate int64, stages []Stage, at time.Duration) (float64, []Stage) {
	from := float64(startRate)
	for i, st := range stages {
		if at < st.Duration {
			rate := from + (float64(st.Target)-from)*float64(at)/float64(st.Duration)
			rest := append([]Stage{{Target: st.Target, Duration: (st.Duration - at).Truncate(time.Millisecond)}}, stages[i+1:]...)
			if rest[0].Duration <= 0 {
				rest = rest[1:]
			}
			return rate, rest
		}
		at -= st.Duration
		from = float64(st.Target)
	}
	return from, nil
}

func stagesOf(sc map[string]any) ([]Stage, int64, error) {
	list, _ := sc["stages"].([]any)
	var out []Stage
	for _, v := range list {
		m, _ := v.(map[string]any)
		d, err := durationOf(m["duration"])
		if err != nil {
			return nil, 0, err
		}
		out = append(out, Stage{Target: int64(number(m["target"])), Duration: d})
	}
	return out, int64(number(sc["startRate"])), nil
}

func number(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case string:
		f, _ := strconv.ParseFloat(x, 64)
		return f
	}
	return 0
}

func durationOf(v any) (time.Duration, error) {
	s, _ := v.(string)
	if s == "" {
		return 0, nil
	}
	return time.ParseDuration(s)
}

// SegmentRate is runner i of n's share of the load in requests (iterations) per second at its
// steady rate: the devices of its range once per period (with zones, its range of the whole
// fleet's). Zero when the spec does not say (the script's own VUs).
func SegmentRate(spec *v1alpha1.TestRunSpec, i, n int) float64 {
	if spec.Load == nil || spec.Load.Devices == nil || n < 1 || i < 0 || i >= n {
		return 0
	}
	period, err := time.ParseDuration(string(spec.Load.Period))
	if err != nil || period <= 0 {
		return 0
	}
	return float64(DeviceRanges(int64(*spec.Load.Devices), spec.FleetRunners(n))[spec.FleetIndex(i)].Count()) / period.Seconds()
}

// EstimateUnobserved is the requests a segment of that rate would have made from from to to:
// those the results miss, either never made or made and not observed. A gap of unknown rate
// (the script's own VUs) estimates 0.
func EstimateUnobserved(rate float64, from, to time.Time) int64 {
	if rate <= 0 || !to.After(from) {
		return 0
	}
	return int64(math.Round(rate * to.Sub(from).Seconds()))
}

// ReplacementJob is the k-th replacement of runner i of n: runner i's Job (its execution
// segment, device ids and everything else), under its own name and label, reading its k6
// config from configMap (RemainingConfig), and taking setup()'s data from the operator, as
// runners of a fleet do. It too starts paused; the operator resumes it once it is Ready.
func ReplacementJob(tr *v1alpha1.TestRun, i, n, k int, configMap string, opts JobOptions) *batchv1.Job {
	job := Job(tr, i, n, opts)
	job.Name = naming.ReplacementJob(tr.Name, i, k)
	job.Labels[naming.LabelReplacement] = strconv.Itoa(k)
	job.Spec.Template.Labels[naming.LabelReplacement] = strconv.Itoa(k)
	pod := &job.Spec.Template.Spec
	pod.Volumes = append(pod.Volumes, corev1.Volume{Name: "remaining", VolumeSource: corev1.VolumeSource{
		ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: configMap}}}})
	c := &pod.Containers[0]
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "remaining", MountPath: remainingDir, ReadOnly: true})
	for a := range c.Args {
		if c.Args[a] == "--config" && a+1 < len(c.Args) {
			c.Args[a+1] = remainingDir + "/" + ConfigKey
		}
	}
	c.Env = append(c.Env, corev1.EnvVar{Name: "FLEETBENCH_REPLACEMENT", Value: strconv.Itoa(k)})
	return job
}

// remainingDir is where a replacement finds its k6 config.
const remainingDir = "/fleetbench/remaining"

// lostNodeGrace is how long a runner of a Replace run stays bound to a node that stopped
// answering: the taint manager then deletes its pod, which the operator sees as lost (instead
// of Kubernetes' default of 5 minutes).
const lostNodeGrace = 30

// lostRunnerGrace is the deletion grace of a Replace run's runners, instead of Kubernetes'
// 30 s. A replacement resumes only once its lost pod ended, and a pod on a lost node never
// reports that it did: the replacement waits out its deletion grace, so the grace is most of the
// time from a lost node's pod being deleted to its replacement running. k6 needs no more on
// SIGTERM: a lost runner's results are what its last live read kept, not what it prints then.
const lostRunnerGrace = 5

// lossGrace is the runners' deletion grace: lostRunnerGrace for a run that replaces lost
// runners, Kubernetes' default otherwise.
func lossGrace(spec *v1alpha1.TestRunSpec, n int) *int64 {
	if LossPolicy(spec, n) != v1alpha1.RunnerLossReplace {
		return nil
	}
	return ptr.To[int64](lostRunnerGrace)
}

// lossTolerations adds, for a run that replaces lost runners, NoExecute tolerations of an
// unreachable or not-ready node for lostNodeGrace seconds, unless the user tolerates them.
func lossTolerations(spec *v1alpha1.TestRunSpec, n int, user []corev1.Toleration) []corev1.Toleration {
	if LossPolicy(spec, n) != v1alpha1.RunnerLossReplace {
		return user
	}
	out := slices.Clone(user)
	for _, key := range []string{corev1.TaintNodeUnreachable, corev1.TaintNodeNotReady} {
		if slices.ContainsFunc(user, func(t corev1.Toleration) bool {
			return t.Key == key || (t.Key == "" && t.Operator == corev1.TolerationOpExists)
		}) {
			continue
		}
		out = append(out, corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](lostNodeGrace)})
	}
	return out
}
