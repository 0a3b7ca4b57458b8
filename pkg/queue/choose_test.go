package queue

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// TestChoose: a queue the run names wins; a run naming none is queued in its namespace's
// LocalQueue named default, as Kueue's LocalQueueDefaulting queues a Job; a spec.queue that
// names nothing where no default exists is refused, never ignored; without Kueue the run goes
// on, told so when it asked for a queue. Where the admin requires queueing, nothing the run
// says lets it go on unqueued.
// chooseCase is a run naming a queue (or not) and what Choose must answer for it.
type chooseCase struct {
	name             string
	labels           map[string]string
	queue            *v1alpha1.QueueSpec
	kueue, nsDefault bool
	want             Choice
}

func (c chooseCase) run() *v1alpha1.TestRun {
	return &v1alpha1.TestRun{ObjectMeta: metav1.ObjectMeta{Labels: c.labels}, Spec: v1alpha1.TestRunSpec{Queue: c.queue}}
}

func TestChoose(t *testing.T) {
	spec := func(lq string) *v1alpha1.QueueSpec { return &v1alpha1.QueueSpec{LocalQueue: lq} }
	label := map[string]string{v1alpha1.QueueNameLabel: "lq"}
	for _, tc := range []chooseCase{
		{"nothing asked, no default", nil, nil, true, false, Choice{Action: NotQueued}},
		{"nothing asked, namespace default", nil, nil, true, true, Choice{Action: Queue, LocalQueue: "default", Source: FromNamespaceDefault}},
		{"spec names a queue", nil, spec("team-a"), true, true, Choice{Action: Queue, LocalQueue: "team-a", Source: FromSpec}},
		{"label names a queue", label, nil, true, true, Choice{Action: Queue, LocalQueue: "lq", Source: FromLabel}},
		{"spec wins over the label", label, spec("team-a"), true, false, Choice{Action: Queue, LocalQueue: "team-a", Source: FromSpec}},
		{"maxWait with the label", label, &v1alpha1.QueueSpec{MaxWait: "1h"}, true, false, Choice{Action: Queue, LocalQueue: "lq", Source: FromLabel}},
		{"maxWait, namespace default", nil, &v1alpha1.QueueSpec{MaxWait: "1h"}, true, true, Choice{Action: Queue, LocalQueue: "default", Source: FromNamespaceDefault}},
		{"maxWait naming nothing, no default", nil, &v1alpha1.QueueSpec{MaxWait: "1h"}, true, false, Choice{Action: NotNamed}},
		{"empty spec.queue, no default", nil, &v1alpha1.QueueSpec{}, true, false, Choice{Action: NotNamed}},
		{"no Kueue, nothing asked", nil, nil, false, false, Choice{Action: NotQueued}},
		{"no Kueue, spec names a queue", nil, spec("team-a"), false, false, Choice{Action: NotInstalled, LocalQueue: "team-a", Source: FromSpec}},
		{"no Kueue, label", label, nil, false, false, Choice{Action: NotInstalled, LocalQueue: "lq", Source: FromLabel}},
		{"no Kueue, spec.queue naming nothing", nil, &v1alpha1.QueueSpec{MaxWait: "1h"}, false, false, Choice{Action: NotInstalled}},
	} {
		run := tc.run()
		if got := Choose(run, Policy{Kueue: tc.kueue}, tc.nsDefault); got != tc.want {
			t.Errorf("%s: Choose = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// TestSourceOf: a queued run's messages say who named the queue its Workload holds.
func TestSourceOf(t *testing.T) {
	run := &v1alpha1.TestRun{}
	if got := SourceOf(run, "default"); got != FromNamespaceDefault {
		t.Errorf("a run naming none in default: %q", got)
	}
	run.Labels = map[string]string{v1alpha1.QueueNameLabel: "lq"}
	if got := SourceOf(run, "lq"); got != FromLabel {
		t.Errorf("label: %q", got)
	}
	if got := SourceOf(run, "default"); got != "" {
		t.Errorf("a queue the run no longer names: %q, want none", got)
	}
	if got := Describe("default", FromNamespaceDefault); got != "default (namespace default LocalQueue: the run names none, and its namespace has a LocalQueue named default)" {
		t.Errorf("Describe = %q", got)
	}
}

// TestChooseRequired: with queueing required, a run is queued as it would be anyway, and one
// that would go on unqueued (naming nothing where there is no default, with or without
// spec.queue) is refused; without Kueue every run is refused, whatever it names.
func TestChooseRequired(t *testing.T) {
	label := map[string]string{v1alpha1.QueueNameLabel: "lq"}
	for _, tc := range []chooseCase{
		{"nothing asked, no default", nil, nil, true, false, Choice{Action: Required}},
		{"spec.queue naming nothing, no default", nil, &v1alpha1.QueueSpec{MaxWait: "1h"}, true, false, Choice{Action: Required}},
		{"nothing asked, namespace default", nil, nil, true, true, Choice{Action: Queue, LocalQueue: "default", Source: FromNamespaceDefault}},
		{"spec names a queue", nil, &v1alpha1.QueueSpec{LocalQueue: "team-a"}, true, false, Choice{Action: Queue, LocalQueue: "team-a", Source: FromSpec}},
		{"label names a queue", label, nil, true, false, Choice{Action: Queue, LocalQueue: "lq", Source: FromLabel}},
		{"no Kueue, nothing asked", nil, nil, false, false, Choice{Action: RequiredNotInstalled}},
		{"no Kueue, spec names a queue", nil, &v1alpha1.QueueSpec{LocalQueue: "team-a"}, false, true,
			Choice{Action: RequiredNotInstalled, LocalQueue: "team-a", Source: FromSpec}},
	} {
		run := tc.run()
		got := Choose(run, Policy{Kueue: tc.kueue, Required: true}, tc.nsDefault)
		if got != tc.want {
			t.Errorf("%s: Choose = %+v, want %+v", tc.name, got, tc.want)
		}
		if got.Action == NotQueued || got.Action == NotInstalled {
			t.Errorf("%s: a required queue let the run go on unqueued (%+v)", tc.name, got)
		}
	}
}

// TestChooseDispatched: a run MultiKueue dispatches (spec.managedBy) is queued wherever a queue
// is named, and otherwise ends: it never goes on unqueued, Kueue or not.
func TestChooseDispatched(t *testing.T) {
	label := map[string]string{v1alpha1.QueueNameLabel: "lq"}
	for _, tc := range []chooseCase{
		{"spec names a queue", nil, &v1alpha1.QueueSpec{LocalQueue: "zone-b"}, true, false, Choice{Action: Queue, LocalQueue: "zone-b", Source: FromSpec}},
		{"label names a queue", label, nil, true, false, Choice{Action: Queue, LocalQueue: "lq", Source: FromLabel}},
		{"namespace default", nil, nil, true, true, Choice{Action: Queue, LocalQueue: "default", Source: FromNamespaceDefault}},
		{"nothing named", nil, nil, true, false, Choice{Action: DispatchNotNamed}},
		{"spec.queue naming nothing", nil, &v1alpha1.QueueSpec{MaxWait: "1h"}, true, false, Choice{Action: DispatchNotNamed}},
		{"no Kueue", nil, &v1alpha1.QueueSpec{LocalQueue: "zone-b"}, false, false, Choice{Action: DispatchNotInstalled, LocalQueue: "zone-b", Source: FromSpec}},
		{"no Kueue, nothing named", nil, nil, false, false, Choice{Action: DispatchNotInstalled}},
	} {
		run := tc.run()
		run.Spec.ManagedBy = v1alpha1.ManagedByMultiKueue
		for _, required := range []bool{false, true} {
			if got := Choose(run, Policy{Kueue: tc.kueue, Required: required}, tc.nsDefault); got != tc.want {
				t.Errorf("%s (required %v): Choose = %+v, want %+v", tc.name, required, got, tc.want)
			}
		}
	}
}
