package provision

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	"fleetbench.dev/fleetbench/pkg/naming"
	"fleetbench.dev/fleetbench/pkg/target"
	"fleetbench.dev/fleetbench/pkg/zones"
)

// ReconcileZones makes a zoned run's zone runs (spec.zones), one per zone of another
// cluster, for Kueue's MultiKueue to dispatch, and rebuilds status.zones from them. It never
// waits: the home zone's runners are made meanwhile, and the start waits for every zone
// (drive.ReconcileStart). Before the start, a zone that failed, ran elsewhere or another
// script fails the run: no zone was started.
func (r *Stage) ReconcileZones(ctx context.Context, s *decide.Scope) (ctrl.Result, error) {
	run := s.Run
	if len(run.Spec.Zones) == 0 {
		return ctrl.Result{}, nil
	}
	if !r.Kueue {
		s.Fail(v1alpha1.ReasonZoneNotArmed, "spec.zones: the zones are dispatched by Kueue's MultiKueue, and Kueue is not installed in this cluster "+
			"(no kueue.x-k8s.io Workload API): install Kueue with MultiKueue (README, Load zones), or remove spec.zones")
		return ctrl.Result{}, nil
	}
	before := decide.ZoneRowsOf(run.Status.Zones)
	exposed, notYet, err := r.zoneTarget(ctx, s)
	if err != nil {
		return ctrl.Result{}, err
	}
	rows := make([]decide.ZoneRow, 0, len(run.Spec.Zones))
	var problems []string
	for _, z := range run.Spec.Zones {
		row := before[z.Name]
		row.Name, row.Cluster, row.Runners = z.Name, z.Cluster, z.Runners
		if row.State == "" {
			row.State = v1alpha1.ZonePending
		}
		if z.Cluster == "" {
			rows = append(rows, row) // the home zone: its state is the start's and the run's
			continue
		}
		// Made once: one made before (its row names it) is not made again, which would send its
		// segments' load a second time if its ZoneStart came.
		made := s.Started() || row.Run != ""
		zr, missing, err := r.zoneRun(ctx, run, z, made, exposed)
		if err != nil {
			return ctrl.Result{}, err
		}
		if zr == nil && missing == "" {
			row.Message = notYet // made once the target is reachable from other clusters
			rows = append(rows, row)
			continue
		}
		if missing != "" {
			row.State, row.Message = v1alpha1.ZoneFailed, missing
			if s.Started() {
				row.State = v1alpha1.ZoneLost
			} else if row.State != v1alpha1.ZoneLost {
				problems = append(problems, fmt.Sprintf("zone %s: %s", z.Name, missing))
			}
			rows = append(rows, row)
			continue
		}
		row.Run = zr.Name
		if row.State != v1alpha1.ZoneLost && row.State != v1alpha1.ZoneEnded {
			row.State, row.Message = zones.StateOf(zr)
		}
		if zr.Status.ZoneRun != nil && zr.Status.ZoneRun.StartedAt != nil {
			row.StartedAt = zr.Status.ZoneRun.StartedAt.Time
		}
		if problem := zoneProblem(run, zr, z); problem != "" && !s.Started() {
			row.State, row.Message = v1alpha1.ZoneFailed, problem
		}
		if row.State == v1alpha1.ZoneFailed && !s.Started() {
			problems = append(problems, fmt.Sprintf("zone %s: %s", z.Name, row.Message))
		}
		rows = append(rows, row)
	}
	s.Decided.Zones = rows
	if len(problems) > 0 {
		s.Fail(v1alpha1.ReasonZoneNotArmed, "a zone could not arm, so no zone was started: "+strings.Join(problems, "; "))
	}
	return ctrl.Result{}, nil
}

