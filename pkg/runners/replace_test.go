package runners

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/naming"
)

func devicesSpec(devices int32, period, duration, rampUp string) *v1alpha1.TestRunSpec {
	return &v1alpha1.TestRunSpec{Type: v1alpha1.TestTypeStability, Parallelism: v1alpha1.FixedParallelism(2), Load: &v1alpha1.LoadSpec{
		Devices: ptr.To(devices), Period: v1alpha1.Duration(period), Duration: v1alpha1.Duration(duration), RampUp: v1alpha1.Duration(rampUp)}}
}

// scenario decodes the devices scenario of a config.
func scenario(t *testing.T, cfg []byte) map[string]any {
	t.Helper()
	var doc struct {
		Duration  string                    `json:"duration"`
		Scenarios map[string]map[string]any `json:"scenarios"`
	}
	if err := json.Unmarshal(cfg, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Scenarios == nil {
		return map[string]any{"duration": doc.Duration}
	}
	return doc.Scenarios["devices"]
}

func TestRemainingConfig(t *testing.T) {
	stages := func(s ...any) []any { return s }
	stage := func(target float64, d string) map[string]any { return map[string]any{"target": target, "duration": d} }
	tests := []struct {
		name      string
		spec      *v1alpha1.TestRunSpec
		elapsed   time.Duration
		remaining time.Duration
		want      map[string]any // the fields of the devices scenario checked
		err       bool
	}{
		{name: "constant rate: the rest of the duration", spec: devicesSpec(1000, "200s", "2h", ""), elapsed: 40 * time.Minute,
			remaining: 80 * time.Minute, want: map[string]any{"executor": "constant-arrival-rate", "rate": 1000.0, "timeUnit": "200s", "duration": "1h20m0s"}},
		{name: "constant rate, lost at the start", spec: devicesSpec(1000, "200s", "2h", ""), elapsed: 0,
			remaining: 2 * time.Hour, want: map[string]any{"duration": "2h0m0s"}},
		{name: "constant rate, past the end: nothing left", spec: devicesSpec(1000, "200s", "2h", ""), elapsed: 3 * time.Hour, remaining: 0},
		{name: "ramp-up, lost halfway up: from the rate reached", spec: devicesSpec(1000, "1s", "1h", "10m"), elapsed: 5 * time.Minute,
			remaining: 65 * time.Minute, want: map[string]any{"executor": "ramping-arrival-rate", "startRate": 500.0,
				"stages": stages(stage(1000, "5m0s"), stage(1000, "1h0m0s"))}},
		{name: "ramp-up, lost in the hold", spec: devicesSpec(1000, "1s", "1h", "10m"), elapsed: 40 * time.Minute,
			remaining: 30 * time.Minute, want: map[string]any{"startRate": 1000.0, "stages": stages(stage(1000, "30m0s"))}},
		{name: "duration alone: the script's VUs for the rest", spec: &v1alpha1.TestRunSpec{Load: &v1alpha1.LoadSpec{Duration: "10m"}},
			elapsed: 4 * time.Minute, remaining: 6 * time.Minute, want: map[string]any{"duration": "6m0s"}},
		{name: "iterations cannot be resumed", spec: &v1alpha1.TestRunSpec{Type: v1alpha1.TestTypeBenchmark, Load: &v1alpha1.LoadSpec{
			Devices: ptr.To[int32](10), Period: "1s", Iterations: ptr.To[int32](5)}}, err: true},
		{name: "the script's own load cannot be resumed", spec: &v1alpha1.TestRunSpec{}, err: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, remaining, err := RemainingConfig(tt.spec, "run", 2, tt.elapsed)
			if tt.err {
				if !errors.Is(err, ErrNotResumable) {
					t.Fatalf("err = %v, want ErrNotResumable", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if remaining != tt.remaining {
				t.Errorf("remaining = %v, want %v", remaining, tt.remaining)
			}
			// The replacement reads the fleet's segment sequence from its config, as the fleet does.
			var doc map[string]any
			if err := json.Unmarshal(cfg, &doc); err != nil || doc["executionSegmentSequence"] != Segments(2)[0].Sequence {
				t.Errorf("executionSegmentSequence = %v (%v), want %q", doc["executionSegmentSequence"], err, Segments(2)[0].Sequence)
			}
			if tt.want == nil {
				if sc := scenario(t, cfg); sc != nil {
					t.Errorf("nothing should be left, got %v", sc)
				}
				return
			}
			got := scenario(t, cfg)
			for k, v := range tt.want {
				if diff := cmp.Diff(v, got[k]); diff != "" {
					t.Errorf("%s (-want +got):\n%s", k, diff)
				}
			}
		})
	}
}

func TestCutStages(t *testing.T) {
	peak := []Stage{{Target: 100, Duration: 2 * time.Second}, {Target: 100, Duration: time.Minute}, {Target: 200, Duration: 2 * time.Second}, {Target: 200, Duration: time.Minute}}
	tests := []struct {
		name  string
		start int64
		at    time.Duration
		rate  float64
		rest  []Stage
	}{
		{"at the start", 50, 0, 50, peak},
		{"mid-ramp", 50, time.Second, 75, append([]Stage{{100, time.Second}}, peak[1:]...)},
		{"in the first hold", 50, 32 * time.Second, 100, append([]Stage{{100, 30 * time.Second}}, peak[2:]...)},
		{"at a stage boundary", 50, 62 * time.Second, 100, peak[2:]},
		{"past the end", 50, time.Hour, 200, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rate, rest := CutStages(tt.start, peak, tt.at)
			if rate != tt.rate {
				t.Errorf("rate = %v, want %v", rate, tt.rate)
			}
			if diff := cmp.Diff(tt.rest, rest); diff != "" {
				t.Errorf("stages (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEstimateUnobserved(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	spec := devicesSpec(1000, "200s", "2h", "") // 5/s in all, 2.5/s per runner of two
	tests := []struct {
		name     string
		rate     float64
		from, to time.Time
		want     int64
	}{
		{"a 20 s gap of one runner of two", SegmentRate(spec, 1, 2), at, at.Add(20 * time.Second), 50},
		{"no gap", SegmentRate(spec, 0, 2), at, at, 0},
		{"replaced before its last read (clock skew)", 2.5, at.Add(time.Second), at, 0},
		{"unknown rate", 0, at, at.Add(time.Hour), 0},
	}
	for _, tt := range tests {
		if got := EstimateUnobserved(tt.rate, tt.from, tt.to); got != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, got, tt.want)
		}
	}
	if got := SegmentRate(devicesSpec(5, "1s", "1m", ""), 1, 2); got != 3 {
		t.Errorf("an uneven split: runner 1 of 2 emulates devices 2..4, 3/s; got %v", got)
	}
}

func TestLossDefaults(t *testing.T) {
	stab := devicesSpec(10, "1s", "1h", "")
	if LossPolicy(stab, 2) != v1alpha1.RunnerLossReplace || MaxReplacements(stab) != 3 || Drain(stab, 2) != v1alpha1.DrainWait {
		t.Errorf("stability: %s, %d, %s", LossPolicy(stab, 2), MaxReplacements(stab), Drain(stab, 2))
	}
	// A lone runner (parallelism 1, or an auto fleet that chose 1) is never replaced, even
	// when the policy says Replace.
	lone := devicesSpec(10, "1s", "1h", "")
	lone.RunnerLoss = &v1alpha1.RunnerLossSpec{Policy: v1alpha1.RunnerLossReplace}
	load := devicesSpec(10, "1s", "1h", "")
	load.Type = v1alpha1.TestTypeLoad
	for _, c := range []struct {
		spec *v1alpha1.TestRunSpec
		n    int
	}{{lone, 1}, {load, 2}} {
		if LossPolicy(c.spec, c.n) != v1alpha1.RunnerLossFail {
			t.Errorf("%s with %d runners: %s, want Fail", c.spec.Type, c.n, LossPolicy(c.spec, c.n))
		}
	}
	load.RunnerLoss = &v1alpha1.RunnerLossSpec{Drain: v1alpha1.DrainReplace, MaxReplacements: ptr.To[int32](99)}
	if Drain(load, 2) != v1alpha1.DrainWait || MaxReplacements(load) != v1alpha1.MaxReplacementsLimit {
		t.Errorf("drain Replace without policy Replace must wait; max bounded: %s %d", Drain(load, 2), MaxReplacements(load))
	}
}

func TestReplacementJob(t *testing.T) {
	tr := &v1alpha1.TestRun{ObjectMeta: metav1.ObjectMeta{Name: "soak", Namespace: "team"}, Spec: *devicesSpec(100, "10s", "1h", "")}
	tr.Spec.Script = v1alpha1.ScriptSpec{Inline: "export default function() {}"}
	orig := Job(tr, 1, 2, JobOptions{ConfigMap: "soak-script", HasConfig: true})
	job := ReplacementJob(tr, 1, 2, 2, "soak-runner-1-r2", JobOptions{ConfigMap: "soak-script", HasConfig: true})
	if job.Name != "soak-runner-1-r2" || job.Labels[naming.LabelReplacement] != "2" || job.Labels[naming.LabelRunnerIndex] != "1" {
		t.Errorf("name %s labels %v", job.Name, job.Labels)
	}
	env := func(j []corev1.EnvVar, name string) string {
		for _, e := range j {
			if e.Name == name {
				return e.Value
			}
		}
		return ""
	}
	c, o := job.Spec.Template.Spec.Containers[0], orig.Spec.Template.Spec.Containers[0]
	for _, name := range []string{"DEVICE_ID_FIRST", "DEVICE_ID_LAST", "FLEETBENCH_RUNNER_INDEX"} {
		if env(c.Env, name) != env(o.Env, name) {
			t.Errorf("%s = %q, the lost runner had %q", name, env(c.Env, name), env(o.Env, name))
		}
	}
	if diff := cmp.Diff(o.Args[:5], c.Args[:5]); diff != "" {
		t.Errorf("the same execution segment (-lost +replacement):\n%s", diff)
	}
	if !cmp.Equal(c.Args[len(c.Args)-3:len(c.Args)-1], []string{"--config", remainingDir + "/" + ConfigKey}) && !contains(c.Args, remainingDir+"/"+ConfigKey) {
		t.Errorf("the replacement's config is not its own: %v", c.Args)
	}
	tol := job.Spec.Template.Spec.Tolerations
	if len(tol) != 2 || *tol[0].TolerationSeconds != lostNodeGrace {
		t.Errorf("a Replace run's runners leave a lost node after %d s: %v", lostNodeGrace, tol)
	}
	if g := job.Spec.Template.Spec.TerminationGracePeriodSeconds; g == nil || *g != lostRunnerGrace {
		t.Errorf("a Replace run's runner is given %v s to end when deleted, want %d (its replacement waits that out)", g, lostRunnerGrace)
	}
	if g := orig.Spec.Template.Spec.TerminationGracePeriodSeconds; g == nil || *g != lostRunnerGrace {
		t.Errorf("the original runner of a Replace run is given %v s to end, want %d", g, lostRunnerGrace)
	}
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}
