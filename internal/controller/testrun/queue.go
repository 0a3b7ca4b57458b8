package testrun

import (
	"context"
	"sync/atomic"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"fleetbench.dev/fleetbench/internal/controller/fairqueue"
)

// fairQueue holds the controller's work queue, fair by namespace (package fairqueue), once
// the controller made it: client-go's delaying and rate-limiting queues wrap it, and deletions
// reach it directly, ahead of every namespace's turn.
type fairQueue struct {
	workers int
	base    atomic.Pointer[fairqueue.Queue[reconcile.Request]]
}

// newQueue is the controller's NewQueue.
func (f *fairQueue) newQueue(name string, limiter workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
	base := fairqueue.New(f.workers, func(req reconcile.Request) string { return req.Namespace })
	f.base.Store(base)
	return workqueue.NewTypedRateLimitingQueueWithConfig(limiter, workqueue.TypedRateLimitingQueueConfig[reconcile.Request]{
		Name:          name,
		DelayingQueue: workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[reconcile.Request]{Name: name, Queue: base}),
	})
}

// urgent queues a TestRun ahead of every namespace: deleting is what a user does to stop a
// run, and must not wait behind a namespace's flood.
func (f *fairQueue) urgent(obj client.Object) {
	if base := f.base.Load(); base != nil {
		base.AddUrgent(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(obj)})
	}
}

// deletions is the handler that sends deletions to urgent: a TestRun marked for deletion (its
// finalizer still to be removed), or gone without one.
func (f *fairQueue) deletions() handler.EventHandler {
	return handler.Funcs{
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if !e.ObjectNew.GetDeletionTimestamp().IsZero() {
				f.urgent(e.ObjectNew)
			}
		},
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			f.urgent(e.Object)
		},
	}
}
