package controllers

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/naming"
	"fleetbench.dev/fleetbench/pkg/report"
	"fleetbench.dev/fleetbench/pkg/results"
	"fleetbench.dev/fleetbench/pkg/runners"
	"fleetbench.dev/fleetbench/pkg/target"
)

// k6 exit code for failed thresholds: the run itself worked.
const exitThresholdsFailed = 99

// imageMissing are waiting reasons that no amount of waiting fixes.
var imageMissing = map[string]bool{"ErrImageNeverPull": true, "InvalidImageName": true}

func (r *TestRunReconciler) timeout(spec v1alpha1.Duration, fallback time.Duration) time.Duration {
	if d, err := time.ParseDuration(string(spec)); err == nil && spec != "" {
		return d
	}
	return fallback
}

func (r *TestRunReconciler) timeouts(run *v1alpha1.TestRun) v1alpha1.TimeoutsSpec {
	if run.Spec.Timeouts != nil {
		return *run.Spec.Timeouts
	}
	return v1alpha1.TimeoutsSpec{}
}

// reconcileProfile finds the Profile that sizes the target. A missing one may still be
// coming (GitOps applies in any order): wait for it, until the provisioning deadline.
func (r *TestRunReconciler) reconcileProfile(ctx context.Context, s *scope) error {
	run := s.run
	if run.Spec.Target.External != nil && run.Spec.Profile == "" {
		return nil
	}
	profile := &v1alpha1.Profile{}
	err := r.Get(ctx, client.ObjectKey{Name: strings.ToLower(run.Spec.Profile)}, profile)
	if apierrors.IsNotFound(err) {
		deadline := run.CreationTimestamp.Add(r.timeout(r.timeouts(run).Provisioning, r.Timeouts.Provisioning))
		msg := fmt.Sprintf("Profile %q does not exist; create it or fix spec.profile (kubectl get profiles)", run.Spec.Profile)
		if !s.now.Before(deadline) {
			r.fail(ctx, s, "ProfileNotFound", msg)
			return nil
		}
		r.setPhase(s, v1alpha1.PhasePending, "ProfileNotFound", msg+"; waiting until "+deadline.UTC().Format(time.RFC3339))
		s.settle(deadline.Sub(s.now))
		return nil
	}
	if err != nil {
		return err
	}
	s.profile = profile
	return nil
}

// reconcileTarget provisions the target and waits for it to be Ready.
func (r *TestRunReconciler) reconcileTarget(ctx context.Context, s *scope) error {
	run := s.run
	if run.Spec.Target.External != nil {
		setCondition(s, v1alpha1.ConditionTargetReady, metav1.ConditionTrue, "External", "the target is external: "+run.Spec.Target.External.URL)
		return nil
	}
	s.targetNS = naming.TargetNamespace(run.Namespace, run.Name)
	run.Status.TargetNamespace = s.targetNS
	if meta.IsStatusConditionTrue(run.Status.Conditions, v1alpha1.ConditionStarted) {
		// Once the load runs, the target is measured, not re-provisioned.
		return nil
	}
	objs, err := target.Build(run, &s.profile.Spec, s.targetNS, r.targetOptions())
	if err != nil {
		r.fail(ctx, s, "InvalidTarget", err.Error())
		return nil
	}
	if run.Status.Phase == v1alpha1.PhasePending {
		r.setPhase(s, v1alpha1.PhaseProvisioning, "Provisioning", "provisioning the target in namespace "+s.targetNS)
	}

	ns := &corev1.Namespace{}
	if err := r.Get(ctx, client.ObjectKey{Name: s.targetNS}, ns); err == nil {
		if ns.Labels[naming.LabelTestRunNS] != run.Namespace || ns.Labels[naming.LabelTestRun] != run.Name {
			r.fail(ctx, s, "TargetNamespaceConflict", fmt.Sprintf("namespace %s exists and does not belong to this TestRun; delete it or rename the TestRun", s.targetNS))
			return nil
		}
		if !ns.DeletionTimestamp.IsZero() {
			// A TestRun of the same name was deleted a moment ago; its namespace is going.
			r.setPhase(s, v1alpha1.PhaseProvisioning, "TargetNamespaceTerminating", "waiting for namespace "+s.targetNS+" of an earlier TestRun to be deleted")
			s.settle(2 * time.Second)
			return nil
		}
	} else if err := createOrGet(ctx, r.Client, objs.Namespace); err != nil {
		return err
	}
	// Quota and policy first: they must hold before any target pod exists.
	for _, o := range []client.Object{objs.Quota, objs.NetworkPolicy} {
		if err := createOrGet(ctx, r.Client, o); err != nil {
			return err
		}
	}
	for _, d := range objs.Deployments {
		wantPodLevel := d.Spec.Template.Spec.Resources != nil
		created, err := createOrGetCreated(ctx, r.Client, d)
		if err != nil {
			return err
		}
		if wantPodLevel && created && d.Spec.Template.Spec.Resources == nil {
			if err := r.splitProfileEvenly(ctx, s, d); err != nil {
				return err
			}
		}
	}
	for _, svc := range objs.Services {
		if err := createOrGet(ctx, r.Client, svc); err != nil {
			return err
		}
	}

	notReady, err := r.targetNotReady(ctx, objs.Deployments)
	if err != nil {
		return err
	}
	if notReady == "" {
		setCondition(s, v1alpha1.ConditionTargetReady, metav1.ConditionTrue, "Ready", "every target component is Ready")
		return nil
	}
	pods, _ := r.targetPods(ctx, s) // only for the hints below: a failed list just gives none
	notReady += targetPodHint(pods)
	setCondition(s, v1alpha1.ConditionTargetReady, metav1.ConditionFalse, "NotReady", notReady)
	deadline := run.CreationTimestamp.Add(r.timeout(r.timeouts(run).Provisioning, r.Timeouts.Provisioning))
	if reason, msg := targetStuck(pods); reason != "" {
		r.fail(ctx, s, reason, msg)
		return nil
	}
	if !s.now.Before(deadline) {
		r.fail(ctx, s, "TargetNotReady", notReady+"; raise spec.timeouts.provisioning if the target needs longer")
		return nil
	}
	r.setPhase(s, v1alpha1.PhaseProvisioning, "WaitingForTarget", notReady)
	s.settle(deadline.Sub(s.now))
	return nil
}

