package provision

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/controller/testrun/admit"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	"fleetbench.dev/fleetbench/pkg/target"
)

// DefaultPullRetryGrace is how long an image pull may be seen failing before the run gives up on it.
// The kubelet retries after 10 s and 20 s of back-off, so by then it failed at least twice,
// and a transient refusal (a registry's 429 or 5xx, a pull queued behind others) had time to
// heal. What keeps failing that long (an unreachable registry, a wrong name, missing
// credentials) does not heal; waiting out the provisioning timeout would only hide it.
const DefaultPullRetryGrace = time.Minute

// pullFailure is a container waiting because its image cannot be pulled, with the kubelet's
// words; "" if none.
func pullFailure(pod *corev1.Pod) (key, message string) {
	for _, cs := range pod.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil && (w.Reason == "ErrImagePull" || w.Reason == "ImagePullBackOff") {
			return string(pod.UID) + "/" + cs.Name, strings.TrimSpace(fmt.Sprintf("image %s: %s %s", cs.Image, w.Reason, w.Message))
		}
	}
	return "", ""
}

// PullFailures remembers when each container's pull failure was first seen. Pod status keeps
// no count of failures nor their times, so this in-memory record is what measures how long a
// pull has been failing; after an operator restart it starts again, which only waits longer.
type PullFailures struct {
	Grace time.Duration
	mu    sync.Mutex
	since map[string]time.Time
}

// failingFor is how long the pull of key has been seen failing, counting from now on the first call.
func (p *PullFailures) failingFor(key string, now time.Time) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.since == nil || len(p.since) > 10000 { // bounded: entries of pods long gone are dropped
		p.since = map[string]time.Time{}
	}
	first, ok := p.since[key]
	if !ok {
		p.since[key] = now
		return 0
	}
	return now.Sub(first)
}

// GaveUp says whether pod's image pull has been failing for the grace, with the kubelet's
// message; otherwise, how long until that is known (0 when nothing fails).
func (p *PullFailures) GaveUp(pod *corev1.Pod, now time.Time) (message string, recheck time.Duration) {
	key, msg := pullFailure(pod)
	if key == "" {
		return "", 0
	}
	if d := p.failingFor(key, now); d < p.Grace {
		return "", p.Grace - d
	}
	return fmt.Sprintf("%s (still failing after %s of the kubelet's retries)", msg, p.Grace), 0
}

// copyPullSecrets copies spec.target.imagePullSecrets from the TestRun's namespace into the
// target's, before any target pod needs them. Secrets are read and written around the cache
// (the manager caches none), and only dockerconfigjson ones: a TestRun must not be a way to
// copy any Secret of its namespace elsewhere.
func (r *Stage) copyPullSecrets(ctx context.Context, s *decide.Scope) (ctrl.Result, error) {
	run := s.Run
	if len(s.TargetPods) > 0 {
		return ctrl.Result{}, nil // copied before the Deployments that made these pods
	}
	for _, ref := range run.Spec.Target.ImagePullSecrets {
		src := &corev1.Secret{}
		err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: ref.Name}, src)
		switch {
		case apierrors.IsNotFound(err):
			deadline := s.ProvisioningDeadline()
			return s.WaitOrFail(deadline, 10*time.Second, v1alpha1.PhaseProvisioning, v1alpha1.ReasonWaitingForPullSecret, v1alpha1.ReasonPullSecretNotUsable,
				fmt.Sprintf("Secret %s named in spec.target.imagePullSecrets does not exist in namespace %s", ref.Name, run.Namespace),
				"; create it (kubectl create secret docker-registry), or fix spec.target.imagePullSecrets"), nil
		case err != nil:
			return ctrl.Result{}, err
		case src.Type != corev1.SecretTypeDockerConfigJson:
			s.Fail(v1alpha1.ReasonPullSecretNotUsable, fmt.Sprintf("Secret %s named in spec.target.imagePullSecrets is of type %q, not %s: "+
				"only registry credentials are copied into the target's namespace", ref.Name, src.Type, corev1.SecretTypeDockerConfigJson))
			return ctrl.Result{}, nil
		}
		copied := target.PullSecret(run, src, s.TargetNS, r.TargetOptions(s))
		err = r.Create(ctx, copied)
		if apierrors.IsAlreadyExists(err) && s.SharedTarget {
			// Another run's copy must not be used, nor later deleted as this run's.
			if err = r.APIReader.Get(ctx, client.ObjectKeyFromObject(copied), copied); err == nil && !target.OwnedBy(copied, run) {
				s.Fail(v1alpha1.ReasonTargetNamespaceConflict, admit.SharedConflict(s, copied))
				return ctrl.Result{}, nil
			}
		}
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, nil
}
