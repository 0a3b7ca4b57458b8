package runners

import (
	"net"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/measure"
	"fleetbench.dev/fleetbench/pkg/naming"
	"fleetbench.dev/fleetbench/pkg/queue/place"
)

const (
	// APIPort is k6's REST API, used to un-pause and stop the runner.
	APIPort = 6565
	// LivePort serves the runner's envelope so far, for merges while the load runs.
	LivePort = 6566
	// ContainerName is the k6 container of a runner pod.
	ContainerName = "k6"
	// ConfigKey and ScriptKey are the entries of the generated ConfigMap.
	ConfigKey = "k6-config.json"
	ScriptKey = "test.js"

	scriptDir = "/fleetbench/script"
	// TestDir is where k6-operator mounts the script's volume: scripts open('/test/users.json').
	TestDir   = "/test"
	configDir = "/fleetbench/config"
	// OutputName is fleetbench's k6 output, which prints the mergeable result envelope.
	OutputName = "fleetbench"
	// CheckpointInterval is how often a runner prints a partial envelope.
	CheckpointInterval = "60s"
)

// JobOptions is what a runner Job needs besides the TestRun.
type JobOptions struct {
	// Image is the runner image when the TestRun names none.
	Image string
	// ConfigMap is the generated ConfigMap (inline script and k6 config).
	ConfigMap string
	// HasConfig says the ConfigMap holds a k6 config to pass with --config (HasConfig): with
	// more than one runner it holds the execution segment sequence (K6Config).
	HasConfig bool
	// ScriptCopy is the ConfigMap holding the copy of spec.script.configMap, which runners
	// mount instead of the user's: an edit of the user's mid-run reaches no runner.
	ScriptCopy string
	// TargetEnv points the script at the target (TARGET_URL, TARGET_<NAME>_URL, …).
	TargetEnv []corev1.EnvVar
	// TargetNamespace holds the target's pods, which runners are kept away from.
	TargetNamespace string
	// TargetNodes are the nodes the target's pods run on, where known: with avoidTarget
	// preferred, runners also prefer other nodes by node affinity.
	TargetNodes []string
	// ActiveDeadlineSeconds is the kubelet-side backstop for a runner that never ends.
	ActiveDeadlineSeconds int64
	// TargetStarting is how long the target may still take to become Ready when the runners
	// are created while it starts: their wait to reach it is that much longer.
	TargetStarting time.Duration
	// Admitted is where Kueue's admission puts these pods (the runners' pod set, or the
	// pre-flight's for PreflightJob): its flavors' node labels and tolerations; nil: none.
	Admitted *v1alpha1.AdmittedPodSet
}