// targetNotReady says which target workload is not available yet, or "".
func (r *TestRunReconciler) targetNotReady(ctx context.Context, want []*appsv1.Deployment) (string, error) {
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
		pod := &pods[i]
		if hint := schedulingHint(pod); hint != "" {
			return " (pod " + pod.Name + ": " + strings.TrimSuffix(strings.TrimPrefix(hint, " ("), ")") + ")"
		}
		for _, cs := range pod.Status.ContainerStatuses {
			if w := cs.State.Waiting; w != nil && w.Reason != "" && w.Reason != "ContainerCreating" {
				return fmt.Sprintf(" (pod %s container %s: %s %s)", pod.Name, cs.Name, w.Reason, strings.TrimSpace(w.Message))
			}
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
		if problem := imageProblem(pod); problem != "" {
			return "TargetImageNotPresent", fmt.Sprintf("target pod %s: %s; load the image onto the nodes or fix the component's image", pod.Name, problem)
		}
		for _, cs := range pod.Status.ContainerStatuses {
			if w := cs.State.Waiting; w != nil && w.Reason == "CreateContainerConfigError" && strings.Contains(w.Message, "runAsNonRoot") {
				return "TargetRunsAsRoot", fmt.Sprintf("target pod %s: container %s: %s; the restricted Pod Security level runs components as non-root: "+
					"set the component's runAsUser to a non-zero uid its image works with, or spec.target.podSecurity: baseline", pod.Name, cs.Name, w.Message)
			}
		}
	}
	return "", ""
}

func imageProblem(pod *corev1.Pod) string {
	for _, cs := range pod.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil && imageMissing[w.Reason] {
			return strings.TrimSpace(fmt.Sprintf("image %s: %s %s", cs.Image, w.Reason, w.Message))
		}
	}
	return ""
}

