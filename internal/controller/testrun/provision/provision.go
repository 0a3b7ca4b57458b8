package provision

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	rc "fleetbench.dev/fleetbench/internal/controller/ctrlkit"
	"fleetbench.dev/fleetbench/internal/controller/testrun/admit"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	"fleetbench.dev/fleetbench/pkg/naming"
	"fleetbench.dev/fleetbench/pkg/target"
)

// ReconcileTarget provisions the target and waits for it to be Ready.
func (r *Stage) ReconcileTarget(ctx context.Context, s *decide.Scope) (ctrl.Result, error) {
	run := s.Run
	if run.Spec.Target.External != nil {
		s.RecordCondition(v1alpha1.ConditionTargetReady, metav1.ConditionTrue, v1alpha1.ReasonExternal, "the target is external: "+run.Spec.Target.External.URL)
		return ctrl.Result{}, nil
	}
	if s.SharedTarget {
		// The admin's; a namespace of the run's own is written once proven (provisionNamespace).
		s.Decided.TargetNamespace = s.TargetNS
	}
	if s.Started() {
		return ctrl.Result{}, nil // once the load runs, the target is measured, not re-provisioned
	}
	if s.DesiredErr != nil {
		s.Fail(buildFailureReason(s.DesiredErr), s.DesiredErr.Error())
		return ctrl.Result{}, nil
	}
	if s.Phase() == v1alpha1.PhasePending {
		s.Enter(v1alpha1.PhaseProvisioning, v1alpha1.ReasonProvisioning, fmt.Sprintf(v1alpha1.MessageProvisioning, s.TargetNS))
	}
	if wait, err := r.provisionTarget(ctx, s); err != nil || !wait.IsZero() || s.Failure != nil {
		return wait, err
	}

	notReady, err := r.targetNotReady(ctx, s.Desired.Deployments)
	if err != nil {
		return ctrl.Result{}, err
	}
	if notReady == "" {
		s.RecordCondition(v1alpha1.ConditionTargetReady, metav1.ConditionTrue, v1alpha1.ReasonReady, "every target component is Ready")
		return ctrl.Result{}, nil
	}
	notReady += targetPodHint(s.TargetPods)
	s.RecordCondition(v1alpha1.ConditionTargetReady, metav1.ConditionFalse, v1alpha1.ReasonNotReady, notReady)
	if reason, msg := targetStuck(s.TargetPods); reason != "" {
		s.Fail(reason, msg)
		return ctrl.Result{}, nil
	}
	recheck := s.PullRecheck // of runners created while the target starts
	for i := range s.TargetPods {
		pod := &s.TargetPods[i]
		msg, after := r.Pulls.GaveUp(pod, s.Now)
		if msg != "" {
			s.Fail(v1alpha1.ReasonTargetImageNotPresent, fmt.Sprintf("target pod %s: %s; "+
				"fix the component's image, its registry's reachability, or spec.target.imagePullSecrets", pod.Name, msg))
			return ctrl.Result{}, nil
		}
		if after > 0 && (recheck == 0 || after < recheck) {
			recheck = after
		}
	}
	if targetScheduled(s.Desired.Deployments, s.TargetPods) {
		// The runners start while the target does: their pods' sandboxes, the wait until they
		// reach every component and k6's start then overlap the target's start, not follow
		// it. Only now: placed before the target's pods, they could not keep off its nodes.
		if err := r.CreateRunnerJobs(ctx, s); err != nil || s.Failure != nil {
			return ctrl.Result{}, err
		}
		if f := s.Summary.BeforeStartFailure(); f != nil {
			s.Failure = f
			return ctrl.Result{}, nil
		}
	}
	return s.WaitOrFail(s.ProvisioningDeadline(), recheck, v1alpha1.PhaseProvisioning, v1alpha1.ReasonWaitingForTarget,
		v1alpha1.ReasonTargetNotReady, notReady, "; raise spec.timeouts.provisioning if the target needs longer"), nil
}