// Job builds runner i of n. Runners never retry (backoffLimit 0): a rerun would send the
// load twice. They start paused and wait for the operator's synchronized start.
func Job(tr *v1alpha1.TestRun, i, n int, opts JobOptions) *batchv1.Job {
	spec := &tr.Spec
	runner := spec.Runner
	if runner == nil {
		runner = &v1alpha1.RunnerSpec{}
	}
	// With zones, runner i of this cluster holds the fleet's segment FleetIndex(i) of FleetRunners.
	fleet, slot := spec.FleetRunners(n), spec.FleetIndex(i)
	seg := Segments(fleet)[slot]
	labels := RunnerLabels(tr)
	labels[naming.LabelRunnerIndex] = strconv.Itoa(i)
	podLabels := map[string]string{}
	podAnnotations := map[string]string{}
	if runner.Metadata != nil {
		for k, v := range runner.Metadata.Labels {
			podLabels[k] = v
		}
		for k, v := range runner.Metadata.Annotations {
			podAnnotations[k] = v
		}
	}
	for k, v := range labels {
		podLabels[k] = v
	}

	image := runner.Image
	if image == "" {
		image = opts.Image
	}
	pullPolicy := runner.ImagePullPolicy
	if pullPolicy == "" {
		pullPolicy = corev1.PullIfNotPresent
	}

	volumes, mounts, scriptPath := scriptVolumes(spec, opts.ConfigMap, opts.ScriptCopy)
	testMounts := slices.DeleteFunc(slices.Clone(mounts), func(m corev1.VolumeMount) bool { return m.MountPath != TestDir })
	args := []string{"run", "--execution-segment", seg.Segment}
	if !opts.HasConfig || !SequenceInConfig(fleet) || UserSetsConfig(spec) {
		args = append(args, "--execution-segment-sequence", seg.Sequence)
	}
	args = append(args,
		"--paused",
		"--address", "0.0.0.0:"+strconv.Itoa(APIPort),
		"--out", OutputName,
		// k6's own summary keeps every trend sample in memory; ours folds them into histograms.
		"--summary-mode=disabled",
		// k6's per-instance verdict judges only this runner's share, and a runner exiting 99 on it
		// must not fail the fleet: fleetbench judges spec and script thresholds on the merged
		// results (the script's still reach our output). Thresholds off also keeps k6 from adding
		// every sample to its own sinks, whose Trend sink keeps every value (k6 #763), so memory
		// stays flat for hours. Abort-on-fail across the fleet needs live merged evaluation.
		"--no-thresholds",
	)
	if OnceForTheFleet(n) {
		// setup() and teardown() run once for the whole fleet, on runner 0 through k6's REST
		// API; runner 0 lingers after its load so teardown() can run once every runner ended.
		args = append(args, "--no-setup", "--no-teardown")
		if i == 0 {
			args = append(args, "--linger")
		}
	}
	if opts.HasConfig {
		args = append(args, "--config", configDir+"/"+ConfigKey)
	}
	outArgs, outEnv := OutputArgs(tr)
	args = append(args, outArgs...)
	args = append(args, UserArgs(spec)...)
	args = append(args, scriptPath)

	env := []corev1.EnvVar{
		// A checkpoint envelope every minute: a runner killed mid-run (OOM, eviction) still
		// leaves in its log what it measured until then.
		{Name: "K6_FLEETBENCH_CHECKPOINT", Value: CheckpointInterval},
		{Name: "FLEETBENCH_TESTRUN", Value: tr.Name},
		{Name: "FLEETBENCH_RUNNER_INDEX", Value: strconv.Itoa(slot)},
		{Name: "FLEETBENCH_RUNNERS", Value: strconv.Itoa(fleet)},
		{Name: "K6_FLEETBENCH_LIVE", Value: ":" + strconv.Itoa(LivePort)},
		// k6 would report usage to its vendor when the load ends, from the user's cluster, and
		// wait for that call before exiting; spec.runner.env can turn it back on.
		{Name: "K6_NO_USAGE_REPORT", Value: "true"},
		// A script importing an extension the image lacks would have k6 try to build a binary
		// with it through its vendor's service, from a read-only pod that may not reach it; k6
		// then says at once which module is missing.
		{Name: "K6_AUTO_EXTENSION_RESOLUTION", Value: "false"},
	}
	if tags := SeriesTags(spec); len(tags) > 0 {
		// The runner splits series by these too, so spec thresholds on sub-metrics can be judged
		// and the sub-metrics spec.baseline.metrics names can be kept and compared.
		env = append(env, corev1.EnvVar{Name: "K6_FLEETBENCH_TAGS", Value: strings.Join(tags, ",")})
	}
	if WarmUp(spec) != "" {
		env = append(env, corev1.EnvVar{Name: "K6_FLEETBENCH_EXCLUDE_SCENARIOS", Value: WarmUpScenario})
	}
	if spec.Type == v1alpha1.TestTypePeak && spec.Peak != nil {
		// Windows a fraction of a step wide, and enough of them that none coarsens mid-climb.
		window := PeakWindow(spec)
		windows := min(int64(ExpectedDuration(spec)/window)+6, 100000)
		env = append(env,
			corev1.EnvVar{Name: "K6_FLEETBENCH_WINDOW", Value: window.String()},
			corev1.EnvVar{Name: "K6_FLEETBENCH_MAX_WINDOWS", Value: strconv.FormatInt(max(windows, 60), 10)})
	} else if window := Window(spec); window != DefaultWindow {
		// A short run gets narrower windows, so its timeline is a curve (cadence.go); the cap
		// stays the runner's default, so envelopes keep their size.
		env = append(env, corev1.EnvVar{Name: "K6_FLEETBENCH_WINDOW", Value: window.String()})
	}
	if spec.Load != nil && spec.Load.Devices != nil {
		r := DeviceRanges(int64(*spec.Load.Devices), fleet)[slot]
		env = append(env,
			corev1.EnvVar{Name: "DEVICE_ID_FIRST", Value: strconv.FormatInt(r.First, 10)},
			corev1.EnvVar{Name: "DEVICE_ID_LAST", Value: strconv.FormatInt(r.Last, 10)},
			corev1.EnvVar{Name: "DEVICE_COUNT", Value: strconv.FormatInt(r.Count(), 10)},
			corev1.EnvVar{Name: "DEVICE_PERIOD", Value: string(spec.Load.Period)})
		if period, err := time.ParseDuration(string(spec.Load.Period)); err == nil && period > 0 {
			// This runner's share of the rate, for scripts that pace their devices themselves.
			env = append(env, corev1.EnvVar{Name: "DEVICE_RATE_PER_SECOND", Value: strconv.FormatFloat(float64(r.Count())/period.Seconds(), 'f', 3, 64)})
		}
	}
	env = append(env, outEnv...)
	env = append(env, opts.TargetEnv...)
	if addrs := targetAddrs(opts.TargetEnv); len(addrs) > 0 {
		// The runner turns Ready (and so the load starts) only once this pod reaches every
		// component: a NetworkPolicy controller may admit a new pod a moment after it starts.
		// The runner binary waits while k6 loads the script, in this container: an init
		// container would cost each pod another container start, and the script's load would
		// come after the target's.
		env = append(env,
			corev1.EnvVar{Name: measure.ReachEnv, Value: strings.Join(addrs, ",")},
			corev1.EnvVar{Name: measure.ReachTimeoutEnv, Value: (reachTimeout + opts.TargetStarting.Round(time.Second)).String()})
	}
	env = append(env, runner.Env...)
	volumes = append(volumes, runner.Volumes...)
	mounts = append(mounts, runner.VolumeMounts...)

	container := corev1.Container{
		Name:            ContainerName,
		Image:           image,
		ImagePullPolicy: pullPolicy,
		Args:            args,
		Env:             env,
		Ports:           append([]corev1.ContainerPort{{Name: "k6-api", ContainerPort: APIPort}, {Name: "live", ContainerPort: LivePort}}, spec.Ports...),
		VolumeMounts:    mounts,
		// Readiness only: it gates the synchronized start. A liveness probe could kill a runner
		// that is slow to load its script (k6-operator #306), and a kill here loses the run.
		// The live port answers once k6 loaded the script (k6 starts its outputs after that)
		// and the runner reached its target.
		ReadinessProbe: &corev1.Probe{
			ProbeHandler:     corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: measure.ReadyPath, Port: intstr.FromInt32(LivePort)}},
			PeriodSeconds:    1,
			TimeoutSeconds:   2,
			FailureThreshold: 3,
		},
		SecurityContext:          containerSecurityContext(runner),
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
	}
	if runner.Resources != nil {
		container.Resources = *runner.Resources
	}
	container.EnvFrom = runner.EnvFrom
	podSpec := corev1.PodSpec{
		RestartPolicy:                 corev1.RestartPolicyNever,
		InitContainers:                initContainers(runner, testMounts, pullPolicy, container.SecurityContext),
		Containers:                    []corev1.Container{container},
		Volumes:                       volumes,
		NodeSelector:                  runner.NodeSelector,
		Tolerations:                   lossTolerations(spec, n, runner.Tolerations),
		TerminationGracePeriodSeconds: lossGrace(spec, n),
		ServiceAccountName:            runner.ServiceAccountName,
		ImagePullSecrets:              runner.ImagePullSecrets,
		PriorityClassName:             runner.PriorityClassName,
		AutomountServiceAccountToken:  automountToken(runner),
		SchedulerName:                 runner.SchedulerName,
		SecurityContext:               podSecurityContext(runner),
		Affinity:                      placement(tr, runner.Affinity, runner.AvoidTarget, opts.TargetNamespace, opts.TargetNodes),
		TopologySpreadConstraints:     spreadWith(tr, runner.TopologySpreadConstraints),
	}

	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name:      naming.RunnerJob(tr.Name, i),
			Namespace: tr.Namespace,
			Labels:    labels,
		},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To[int32](0),
			Completions:  ptr.To[int32](1),
			Parallelism:  ptr.To[int32](1),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: podLabels, Annotations: podAnnotations},
				Spec:       podSpec,
			},
		},
	}
	if opts.ActiveDeadlineSeconds > 0 {
		job.Spec.ActiveDeadlineSeconds = ptr.To(opts.ActiveDeadlineSeconds)
	}
	place.Place(&job.Spec.Template.Spec, opts.Admitted)
	return job
}