// reconcileScript makes the ConfigMap with the inline script and the k6 config, and checks a
// referenced script ConfigMap exists.
func (r *TestRunReconciler) reconcileScript(ctx context.Context, s *scope) error {
	run := s.run
	cfg, err := runners.LoadConfig(&run.Spec, run.Name)
	if err != nil {
		r.fail(ctx, s, "InvalidLoad", err.Error())
		return nil
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: naming.ScriptConfigMap(run.Name), Namespace: run.Namespace,
			Labels: map[string]string{naming.LabelTestRun: run.Name, naming.LabelRole: naming.RoleScript}},
		Data: map[string]string{},
	}
	if run.Spec.Script.Inline != "" {
		cm.Data[runners.ScriptKey] = run.Spec.Script.Inline
	}
	if cfg != nil {
		cm.Data[runners.ConfigKey] = string(cfg)
	}
	if err := controllerutil.SetControllerReference(run, cm, r.Scheme); err != nil {
		return err
	}
	if err := createOrGet(ctx, r.Client, cm); err != nil {
		return err
	}
	if ref := run.Spec.Script.ConfigMap; ref != nil {
		user := &corev1.ConfigMap{}
		err := r.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: ref.Name}, user)
		file := ref.File
		if file == "" {
			file = runners.ScriptKey
		}
		missing := ""
		switch {
		case apierrors.IsNotFound(err):
			missing = fmt.Sprintf("ConfigMap %s holding the script does not exist", ref.Name)
		case err != nil:
			return err
		case user.Data[file] == "":
			missing = fmt.Sprintf("ConfigMap %s has no entry %q; set spec.script.configMap.file to one of its keys", ref.Name, file)
		}
		if missing != "" {
			deadline := run.CreationTimestamp.Add(r.timeout(r.timeouts(run).Provisioning, r.Timeouts.Provisioning))
			if !s.now.Before(deadline) {
				r.fail(ctx, s, "ScriptNotFound", missing)
				return nil
			}
			r.setPhase(s, run.Status.Phase, "WaitingForScript", missing)
			s.settle(min(deadline.Sub(s.now), 10*time.Second))
		}
	}
	return nil
}

// loadRunners reads the runner Jobs and pods of the TestRun from the cache.
func (r *TestRunReconciler) loadRunners(ctx context.Context, s *scope) error {
	run := s.run
	n := int(run.Spec.Parallelism)
	s.runners = make([]runnerState, n)
	for i := range s.runners {
		s.runners[i].index = i
	}
	selector := client.MatchingLabels(runners.RunnerLabels(run))
	var jobs batchv1.JobList
	if err := r.List(ctx, &jobs, client.InNamespace(run.Namespace), selector); err != nil {
		return err
	}
	for i := range jobs.Items {
		if idx, ok := runnerIndex(&jobs.Items[i], n); ok {
			s.runners[idx].job = &jobs.Items[i]
		}
	}
	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.InNamespace(run.Namespace), selector); err != nil {
		return err
	}
	for i := range pods.Items {
		pod := &pods.Items[i]
		if idx, ok := runnerIndex(pod, n); ok {
			// A Job never retries, so there is one pod per runner; keep the newest if not.
			if cur := s.runners[idx].pod; cur == nil || cur.CreationTimestamp.Before(&pod.CreationTimestamp) {
				s.runners[idx].pod = pod
			}
		}
	}
	return nil
}

func runnerIndex(o metav1.Object, n int) (int, bool) {
	idx, err := strconv.Atoi(o.GetLabels()[naming.LabelRunnerIndex])
	return idx, err == nil && idx >= 0 && idx < n
}