// zoneRun is zone's zone run of run, made when missing before the start, once reach (how
// the zone reaches the run's target) is known; nil and no reason: not yet. missing says why
// it cannot be made (no LocalQueue dispatches to the zone's cluster). A TestRun of its name
// that is not this run's zone run is reported by zoneProblem, never changed.
func (r *Stage) zoneRun(ctx context.Context, run *v1alpha1.TestRun, z v1alpha1.ZoneSpec, made bool, reach *zones.Target) (_ *v1alpha1.TestRun, missing string, _ error) {
	key := client.ObjectKey{Namespace: run.Namespace, Name: naming.ZoneRun(run.Name, z.Name)}
	got := &v1alpha1.TestRun{}
	err := r.Get(ctx, key, got)
	if !apierrors.IsNotFound(err) {
		return got, "", err
	}
	if made {
		// The cache may not hold one made a moment ago: only the API server says it is gone.
		if err := r.APIReader.Get(ctx, key, got); !apierrors.IsNotFound(err) {
			return got, "", err
		}
		return nil, "its zone run " + key.Name + " was deleted", nil
	}
	if reach == nil {
		return nil, "", nil
	}
	want := zones.Run(run, z, *reach)
	// Read live, once per zone (no LocalQueue is cached): a zone no queue dispatches would
	// wait in Kueue until the arm deadline.
	lq := zones.LocalQueue(z.Cluster)
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: lq}, &kueue.LocalQueue{}); apierrors.IsNotFound(err) {
		return nil, fmt.Sprintf(v1alpha1.MessageZoneNoLocalQueue, run.Namespace, lq, z.Cluster), nil
	} else if err != nil {
		return nil, "", err
	}
	if err := r.Create(ctx, want); apierrors.IsInvalid(err) || apierrors.IsForbidden(err) {
		// Refused for good (a field the zone run cannot carry, a policy): said, not retried.
		return nil, fmt.Sprintf("its zone run %s was refused: %v", key.Name, err), nil
	} else if err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, "", err
	}
	return want, "", nil
}

// zoneProblem says why zr cannot be z's zone of run: not made for it, dispatched to another
// cluster than the zone names, or running another script.
func zoneProblem(run, zr *v1alpha1.TestRun, z v1alpha1.ZoneSpec) string {
	if of := zr.Spec.ZoneOf; zr.UID != "" && (!zones.Of(zr, run) || of == nil || of.Run != run.Name || of.Zone != z.Name) {
		return fmt.Sprintf("TestRun %s exists and is not this run's zone run; delete it or rename this run", zr.Name)
	}
	if worker := zr.Annotations[v1alpha1.AnnotationWorkerCluster]; worker != "" && worker != z.Cluster {
		return fmt.Sprintf("LocalQueue %s dispatched the zone to cluster %s, not %s: its ClusterQueue's MultiKueue AdmissionCheck must name only cluster %s",
			zones.LocalQueue(z.Cluster), worker, z.Cluster, z.Cluster)
	}
	if zr.Status.ScriptDigest != "" && run.Status.ScriptDigest != "" && zr.Status.ScriptDigest != run.Status.ScriptDigest {
		return fmt.Sprintf("cluster %s runs another script (sha256 %s, here %s): give its ConfigMap %s the same content as here",
			z.Cluster, short(zr.Status.ScriptDigest), short(run.Status.ScriptDigest), scriptName(run))
	}
	return ""
}

func short(digest string) string { return digest[:min(len(digest), 19)] }

func scriptName(run *v1alpha1.TestRun) string {
	if cm := run.Spec.Script.ConfigMap; cm != nil {
		return cm.Name
	}
	return "(inline)"
}

// zoneTarget is how other clusters reach the run's target: an external one's URL, or a
// provisioned one's NodePorts on the address of a node its pods run on (pkg/target makes its
// Services NodePorts for a zoned run). nil with why while the Services or the pods' node are
// not there yet.
func (r *Stage) zoneTarget(ctx context.Context, s *decide.Scope) (*zones.Target, string, error) {
	run := s.Run
	if ext := run.Spec.Target.External; ext != nil {
		return &zones.Target{URL: ext.URL}, "", nil
	}
	if s.Desired == nil {
		return nil, "waiting for the target to be built", nil
	}
	host := ""
	for i := range s.TargetPods {
		if ip := s.TargetPods[i].Status.HostIP; ip != "" {
			host = ip
			break
		}
	}
	if host == "" {
		return nil, "waiting for the target's pods to be placed on a node: other clusters reach it by a node's address", nil
	}
	var list corev1.ServiceList
	if err := r.List(ctx, &list, client.InNamespace(s.TargetNS), client.MatchingLabels(target.RunLabels(run))); err != nil {
		return nil, "", err
	}
	svcs := slices.DeleteFunc(list.Items, func(svc corev1.Service) bool { return !target.OwnedBy(&svc, run) })
	exposed, err := zones.Exposed(s.Desired.Env, svcs, host)
	if err != nil {
		return nil, "waiting for the target's NodePorts: " + err.Error(), nil
	}
	return &exposed, "", nil
}