// OnceForTheFleet says whether the operator runs setup() and teardown() itself: with more than
// one runner, each k6 would otherwise run them for its share.
func OnceForTheFleet(runners int) bool { return runners > 1 }

// RunnerLabels select every runner of a TestRun.
func RunnerLabels(tr *v1alpha1.TestRun) map[string]string {
	return map[string]string{
		naming.LabelTestRun: tr.Name,
		naming.LabelRole:    naming.RoleRunner,
	}
}

// scriptVolumes mounts the script source and the generated config, and says where the script is.
// The script's volume is also at /test, where k6-operator mounts it.
func scriptVolumes(spec *v1alpha1.TestRunSpec, generated, scriptCopy string) ([]corev1.Volume, []corev1.VolumeMount, string) {
	volumes := []corev1.Volume{
		{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: generated}}}},
		// k6 writes nothing we need, but some modules expect a writable /tmp.
		{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
	}
	mounts := []corev1.VolumeMount{
		{Name: "config", MountPath: configDir, ReadOnly: true},
		{Name: "tmp", MountPath: "/tmp"},
	}
	script := spec.Script
	file := func(f string) string {
		if f == "" {
			return ScriptKey
		}
		return f
	}
	switch {
	case script.Inline != "":
		mounts = append(mounts, corev1.VolumeMount{Name: "config", MountPath: TestDir, ReadOnly: true})
		return volumes, mounts, configDir + "/" + ScriptKey
	case script.ConfigMap != nil:
		source := script.ConfigMap.Name
		if scriptCopy != "" {
			source = scriptCopy
		}
		volumes = append(volumes, corev1.Volume{Name: "script", VolumeSource: corev1.VolumeSource{
			ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: source}}}})
		mounts = append(mounts, corev1.VolumeMount{Name: "script", MountPath: scriptDir, ReadOnly: true},
			corev1.VolumeMount{Name: "script", MountPath: TestDir, ReadOnly: true})
		return volumes, mounts, scriptDir + "/" + file(script.ConfigMap.File)
	case script.VolumeClaim != nil:
		volumes = append(volumes, corev1.Volume{Name: "script", VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: script.VolumeClaim.Name, ReadOnly: script.VolumeClaim.ReadOnly}}})
		mounts = append(mounts, corev1.VolumeMount{Name: "script", MountPath: scriptDir, ReadOnly: script.VolumeClaim.ReadOnly},
			corev1.VolumeMount{Name: "script", MountPath: TestDir, ReadOnly: script.VolumeClaim.ReadOnly})
		return volumes, mounts, scriptDir + "/" + file(script.VolumeClaim.File)
	default:
		return volumes, mounts, script.LocalFile
	}
}