// reconcileRunners creates the runner Jobs and waits until all are Ready and paused.
func (r *TestRunReconciler) reconcileRunners(ctx context.Context, s *scope) error {
	run := s.run
	if err := r.loadRunners(ctx, s); err != nil {
		return err
	}
	r.countRunners(s)
	if meta.IsStatusConditionTrue(run.Status.Conditions, v1alpha1.ConditionStarted) {
		return nil
	}
	var env []corev1.EnvVar
	if run.Spec.Target.External != nil {
		env = target.ExternalEnv(run.Spec.Target.External)
	} else {
		objs, err := target.Build(run, &s.profile.Spec, s.targetNS, r.targetOptions())
		if err != nil {
			return err
		}
		env = objs.Env
	}
	deadline := r.runnersReadyDeadline(s)
	opts := runners.JobOptions{
		Image:           r.RunnerImage,
		ConfigMap:       naming.ScriptConfigMap(run.Name),
		HasConfig:       run.Spec.Load != nil,
		TargetEnv:       env,
		TargetNamespace: s.targetNS,
		// The kubelet ends a runner the operator has lost track of.
		ActiveDeadlineSeconds: int64((r.runDeadlineAfterStart(run) + r.timeout(r.timeouts(run).RunnersReady, r.Timeouts.RunnersReady)).Seconds()),
	}
	if run.Status.Phase == v1alpha1.PhasePending || run.Status.Phase == v1alpha1.PhaseProvisioning {
		r.setPhase(s, v1alpha1.PhaseStarting, "CreatingRunners", fmt.Sprintf("starting %d runners paused", len(s.runners)))
	}
	for i := range s.runners {
		if s.runners[i].job != nil {
			continue
		}
		job := runners.Job(run, i, len(s.runners), opts)
		if err := controllerutil.SetControllerReference(run, job, r.Scheme); err != nil {
			return err
		}
		if err := createOrGet(ctx, r.Client, job); err != nil {
			if apierrors.IsForbidden(err) || apierrors.IsInvalid(err) {
				r.fail(ctx, s, "RunnerRejected", fmt.Sprintf("runner Job %s was refused: %v", job.Name, err))
				return nil
			}
			return err
		}
		s.runners[i].job = job
	}

	notReady := []string{}
	for _, rs := range s.runners {
		pod := rs.pod
		switch {
		case pod == nil:
			notReady = append(notReady, fmt.Sprintf("runner %d has no pod yet%s", rs.index, jobHint(rs.job)))
		case terminated(pod):
			if exit, _ := exitOf(pod); exit == 0 {
				// A paused k6 never exits 0 by itself: this runner was started by an earlier
				// reconcile whose status write was lost.
				continue
			}
			r.fail(ctx, s, "RunnerFailedBeforeStart", fmt.Sprintf("runner %s ended before the start: %s", pod.Name, terminationText(pod)))
			return nil
		case imageProblem(pod) != "":
			r.fail(ctx, s, "RunnerImageNotPresent", fmt.Sprintf("runner %s: %s; import the runner image or set spec.runner.image", pod.Name, imageProblem(pod)))
			return nil
		case !podReady(pod):
			notReady = append(notReady, fmt.Sprintf("runner %s is not Ready%s", pod.Name, schedulingHint(pod)))
		}
	}
	if len(notReady) == 0 {
		setCondition(s, v1alpha1.ConditionRunnersReady, metav1.ConditionTrue, "Ready", fmt.Sprintf("all %d runners are Ready and paused", len(s.runners)))
		return nil
	}
	msg := strings.Join(notReady, "; ")
	setCondition(s, v1alpha1.ConditionRunnersReady, metav1.ConditionFalse, "NotReady", msg)
	if !s.now.Before(deadline) {
		reason := "RunnersNotReady"
		if strings.Contains(msg, "Unschedulable") {
			reason = "RunnerUnschedulable"
		} else if strings.Contains(msg, "has no pod") {
			reason = "RunnerNotCreated"
		}
		r.fail(ctx, s, reason, msg+"; raise spec.timeouts.runnersReady, free capacity or quota, or lower spec.parallelism")
		return nil
	}
	r.setPhase(s, v1alpha1.PhaseStarting, "WaitingForRunners", msg)
	s.settle(deadline.Sub(s.now))
	return nil
}

// runnersReadyDeadline counts from when the target became Ready (or creation for an external one).
func (r *TestRunReconciler) runnersReadyDeadline(s *scope) time.Time {
	from := s.run.CreationTimestamp.Time
	if c := meta.FindStatusCondition(s.run.Status.Conditions, v1alpha1.ConditionTargetReady); c != nil && c.Status == metav1.ConditionTrue {
		from = c.LastTransitionTime.Time
	}
	return from.Add(r.timeout(r.timeouts(s.run).RunnersReady, r.Timeouts.RunnersReady))
}

// reconcileStart un-pauses every runner at once and records the spread of their acknowledgements.
func (r *TestRunReconciler) reconcileStart(ctx context.Context, s *scope) error {
	run := s.run
	if meta.IsStatusConditionTrue(run.Status.Conditions, v1alpha1.ConditionStarted) {
		return nil
	}
	if run.Status.Target == nil {
		err := r.measureBefore(ctx, s)
		ready := meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionTargetReady)
		if errors.Is(err, errNotScrapedYet) && ready != nil && s.now.Before(ready.LastTransitionTime.Add(beforeSampleGrace)) {
			r.setPhase(s, v1alpha1.PhaseStarting, "WaitingForTargetSample", err.Error()+"; the load starts once the idle target is sampled")
			s.settle(2 * time.Second)
			return nil
		}
	}
	type ack struct {
		at  time.Time
		err error
	}
	acks := make([]ack, len(s.runners))
	var wg sync.WaitGroup
	for i, rs := range s.runners {
		if terminated(rs.pod) {
			continue // started already, see reconcileRunners
		}
		wg.Add(1)
		go func(i int, pod *corev1.Pod) {
			defer wg.Done()
			err := r.RunnerAPI.Resume(ctx, pod)
			acks[i] = ack{at: time.Now(), err: err}
		}(i, rs.pod)
	}
	wg.Wait()
	var first, last time.Time
	for i, a := range acks {
		if a.err != nil {
			// Runners that did start are not paused again; the rest are retried shortly.
			setCondition(s, v1alpha1.ConditionStarted, metav1.ConditionFalse, "ResumeFailed", fmt.Sprintf("runner %d: %v", i, a.err))
			if !s.now.Before(r.runnersReadyDeadline(s)) {
				r.fail(ctx, s, "StartFailed", fmt.Sprintf("could not start runner %d: %v", i, a.err))
				return nil
			}
			s.settle(time.Second)
			return nil
		}
		if a.at.IsZero() {
			continue
		}
		if first.IsZero() || a.at.Before(first) {
			first = a.at
		}
		if a.at.After(last) {
			last = a.at
		}
	}
	if first.IsZero() {
		first, last = s.now, s.now
	}
	skew := last.Sub(first)
	startSkew.Observe(skew.Seconds())
	offsets := make([]string, len(acks))
	for i, a := range acks {
		if !a.at.IsZero() {
			offsets[i] = a.at.Sub(first).String()
		}
	}
	logf.FromContext(ctx).Info("runners started", "first", first, "skew", skew, "acknowledgedAfterFirst", offsets)
	started := metav1.NewTime(first)
	run.Status.StartTime = &started
	if run.Status.Runners != nil {
		run.Status.Runners.StartSkew = skew.Round(time.Microsecond).String()
	}
	setCondition(s, v1alpha1.ConditionStarted, metav1.ConditionTrue, "Started", fmt.Sprintf("%d runners started within %s", len(s.runners), skew.Round(time.Microsecond)))
	r.setPhase(s, v1alpha1.PhaseRunning, "Running", fmt.Sprintf("%d runners started within %s", len(s.runners), skew.Round(time.Microsecond)))
	return nil
}

