package queue

import v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"

// DefaultLocalQueue is the LocalQueue Kueue's LocalQueueDefaulting (GA and always on in v0.17)
// queues a job in when the job names none and its namespace has a LocalQueue of this name
// (jobframework.ApplyDefaultLocalQueue): the namespace's way of naming a queue.
const DefaultLocalQueue = "default"

// Where a run's LocalQueue was named: said in its status and events.
const (
	FromSpec             = "named by spec.queue.localQueue"
	FromLabel            = "named by the TestRun's label " + v1alpha1.QueueNameLabel
	FromNamespaceDefault = "namespace default LocalQueue: the run names none, and its namespace has a LocalQueue named " + DefaultLocalQueue
)

// Action is what the queue does with a run that has not been queued yet.
type Action int

const (
	// NotQueued: the run names no queue and its namespace names none, or Kueue is not
	// installed and the run asks nothing of it: it goes on as without Kueue.
	NotQueued Action = iota
	// Queue: the run is admitted through Choice.LocalQueue as one Workload.
	Queue
	// NotInstalled: the run asks for a queue (spec.queue, or the queue-name label) but Kueue is
	// not installed: it goes on unqueued, and its status says so.
	NotInstalled
	// NotNamed: spec.queue is set, Kueue is installed, but no LocalQueue is named by the run or
	// its namespace: spec.queue would be ignored, so the run ends before it holds anything.
	NotNamed
	// Required: the admin requires queueing, Kueue is installed, but no LocalQueue is named by
	// the run or its namespace: the run ends before it holds anything.
	Required
	// RequiredNotInstalled: the admin requires queueing but Kueue is not installed: no run can
	// be admitted, so each ends before it holds anything.
	RequiredNotInstalled
	// DispatchNotNamed: the run is to be dispatched by MultiKueue (spec.managedBy) but names no
	// LocalQueue, and its namespace has none named default: it ends before it holds anything.
	DispatchNotNamed
	// DispatchNotInstalled: the run is to be dispatched by MultiKueue but Kueue is not
	// installed: it ends before it holds anything.
	DispatchNotInstalled
)

// Policy is how the manager queues runs, fixed when it starts.
type Policy struct {
	// Kueue: Kueue's API is served (controller.KueueServed, asked once).
	Kueue bool
	// Required: every run must be admitted by Kueue (--require-queue); nothing a run says
	// lets it run unqueued.
	Required bool
}

// Choice is the queue a run is admitted through, and why.
type Choice struct {
	Action Action
	// LocalQueue is the queue's name for Queue and NotInstalled (empty when only spec.queue
	// asked); Source says who named it (From*).
	LocalQueue string
	Source     string
}

// Choose decides how run is queued, once, before it holds anything, under policy p.
// namespaceDefault: the run's namespace has a LocalQueue named DefaultLocalQueue (read only
// when the run names none and Kueue is served). As Kueue does for a job, a queue the run names
// wins over the namespace's default, and a run naming none in a namespace without a default
// is not queued, unless its spec.queue asks to be or the admin requires queueing: then it is
// refused. Required never yields NotQueued or NotInstalled, whatever the run says.
func Choose(run *v1alpha1.TestRun, p Policy, namespaceDefault bool) Choice {
	named, kueue := Name(run), p.Kueue
	if run.Spec.ManagedBy == v1alpha1.ManagedByMultiKueue {
		// Only a queue dispatches: there is no going on unqueued.
		switch {
		case !kueue:
			return Choice{Action: DispatchNotInstalled, LocalQueue: named, Source: SourceOf(run, named)}
		case named != "":
			return Choice{Action: Queue, LocalQueue: named, Source: SourceOf(run, named)}
		case namespaceDefault:
			return Choice{Action: Queue, LocalQueue: DefaultLocalQueue, Source: FromNamespaceDefault}
		}
		return Choice{Action: DispatchNotNamed}
	}
	switch {
	case p.Required && !kueue:
		return Choice{Action: RequiredNotInstalled, LocalQueue: named, Source: SourceOf(run, named)}
	case named != "" && kueue:
		return Choice{Action: Queue, LocalQueue: named, Source: SourceOf(run, named)}
	case !kueue && (named != "" || run.Spec.Queue != nil):
		return Choice{Action: NotInstalled, LocalQueue: named, Source: SourceOf(run, named)}
	case !kueue:
		return Choice{Action: NotQueued}
	case namespaceDefault:
		return Choice{Action: Queue, LocalQueue: DefaultLocalQueue, Source: FromNamespaceDefault}
	case p.Required:
		return Choice{Action: Required}
	case run.Spec.Queue != nil:
		return Choice{Action: NotNamed}
	}
	return Choice{Action: NotQueued}
}

// SourceOf says who named lq, the queue run was queued in: its spec, its label, or, for a run
// that names none, its namespace's default LocalQueue. Empty when run names another queue now
// (a label changed after it was queued: the Workload keeps the first).
func SourceOf(run *v1alpha1.TestRun, lq string) string {
	switch {
	case lq == "":
		return ""
	case run.Spec.Queue != nil && run.Spec.Queue.LocalQueue == lq:
		return FromSpec
	case Name(run) == lq:
		return FromLabel
	case Name(run) == "" && lq == DefaultLocalQueue:
		return FromNamespaceDefault
	}
	return ""
}

// Describe is lq with why it was chosen, for messages: "team-a (named by spec.queue.localQueue)".
func Describe(lq, source string) string {
	if source == "" {
		return lq
	}
	return lq + " (" + source + ")"
}
