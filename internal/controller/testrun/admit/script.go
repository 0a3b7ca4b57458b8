package admit

import (
	"context"
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	"fleetbench.dev/fleetbench/pkg/naming"
	"fleetbench.dev/fleetbench/pkg/runners"
)

// ReconcileScript makes the ConfigMap with the inline script and the k6 config, and checks a
// referenced script ConfigMap exists.
func (r *Stage) ReconcileScript(ctx context.Context, s *decide.Scope) (ctrl.Result, error) {
	res, err := r.reconcileScript(ctx, s)
	if err == nil && s.Failure == nil {
		r.RecordScriptDigest(s)
	}
	return res, err
}

func (r *Stage) reconcileScript(ctx context.Context, s *decide.Scope) (ctrl.Result, error) {
	run := s.Run
	if len(s.Runners) == 0 {
		// parallelism auto, not chosen yet: the k6 config holds the fleet's segment sequence, so
		// the ConfigMap waits for the count (reconcileParallelism reads only the script).
		s.Script = run.Spec.Script.Inline
		if ref := run.Spec.Script.ConfigMap; ref != nil {
			return r.copyScript(ctx, s, ref)
		}
		return ctrl.Result{}, nil
	}
	cfg, err := runners.K6Config(&run.Spec, run.Name, len(s.Runners))
	if err != nil {
		s.Fail(v1alpha1.ReasonInvalidLoad, err.Error())
		return ctrl.Result{}, nil
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: naming.ScriptConfigMap(run.Name), Namespace: run.Namespace,
			Labels: map[string]string{naming.LabelTestRun: run.Name, naming.LabelRole: naming.RoleScript}},
		Data: map[string]string{},
	}
	if run.Spec.Script.Inline != "" {
		cm.Data[runners.ScriptKey] = run.Spec.Script.Inline
		s.Script = run.Spec.Script.Inline
	}
	if cfg != nil {
		cm.Data[runners.ConfigKey] = string(cfg)
	}
	created, err := r.CreateConfigMap(ctx, run, cm)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !created {
		owned, err := r.Controls(ctx, run, cm)
		if err != nil {
			return ctrl.Result{}, err
		}
		if !owned {
			// The runners would mount whatever holds this name: never someone else's script.
			s.Fail(v1alpha1.ReasonScriptNotFound, fmt.Sprintf("ConfigMap %s exists and was not made for this TestRun (it is not controlled by it); "+
				"fleetbench keeps the run's script and k6 config under that name: delete that ConfigMap or rename the TestRun", cm.Name))
			return ctrl.Result{}, nil
		}
	}
	if ref := run.Spec.Script.ConfigMap; ref != nil {
		return r.copyScript(ctx, s, ref)
	}
	return ctrl.Result{}, nil
}

// copyScript copies the user's script ConfigMap (spec.script.configMap), every entry, into one
// the TestRun owns, once, before the pre-flight and the runners are made: they mount the copy,
// so an edit of the user's ConfigMap mid-run reaches no runner made later. Once the copy exists
// the user's ConfigMap is not read again. A ConfigMap of the copy's name that the run does not
// control is never mounted, written or deleted: the run fails.
func (r *Stage) copyScript(ctx context.Context, s *decide.Scope, ref *v1alpha1.ConfigMapScript) (ctrl.Result, error) {
	run := s.Run
	file := ref.File
	if file == "" {
		file = runners.ScriptKey
	}
	cp := scriptCopy(run)
	if err := r.Get(ctx, client.ObjectKeyFromObject(cp), cp); err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	if cp.UID == "" {
		if s.Started() {
			return ctrl.Result{}, nil // started by an operator that mounted the user's ConfigMap itself
		}
		// The user's ConfigMap carries no fleetbench label, so the cache does not hold it.
		user := &corev1.ConfigMap{}
		err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: ref.Name}, user)
		missing := ""
		switch {
		case apierrors.IsNotFound(err):
			missing = fmt.Sprintf("ConfigMap %s holding the script does not exist", ref.Name)
		case err != nil:
			return ctrl.Result{}, err
		case user.Data[file] == "":
			missing = fmt.Sprintf("ConfigMap %s has no entry %q; set spec.script.configMap.file to one of its keys", ref.Name, file)
		}
		if missing != "" {
			deadline := s.ProvisioningDeadline()
			// Nothing watches the user's ConfigMap: poll for it.
			return s.WaitOrFail(deadline, 10*time.Second, s.Phase(), v1alpha1.ReasonWaitingForScript, v1alpha1.ReasonScriptNotFound,
				missing, "; create it, or fix spec.script.configMap (the deadline was "+deadline.UTC().Format(time.RFC3339)+")"), nil
		}
		cp = scriptCopy(run)
		cp.Data, cp.BinaryData = maps.Clone(user.Data), maps.Clone(user.BinaryData)
		if _, err := r.CreateConfigMap(ctx, run, cp); err != nil {
			if apierrors.IsInvalid(err) || apierrors.IsForbidden(err) {
				s.Fail(v1alpha1.ReasonScriptNotFound, fmt.Sprintf("the copy of ConfigMap %s the runners mount was refused: %v; "+
					"ask your admin about the policy that refused it", ref.Name, err))
				return ctrl.Result{}, nil
			}
			return ctrl.Result{}, err
		}
	}
	owned, err := r.Controls(ctx, run, cp)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !owned {
		s.Fail(v1alpha1.ReasonScriptNotFound, fmt.Sprintf("ConfigMap %s exists and was not made for this TestRun (it is not controlled by it); "+
			"fleetbench keeps the copy of the run's script under that name: delete that ConfigMap or rename the TestRun", cp.Name))
		return ctrl.Result{}, nil
	}
	if cp.Data == nil && !s.Started() && !s.ConditionTrue(v1alpha1.ConditionScriptChecked) {
		// The cache keeps no ConfigMap's data (controller.Slim): until the pre-flight's verdict,
		// the runner count, the warnings and the handleSummary check read the script, so the
		// copy (what the runners mount) is read live, at most 1 MiB as the API server stores it.
		if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(cp), cp); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
	}
	s.Script = cp.Data[file]
	return ctrl.Result{}, nil
}

// scriptCopy is the copy of the user's script ConfigMap as built, without its data.
func scriptCopy(run *v1alpha1.TestRun) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: naming.ScriptCopyConfigMap(run.Name), Namespace: run.Namespace,
		Labels: map[string]string{naming.LabelTestRun: run.Name, naming.LabelRole: naming.RoleScript}}}
}