// runDeadlineAfterStart is how long the load may run.
func (r *TestRunReconciler) runDeadlineAfterStart(run *v1alpha1.TestRun) time.Duration {
	if t := r.timeouts(run).Run; t != "" {
		return r.timeout(t, r.Timeouts.RunUnknown)
	}
	if expected := runners.ExpectedDuration(&run.Spec); expected > 0 {
		return expected + r.Timeouts.RunGrace
	}
	return r.Timeouts.RunUnknown
}

// reconcileRun waits for every runner to end. A runner that fails stops the others: the
// load it carried is gone, and the rest would measure something nobody asked for.
func (r *TestRunReconciler) reconcileRun(ctx context.Context, s *scope) error {
	run := s.run
	running, failed := 0, ""
	for _, rs := range s.runners {
		switch {
		case rs.pod == nil && jobFailed(rs.job) != "":
			failed = fmt.Sprintf("runner %d was lost: %s", rs.index, jobFailed(rs.job))
		case rs.pod == nil || !terminated(rs.pod):
			running++
		default:
			if exit, _ := exitOf(rs.pod); exit != 0 {
				failed = fmt.Sprintf("runner %s %s", rs.pod.Name, terminationText(rs.pod))
			}
		}
	}
	if running == 0 {
		return nil
	}
	deadline := run.Status.StartTime.Add(r.runDeadlineAfterStart(run))
	if failed != "" || !s.now.Before(deadline) {
		why := failed
		if why == "" {
			why = fmt.Sprintf("the load ran past its deadline %s", deadline.UTC().Format(time.RFC3339))
		}
		r.stopRunners(ctx, s)
		r.setPhase(s, v1alpha1.PhaseRunning, "StoppingRunners", why+"; stopping the other runners")
		// Stopped runners flush their results and exit; past a minute more they are deleted.
		if !s.now.Before(deadline.Add(time.Minute)) {
			r.deleteRunningJobs(ctx, s)
		}
		s.settle(10 * time.Second)
		return nil
	}
	r.setPhase(s, v1alpha1.PhaseRunning, "Running", fmt.Sprintf("%d of %d runners running", running, len(s.runners)))
	r.measureDuring(ctx, s)
	s.settle(min(deadline.Sub(s.now), r.nextSample(s)))
	return nil
}