// spread asks the scheduler to spread the runners over the nodes; it may still stack them where
// nodes are few (separate is the hard rule).
func spread(tr *v1alpha1.TestRun) []corev1.TopologySpreadConstraint {
	return []corev1.TopologySpreadConstraint{{
		MaxSkew:           1,
		TopologyKey:       corev1.LabelHostname,
		WhenUnsatisfiable: corev1.ScheduleAnyway,
		LabelSelector:     &metav1.LabelSelector{MatchLabels: RunnerLabels(tr)},
	}}
}

// spreadWith is fleetbench's spread and the user's constraints. The API server allows one
// constraint per topologyKey and whenUnsatisfiable, so a user's on the pair of one of ours
// replaces it.
func spreadWith(tr *v1alpha1.TestRun, user []corev1.TopologySpreadConstraint) []corev1.TopologySpreadConstraint {
	own := slices.DeleteFunc(spread(tr), func(c corev1.TopologySpreadConstraint) bool {
		return slices.ContainsFunc(user, func(u corev1.TopologySpreadConstraint) bool {
			return u.TopologyKey == c.TopologyKey && u.WhenUnsatisfiable == c.WhenUnsatisfiable
		})
	})
	return append(own, user...)
}

// placement adds fleetbench's rules to the user's affinity: with spec.separate no two runners
// of the run share a node, and runners keep off the target's nodes, preferably or required.
//
// Preferred pod anti-affinity alone loses to the spread: once most runners sit on the free
// nodes, the scheduler's spread score favours the target's node as much as the anti-affinity
// score disfavours it. A preferred node affinity away from the target's nodes (a second scoring
// plugin of the same weight) keeps them off it wherever another node fits.
func placement(tr *v1alpha1.TestRun, user *corev1.Affinity, avoid v1alpha1.AvoidTarget, targetNamespace string, targetNodes []string) *corev1.Affinity {
	affinity := &corev1.Affinity{}
	if user != nil {
		affinity = user.DeepCopy()
	}
	anti := affinity.PodAntiAffinity
	if anti == nil {
		anti = &corev1.PodAntiAffinity{}
	}
	if tr.Spec.Separate {
		anti.RequiredDuringSchedulingIgnoredDuringExecution = append(anti.RequiredDuringSchedulingIgnoredDuringExecution,
			corev1.PodAffinityTerm{TopologyKey: corev1.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchLabels: RunnerLabels(tr)}})
	}
	if targetNamespace != "" {
		offTarget := corev1.PodAffinityTerm{
			TopologyKey: corev1.LabelHostname,
			Namespaces:  []string{targetNamespace},
			// The run's namespace too: a target namespace may hold the targets of several runs.
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{naming.LabelTestRun: tr.Name, naming.LabelTestRunNS: tr.Namespace,
				naming.LabelRole: naming.RoleTarget}},
		}
		if avoid == v1alpha1.AvoidTargetRequired {
			anti.RequiredDuringSchedulingIgnoredDuringExecution = append(anti.RequiredDuringSchedulingIgnoredDuringExecution, offTarget)
		} else {
			anti.PreferredDuringSchedulingIgnoredDuringExecution = append(anti.PreferredDuringSchedulingIgnoredDuringExecution,
				corev1.WeightedPodAffinityTerm{Weight: 100, PodAffinityTerm: offTarget})
			if len(targetNodes) > 0 {
				if affinity.NodeAffinity == nil {
					affinity.NodeAffinity = &corev1.NodeAffinity{}
				}
				na := affinity.NodeAffinity
				na.PreferredDuringSchedulingIgnoredDuringExecution = append(na.PreferredDuringSchedulingIgnoredDuringExecution,
					corev1.PreferredSchedulingTerm{Weight: 100, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{
						{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpNotIn, Values: targetNodes},
					}}})
			}
		}
	}
	if len(anti.RequiredDuringSchedulingIgnoredDuringExecution)+len(anti.PreferredDuringSchedulingIgnoredDuringExecution) > 0 {
		affinity.PodAntiAffinity = anti
	}
	return affinity
}