// provisionTarget creates the target's namespace (unless it shares the admin's), quota and
// policy (before any pod), workloads and services, each once.
func (r *Stage) provisionTarget(ctx context.Context, s *decide.Scope) (ctrl.Result, error) {
	objs := s.Desired
	if !s.SharedTarget {
		if wait, err := r.provisionNamespace(ctx, s); err != nil || !wait.IsZero() || s.Failure != nil {
			return wait, err
		}
	}
	fence := []client.Object{objs.NetworkPolicy}
	if objs.Quota != nil { // none in a shared namespace
		fence = append([]client.Object{objs.Quota}, fence...)
	}
	for _, o := range fence {
		if _, err := createTargetObject(ctx, r.Client, s, o); err != nil || s.Failure != nil {
			return ctrl.Result{}, err
		}
	}
	if wait, err := r.copyPullSecrets(ctx, s); err != nil || !wait.IsZero() || s.Failure != nil {
		return wait, err
	}
	for _, d := range objs.Deployments {
		wantPodLevel := d.Spec.Template.Spec.Resources != nil
		created, err := createTargetObject(ctx, r.Client, s, d)
		if err != nil || s.Failure != nil {
			return ctrl.Result{}, err
		}
		if wantPodLevel && created && d.Spec.Template.Spec.Resources == nil {
			if err := r.splitProfileEvenly(ctx, s, d); err != nil {
				return ctrl.Result{}, err
			}
		}
	}
	for _, svc := range objs.Services {
		if _, err := createTargetObject(ctx, r.Client, s, svc); err != nil || s.Failure != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, nil
}

// createTargetObject creates one of the target's objects once. Fields copied from the spec into
// pods as Kubernetes types (env, probes, volumes, affinity) are checked by the API server, not
// again at admission (CEL cannot afford it): a refusal, for an invalid field or by an admission
// policy, does not heal by retrying, so it ends the run InvalidTarget with the server's words.
func createTargetObject(ctx context.Context, c client.Client, s *decide.Scope, obj client.Object) (bool, error) {
	created, err := rc.CreateOrGetCreated(ctx, c, obj)
	if err == nil && s.SharedTarget && !target.OwnedBy(obj, s.Run) {
		s.Fail(v1alpha1.ReasonTargetNamespaceConflict, admit.SharedConflict(s, obj))
		return false, nil
	}
	if apierrors.IsInvalid(err) || apierrors.IsForbidden(err) {
		s.Fail(v1alpha1.ReasonInvalidTarget, fmt.Sprintf("the API server refused the target's %s %s: %v; "+
			"fix the spec.target field it names, or ask your admin about the policy that refused it",
			reflect.TypeOf(obj).Elem().Name(), obj.GetName(), err))
		return false, nil
	}
	return created, err
}

// provisionNamespace creates the run's own target namespace, or finds the one it made, and only
// then writes it into status.targetNamespace, which cleanup trusts. A namespace of that name
// that is not provably this run's (target.OwnedBy: its UID) is never used nor touched: the run
// fails TargetNamespaceConflict, or, if it is going away or an earlier TestRun of this name
// left it (its finalizer or the orphan sweeper removes it), waits for it until the deadline.
func (r *Stage) provisionNamespace(ctx context.Context, s *decide.Scope) (ctrl.Result, error) {
	run, key := s.Run, client.ObjectKey{Name: s.TargetNS}
	// Read around the cache: a namespace of that name that is not fleetbench's has no labels.
	ns := &corev1.Namespace{}
	err := r.APIReader.Get(ctx, key, ns)
	if apierrors.IsNotFound(err) {
		if err := r.copyTenantLabels(ctx, s); err != nil {
			return ctrl.Result{}, err
		}
		if err = r.Create(ctx, s.Desired.Namespace); err == nil {
			s.Decided.TargetNamespace = s.TargetNS
			return ctrl.Result{}, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return ctrl.Result{}, err
		}
		err = r.APIReader.Get(ctx, key, ns) // made meanwhile: by whom?
	}
	if apierrors.IsNotFound(err) {
		return rc.After(time.Second), nil // gone again: the next reconcile makes it
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	owned := target.OwnedBy(ns, run)
	switch {
	case owned && ns.DeletionTimestamp.IsZero():
		s.Decided.TargetNamespace = s.TargetNS
		return ctrl.Result{}, nil
	case !ns.DeletionTimestamp.IsZero() || (ns.Labels[naming.LabelTestRunNS] == run.Namespace && ns.Labels[naming.LabelTestRun] == run.Name):
		return s.WaitOrFail(s.ProvisioningDeadline(), 2*time.Second, v1alpha1.PhaseProvisioning, v1alpha1.ReasonTargetNamespaceTerminating,
			v1alpha1.ReasonTargetNamespaceConflict, fmt.Sprintf("namespace %s, left by an earlier TestRun of this name (or being deleted), is still there", s.TargetNS),
			"; it was not touched: once it is gone (the operator removes an earlier run's namespace after a grace), create this TestRun again"), nil
	}
	s.Fail(v1alpha1.ReasonTargetNamespaceConflict, fmt.Sprintf("namespace %s exists and was not made for this TestRun (it does not carry this TestRun's UID in label %s); "+
		"nothing in it was touched: rename the TestRun, or ask your admin whose namespace it is", s.TargetNS, naming.LabelTestRunUID))
	return ctrl.Result{}, nil
}

// copyTenantLabels gives the namespace about to be made the admin's chosen labels of the
// run's own namespace (--propagate-namespace-labels), read live: they are copied once, here,
// and a later change of the tenant's labels is not followed.
func (r *Stage) copyTenantLabels(ctx context.Context, s *decide.Scope) error {
	if len(r.PropagateNamespaceLabels) == 0 {
		return nil
	}
	tenant := &corev1.Namespace{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Name: s.Run.Namespace}, tenant); err != nil {
		return err
	}
	target.CopyTenantLabels(s.Desired.Namespace, tenant, r.PropagateNamespaceLabels)
	return nil
}

// targetNotReady says which target workload is not available yet, or "".
func (r *Stage) targetNotReady(ctx context.Context, want []*appsv1.Deployment) (string, error) {
	for _, d := range want {
		got := &appsv1.Deployment{}
		if err := r.Get(ctx, client.ObjectKeyFromObject(d), got); err != nil {
			return "", err
		}
		if got.Status.ReadyReplicas < 1 {
			msg := fmt.Sprintf("target workload %s/%s is not Ready", got.Namespace, got.Name)
			for _, c := range got.Status.Conditions {
				// A pod the quota refuses shows only here, e.g. components asking more than the profile.
				if c.Type == appsv1.DeploymentReplicaFailure && c.Status == corev1.ConditionTrue {
					msg += ": " + c.Message
				}
			}
			return msg, nil
		}
	}
	return "", nil
}

// targetPodHint says why a target pod is not Ready yet, as the kubelet and scheduler report it:
// a pull error, a crash loop, no node with room.
func targetPodHint(pods []corev1.Pod) string {
	for i := range pods {
		if why := decide.PendingWhy(&pods[i]); why != "" {
			return fmt.Sprintf(" (pod %s: %s)", pods[i].Name, why)
		}
	}
	return ""
}

// targetStuck finds a target pod that no amount of waiting starts, and says why and what to
// do: its image is not on the node, or the kubelet will not run its image as root (or as a user
// name it cannot check) while the pod says runAsNonRoot.
func targetStuck(pods []corev1.Pod) (reason, message string) {
	for i := range pods {
		pod := &pods[i]
		if problem := decide.ImageProblem(pod); problem != "" {
			return v1alpha1.ReasonTargetImageNotPresent, fmt.Sprintf("target pod %s: %s; load the image onto the nodes or fix the component's image", pod.Name, problem)
		}
		for _, cs := range pod.Status.ContainerStatuses {
			if w := cs.State.Waiting; w != nil && w.Reason == "CreateContainerConfigError" && strings.Contains(w.Message, "runAsNonRoot") {
				return v1alpha1.ReasonTargetRunsAsRoot, fmt.Sprintf("target pod %s: container %s: %s; the restricted Pod Security level runs components as non-root: "+
					"set the component's runAsUser to a non-zero uid its image works with, or spec.target.podSecurity: baseline", pod.Name, cs.Name, w.Message)
			}
		}
	}
	return "", ""
}

// splitProfileEvenly handles a cluster whose API server dropped pod.spec.resources from a
// Deployment it just created (its PodLevelResources feature is off): the pod would run with no
// limit at all. From now on targets split the profile among containers; d is patched to that.
func (r *Stage) splitProfileEvenly(ctx context.Context, s *decide.Scope, d *appsv1.Deployment) error {
	r.PodLevelDropped.Store(true)
	r.Recorder.Eventf(s.Run, nil, corev1.EventTypeWarning, "PodLevelResourcesUnavailable", "Provision",
		"the cluster does not keep pod-level resources; the profile is split evenly among the target's containers")
	r.BuildTarget(s)
	if s.DesiredErr != nil {
		return s.DesiredErr
	}
	for _, want := range s.Desired.Deployments {
		if want.Name != d.Name {
			continue
		}
		patch := client.MergeFrom(d.DeepCopy())
		d.Spec.Template.Spec.Containers = want.Spec.Template.Spec.Containers
		return r.Patch(ctx, d, patch)
	}
	return nil
}

// targetScheduled: every target workload has a pod on a node.
func targetScheduled(deployments []*appsv1.Deployment, pods []corev1.Pod) bool {
	for _, d := range deployments {
		component := d.Spec.Template.Labels[naming.LabelComponent]
		if !slices.ContainsFunc(pods, func(p corev1.Pod) bool {
			return p.Spec.NodeName != "" && p.Labels[naming.LabelComponent] == component
		}) {
			return false
		}
	}
	return len(deployments) > 0
}