// reconcileCollect reads every runner's result envelope from its log, merges them, evaluates
// the global thresholds and ends the run.
func (r *TestRunReconciler) reconcileCollect(ctx context.Context, s *scope) error {
	run := s.run
	log := logf.FromContext(ctx)
	if run.Status.Phase != v1alpha1.PhaseCollecting {
		r.setPhase(s, v1alpha1.PhaseCollecting, "Collecting", "reading and merging the runners' results")
	}
	ended := lastEnd(s)
	deadline := ended.Add(r.timeout(r.timeouts(run).Collection, r.Timeouts.Collection))

	var envs []results.Envelope
	var problems []string
	for _, rs := range s.runners {
		if rs.pod == nil {
			problems = append(problems, fmt.Sprintf("runner %d has no pod to read", rs.index))
			continue
		}
		tail, err := r.Logs.Tail(ctx, rs.pod, runners.ContainerName, runnerLogLines, false)
		if err == nil {
			var env results.Envelope
			if env, err = results.ExtractEnvelope(tail); err == nil {
				envs = append(envs, env)
				continue
			}
		}
		problems = append(problems, fmt.Sprintf("runner %s: %v", rs.pod.Name, err))
	}
	if len(problems) > 0 && s.now.Before(deadline) && len(envs) < len(s.runners) && !anyRunnerFailed(s) {
		// Logs can lag the container's exit; try again until the deadline.
		setCondition(s, v1alpha1.ConditionResultsCollected, metav1.ConditionFalse, "Reading", strings.Join(problems, "; "))
		s.settle(2 * time.Second)
		return nil
	}

	if err := r.measureAfter(ctx, s); err != nil {
		return err
	}

	var outcome report.Outcome
	if len(envs) > 0 {
		summary, err := results.Merge(envs...)
		if err != nil {
			problems = append(problems, "merging: "+err.Error())
		} else {
			outcome = report.Build(&summary, run.Spec.Thresholds, len(s.runners))
			run.Status.Results = outcome.Results
			run.Status.GeneratorBound = outcome.GeneratorBound
			run.Status.GeneratorBoundReason = outcome.GeneratorBoundReason
		}
	}
	collectionDuration.Observe(s.now.Sub(ended).Seconds())
	if run.Status.Results != nil && len(problems) > 0 {
		run.Status.Results.Partial = true
	}
	if len(problems) == 0 {
		setCondition(s, v1alpha1.ConditionResultsCollected, metav1.ConditionTrue, "Collected", fmt.Sprintf("merged the results of %d runners", len(envs)))
	} else {
		setCondition(s, v1alpha1.ConditionResultsCollected, metav1.ConditionFalse, "Partial", strings.Join(problems, "; "))
		log.Info("results are partial", "problems", problems)
	}

	// The run failed if a runner did; thresholds only decide the verdict of a run that worked.
	runDeadline := time.Time{}
	if run.Status.StartTime != nil {
		runDeadline = run.Status.StartTime.Add(r.runDeadlineAfterStart(run))
	}
	if reason, failure := runnerFailure(s, runDeadline); reason != "" {
		run.Status.Verdict = v1alpha1.VerdictFailed
		r.fail(ctx, s, reason, failure+"; the results cover what the runners measured until then and are marked partial")
		if run.Status.Results != nil {
			run.Status.Results.Partial = true
		}
		return nil
	}
	if outcome.Results == nil {
		r.fail(ctx, s, "NoResults", "no runner left a readable result envelope: "+strings.Join(problems, "; "))
		return nil
	}
	run.Status.Capacity = report.Capacity(outcome.Results, &run.Spec, run.Status.Capacity)
	run.Status.Verdict = outcome.Verdict
	if problems := report.TargetProblems(run.Status.Target, &run.Spec); len(problems) > 0 {
		run.Status.Verdict = v1alpha1.VerdictFailed
		outcome.FailedThresholds = append(outcome.FailedThresholds, problems...)
	}
	if len(outcome.FailedThresholds) > 0 {
		setCondition(s, v1alpha1.ConditionThresholdsPassed, metav1.ConditionFalse, "ThresholdsFailed", strings.Join(outcome.FailedThresholds, "; "))
	} else {
		setCondition(s, v1alpha1.ConditionThresholdsPassed, metav1.ConditionTrue, "Passed", fmt.Sprintf("%d thresholds held on the merged results", len(outcome.Results.Thresholds)))
	}
	now := metav1.NewTime(s.now)
	run.Status.CompletionTime = &now
	msg := fmt.Sprintf("verdict %s: %d requests, %s req/s", run.Status.Verdict, outcome.Results.Requests.Total, outcome.Results.Throughput.RequestsPerSecond)
	if it := outcome.Results.Iterations; outcome.Results.Requests.Total == 0 && it != nil && it.Total > 0 {
		// A script that speaks no HTTP (XMPP over WebSocket, say): its unit of work is the iteration.
		msg = fmt.Sprintf("verdict %s: %d iterations, no HTTP requests", run.Status.Verdict, it.Total)
		if c := outcome.Results.Checks; c != nil {
			msg += fmt.Sprintf(", checks %d passed / %d failed", c.Passed, c.Failed)
		}
	}
	if len(outcome.FailedThresholds) > 0 {
		msg += "; failed: " + strings.Join(outcome.FailedThresholds, "; ")
	}
	if outcome.GeneratorBound {
		msg += "; the load generator was the limit: " + outcome.GeneratorBoundReason
	}
	r.setPhase(s, v1alpha1.PhaseSucceeded, "Completed", msg)
	s.settle(r.ttlLeft(s))
	return nil
}