// reachTimeout bounds the wait; past it the runner fails before the start, naming the
// unreachable addresses.
const reachTimeout = time.Minute

// targetAddrs are the host:port of every provisioned component, from TARGET_<NAME>_HOST and
// _PORT (an external target has TARGET_URL only and is not checked).
func targetAddrs(env []corev1.EnvVar) []string {
	ports := map[string]string{}
	for _, e := range env {
		if name, ok := strings.CutSuffix(e.Name, "_PORT"); ok && strings.HasPrefix(name, "TARGET_") {
			ports[name] = e.Value
		}
	}
	var addrs []string
	for _, e := range env {
		if name, ok := strings.CutSuffix(e.Name, "_HOST"); ok && strings.HasPrefix(name, "TARGET_") && ports[name] != "" {
			addrs = append(addrs, net.JoinHostPort(e.Value, ports[name]))
		}
	}
	return addrs
}

// SeriesTags are the tag keys the runners split series by besides measure.KeptTags, sorted:
// those the sub-metrics of spec.thresholds and spec.baseline.metrics filter on, e.g. name for
// http_req_duration{name:home}. Bounded by the API (32 threshold keys, 16 baseline metrics of
// at most 256 characters); the runners' series budget per metric bounds what they cost.
func SeriesTags(spec *v1alpha1.TestRunSpec) []string {
	keys := make([]string, 0, len(spec.Thresholds))
	for key := range spec.Thresholds {
		keys = append(keys, key)
	}
	if spec.Baseline != nil {
		for _, m := range spec.Baseline.Metrics {
			keys = append(keys, m.Name)
		}
	}
	seen := map[string]bool{}
	var tags []string
	for _, key := range keys {
		_, filter, err := measure.ParseMetricSelector(key)
		if err != nil {
			continue // admission refuses malformed keys
		}
		for tag := range filter {
			if !seen[tag] {
				seen[tag] = true
				tags = append(tags, tag)
			}
		}
	}
	sort.Strings(tags)
	return tags
}

// UserArgs are the k6 flags the user added: spec.args as they are, or spec.arguments split at
// spaces (admission refuses both at once, and quotes in arguments).
func UserArgs(spec *v1alpha1.TestRunSpec) []string {
	return append(strings.Fields(spec.Arguments), spec.Args...)
}
