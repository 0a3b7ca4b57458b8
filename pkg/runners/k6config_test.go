package runners

import (
	"encoding/json"
	"slices"
	"testing"

	tw "fleetbench.dev/fleetbench/internal/testwrappers"
)

// A 5,000-runner fleet's Jobs stay small: the sequence (49 KB at 5,000) is written once, in the
// config file, not in each of the 5,000 Jobs and pods (489 MB of objects when it was a flag).
func TestFleetSequenceIsInTheConfigFileNotInEveryJob(t *testing.T) {
	const n = 5000
	tr := tw.MakeTestRun("wide", "team").Parallelism(n).Obj()
	if !HasConfig(&tr.Spec, n) {
		t.Fatal("a fleet without spec.load gets no config file")
	}
	opts := JobOptions{Image: "fleetbench/runner:dev", ConfigMap: "wide-script", HasConfig: HasConfig(&tr.Spec, n)}
	for _, i := range []int{0, 1234, n - 1} {
		job := Job(tr, i, n, opts)
		b, err := json.Marshal(job)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > 8<<10 {
			t.Errorf("runner %d's Job is %d bytes; it must not grow with the fleet", i, len(b))
		}
		args := job.Spec.Template.Spec.Containers[0].Args
		if slices.Contains(args, "--execution-segment-sequence") || !slices.Contains(args, "--config") ||
			!slices.Contains(args, Segments(n)[i].Segment) {
			t.Errorf("runner %d args %q: want its own segment and --config, no sequence flag", i, args)
		}
	}
	cfg, err := K6Config(&tr.Spec, tr.Name, n)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(cfg, &got); err != nil {
		t.Fatal(err)
	}
	if got["executionSegmentSequence"] != Segments(n)[0].Sequence {
		t.Errorf("config file's sequence is not the fleet's: %.80v", got["executionSegmentSequence"])
	}
	// The ConfigMap holds it within its 1 MiB with the largest inline script (256 KiB).
	if len(cfg) > 128<<10 {
		t.Errorf("config file is %d bytes", len(cfg))
	}
}

// The load model's config and the sequence share the file; a lone runner keeps its flags.
func TestK6ConfigKeepsTheLoadModel(t *testing.T) {
	tr := tw.MakeTestRun("stab", "team").Devices(1000, "200s").Duration("2h").Parallelism(4).Obj()
	load, err := LoadConfig(&tr.Spec, tr.Name)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := K6Config(&tr.Spec, tr.Name, 4)
	if err != nil {
		t.Fatal(err)
	}
	var want, got map[string]any
	_ = json.Unmarshal(load, &want)
	_ = json.Unmarshal(cfg, &got)
	if got["executionSegmentSequence"] != "0,1/4,2/4,3/4,1" {
		t.Errorf("sequence = %v", got["executionSegmentSequence"])
	}
	delete(got, "executionSegmentSequence")
	a, _ := json.Marshal(want)
	b, _ := json.Marshal(got)
	if string(a) != string(b) {
		t.Errorf("load model changed:\n%s\n%s", a, b)
	}

	lone := tw.MakeTestRun("one", "team").Parallelism(1).Obj()
	if HasConfig(&lone.Spec, 1) {
		t.Error("a lone runner without spec.load gets a config file")
	}
	if cfg, err := K6Config(&lone.Spec, lone.Name, 1); cfg != nil || err != nil {
		t.Errorf("lone runner's config = %s, %v", cfg, err)
	}
	args := Job(lone, 0, 1, JobOptions{Image: "x", ConfigMap: "one-script"}).Spec.Template.Spec.Containers[0].Args
	if !slices.Contains(args, "--execution-segment-sequence") || slices.Contains(args, "--config") {
		t.Errorf("lone runner args %q", args)
	}
}

// A user's own --config replaces fleetbench's, so the sequence stays a flag for them.
func TestUsersOwnConfigKeepsTheSequenceFlag(t *testing.T) {
	for _, tc := range []struct {
		args string
		flag bool
	}{
		{"--config /test/mine.json", true},
		{"--config=/test/mine.json", true},
		{"-c /test/mine.json", true},
		{"-qc /test/mine.json", true},
		{"--tag c=1 --vus 3", false},
		{"-e CONFIG=x", false},
		{"--compatibility-mode=base", false},
	} {
		tr := tw.MakeTestRun("own", "team").Parallelism(3).Arguments(tc.args).Obj()
		args := Job(tr, 1, 3, JobOptions{Image: "x", ConfigMap: "own-script", HasConfig: HasConfig(&tr.Spec, 3)}).Spec.Template.Spec.Containers[0].Args
		if got := slices.Contains(args, "--execution-segment-sequence"); got != tc.flag {
			t.Errorf("args %q: sequence flag %v, want %v (%q)", tc.args, got, tc.flag, args)
		}
	}
}