// stopRunners asks every runner still running to stop, in parallel, best effort.
func (r *TestRunReconciler) stopRunners(ctx context.Context, s *scope) {
	var wg sync.WaitGroup
	for _, rs := range s.runners {
		if rs.pod == nil || terminated(rs.pod) || rs.pod.Status.PodIP == "" {
			continue
		}
		wg.Add(1)
		go func(pod *corev1.Pod) {
			defer wg.Done()
			if err := r.RunnerAPI.Stop(ctx, pod); err != nil {
				logf.FromContext(ctx).Info("could not stop runner", "pod", pod.Name, "error", err.Error())
			}
		}(rs.pod)
	}
	wg.Wait()
}

func (r *TestRunReconciler) deleteRunningJobs(ctx context.Context, s *scope) {
	for _, rs := range s.runners {
		if rs.job != nil && (rs.pod == nil || !terminated(rs.pod)) {
			_ = r.Delete(ctx, rs.job, client.PropagationPolicy(metav1.DeletePropagationBackground))
		}
	}
}

// countRunners rebuilds status.runners from the pods.
func (r *TestRunReconciler) countRunners(s *scope) {
	c := &v1alpha1.RunnerCounts{Desired: int32(len(s.runners))}
	if old := s.run.Status.Runners; old != nil {
		c.StartSkew = old.StartSkew
	}
	for _, rs := range s.runners {
		switch {
		case rs.pod == nil:
			if jobFailed(rs.job) != "" {
				c.Failed++
			}
		case rs.pod.Status.Phase == corev1.PodSucceeded:
			c.Succeeded++
		case rs.pod.Status.Phase == corev1.PodFailed:
			c.Failed++
		case rs.pod.Status.Phase == corev1.PodRunning:
			c.Running++
			if podReady(rs.pod) {
				c.Ready++
			}
		}
	}
	s.run.Status.Runners = c
}

func terminated(pod *corev1.Pod) bool {
	return pod != nil && (pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed)
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// exitOf is the k6 container's exit code and termination reason (OOMKilled, Error, …).
func exitOf(pod *corev1.Pod) (int32, string) {
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == runners.ContainerName && cs.State.Terminated != nil {
			return cs.State.Terminated.ExitCode, cs.State.Terminated.Reason
		}
	}
	if pod.Status.Phase == corev1.PodFailed {
		// Evicted, or deleted with its node: no container state, still a failure.
		return -1, pod.Status.Reason
	}
	return 0, ""
}

// k6ExitMeaning names k6's documented exit codes.
var k6ExitMeaning = map[int32]string{
	exitThresholdsFailed: "thresholds failed (abortOnFail)",
	103:                  "stopped through the REST API",
	104:                  "invalid k6 configuration",
	105:                  "aborted from outside",
	107:                  "script error",
	108:                  "aborted by the script",
	109:                  "k6 panicked",
}

func terminationText(pod *corev1.Pod) string {
	for _, cs := range pod.Status.InitContainerStatuses {
		if t := cs.State.Terminated; t != nil && t.ExitCode != 0 {
			// e.g. reach-target: the target was not reachable from this runner within 1m0s; …
			return fmt.Sprintf("%s exited with code %d: %s", cs.Name, t.ExitCode, strings.TrimSpace(t.Message))
		}
	}
	exit, reason := exitOf(pod)
	text := fmt.Sprintf("exited with code %d", exit)
	if meaning := k6ExitMeaning[exit]; meaning != "" {
		text += " (" + meaning + ")"
	}
	if reason != "" {
		text += ", reason " + reason
	}
	return text
}

func jobFailed(job *batchv1.Job) string {
	if job == nil {
		return ""
	}
	for _, c := range job.Status.Conditions {
		if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue {
			return c.Reason + ": " + c.Message
		}
	}
	return ""
}

func jobHint(job *batchv1.Job) string {
	if job == nil {
		return ""
	}
	return " (kubectl describe job " + job.Name + " shows why, e.g. a ResourceQuota)"
}

func schedulingHint(pod *corev1.Pod) string {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			return fmt.Sprintf(" (%s: %s)", c.Reason, c.Message)
		}
	}
	if p := imageProblem(pod); p != "" {
		return " (" + p + ")"
	}
	return ""
}

// exitStopped is k6's exit code after a stop through its REST API: the operator did that,
// so such a runner is never the cause of a failure, only a witness of one.
const exitStopped = 103

// anyRunnerFailed: failed runners may never print an envelope, so collection does not wait.
func anyRunnerFailed(s *scope) bool {
	reason, _ := runnerFailure(s, time.Time{})
	return reason != ""
}

// runnerFailure finds why the run failed, from the world, most telling cause first: an OOM
// kill, a lost runner, a runner error, then runners stopped past the run deadline. Exit 99
// (thresholds failed, e.g. abortOnFail) is a verdict, not a failure. deadline zero skips the
// timeout check.
func runnerFailure(s *scope, deadline time.Time) (reason, message string) {
	var lost, errored, stopped string
	for _, rs := range s.runners {
		if rs.pod == nil {
			if why := jobFailed(rs.job); why != "" && lost == "" {
				lost = fmt.Sprintf("runner %d was lost: %s", rs.index, why)
			}
			continue
		}
		exit, why := exitOf(rs.pod)
		switch {
		case why == "OOMKilled":
			return "RunnerOOMKilled", fmt.Sprintf("runner %s was killed for exceeding its memory limit; raise spec.runner.resources.limits.memory or spec.parallelism", rs.pod.Name)
		case exit == -1 && lost == "":
			lost = fmt.Sprintf("runner %s was lost: %s", rs.pod.Name, terminationText(rs.pod))
		case exit != 0 && exit != exitThresholdsFailed && exit != exitStopped && errored == "":
			errored = fmt.Sprintf("runner %s %s", rs.pod.Name, terminationText(rs.pod))
		case exit == exitStopped && stopped == "":
			stopped = rs.pod.Name
		}
	}
	switch {
	case lost != "":
		return "RunnerLost", lost
	case errored != "":
		return "RunnerFailed", errored
	case stopped != "" && !deadline.IsZero() && !s.now.Before(deadline):
		return "RunTimeout", fmt.Sprintf("the load ran past its deadline %s and was stopped; raise spec.timeouts.run", deadline.UTC().Format(time.RFC3339))
	}
	return "", ""
}

// lastEnd is when the last runner's container ended, from pod status; creation time at worst.
func lastEnd(s *scope) time.Time {
	var ends []time.Time
	for _, rs := range s.runners {
		if rs.pod == nil {
			continue
		}
		for _, cs := range rs.pod.Status.ContainerStatuses {
			if t := cs.State.Terminated; t != nil && !t.FinishedAt.IsZero() {
				ends = append(ends, t.FinishedAt.Time)
			}
		}
	}
	if len(ends) == 0 {
		if s.run.Status.StartTime != nil {
			return s.now
		}
		return s.run.CreationTimestamp.Time
	}
	sort.Slice(ends, func(i, j int) bool { return ends[i].Before(ends[j]) })
	return ends[len(ends)-1]
}

// createOrGet creates obj, or loads the existing one of the same name: children have
// deterministic names, so a repeated reconcile finds what an earlier one made.
func createOrGet(ctx context.Context, c client.Client, obj client.Object) error {
	_, err := createOrGetCreated(ctx, c, obj)
	return err
}

// createOrGetCreated is createOrGet that also says whether obj was created now, so obj holds
// what the API server made of this very spec.
func createOrGetCreated(ctx context.Context, c client.Client, obj client.Object) (bool, error) {
	err := c.Create(ctx, obj)
	if apierrors.IsAlreadyExists(err) {
		return false, c.Get(ctx, client.ObjectKeyFromObject(obj), obj)
	}
	return err == nil, err
}

func (r *TestRunReconciler) targetOptions() target.Options {
	return target.Options{PodLevelResources: r.PodLevelResources && !r.podLevelDropped.Load()}
}

// splitProfileEvenly handles a cluster whose API server dropped pod.spec.resources from a
// Deployment it just created (its PodLevelResources feature is off): the pod would run with no
// limit at all. From now on targets split the profile among containers; d is patched to that.
func (r *TestRunReconciler) splitProfileEvenly(ctx context.Context, s *scope, d *appsv1.Deployment) error {
	r.podLevelDropped.Store(true)
	r.Recorder.Eventf(s.run, nil, corev1.EventTypeWarning, "PodLevelResourcesUnavailable", "Provision",
		"the cluster does not keep pod-level resources; the profile is split evenly among the target's containers")
	objs, err := target.Build(s.run, &s.profile.Spec, s.targetNS, r.targetOptions())
	if err != nil {
		return err
	}
	for _, want := range objs.Deployments {
		if want.Name != d.Name {
			continue
		}
		patch := client.MergeFrom(d.DeepCopy())
		d.Spec.Template.Spec.Containers = want.Spec.Template.Spec.Containers
		return r.Patch(ctx, d, patch)
	}
	return nil
}
