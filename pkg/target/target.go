// Package target builds the objects of a TestRun's system under test from its spec and
// Profile: a namespace, one Deployment per "machine" and a Service per component. It makes
// objects; it never talks to a cluster.
package target

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/naming"
	"fleetbench.dev/fleetbench/pkg/queue/place"
)

// stackName is the Deployment that holds every component when sized as one machine.
const stackName = "stack"

// builtin is a built-in engine's image, the port runners use, and the paths it writes.
type builtin struct {
	image  string
	port   int32
	scheme string
	// writable paths get emptyDirs; everything else is a read-only root filesystem, and the
	// image runs as its own non-root user. Prosody keeps ~4 KiB per provisioned account there.
	writable []string
}

var builtins = map[string]builtin{
	"nginx":      {"fleetbench/nginx:dev", 80, "http", []string{"/run"}},
	"apache":     {"fleetbench/apache:dev", 80, "http", []string{"/run"}},
	"postgresql": {"fleetbench/postgresql:dev", 5432, "postgres", []string{"/var/lib/fleetbench-db", "/run/postgresql", "/tmp"}},
	"mariadb":    {"fleetbench/mariadb:dev", 3306, "mysql", []string{"/var/lib/fleetbench-db", "/run/mysqld", "/tmp"}},
	"prosody":    {"fleetbench/prosody:dev", 5280, "ws", []string{"/var/lib/prosody"}},
	"ejabberd":   {"fleetbench/ejabberd:dev", 5280, "ws", []string{"/var/lib/ejabberd"}},
}

var defaultEngine = map[v1alpha1.ComponentKind]string{
	v1alpha1.ComponentWebServer:  "nginx",
	v1alpha1.ComponentDatabase:   "postgresql",
	v1alpha1.ComponentXMPPBroker: "prosody",
}

// Objects is everything one target needs.
type Objects struct {
	// Namespace is the target's own namespace; nil in a shared one (Options.SharedNamespace),
	// which an admin made and the operator leaves as it is.
	Namespace   *corev1.Namespace
	Deployments []*appsv1.Deployment
	Services    []*corev1.Service
	// Quota caps the namespace at the profile, so nothing in it outgrows the "machine"; nil in
	// a shared namespace, where it would cap every run's target together (Build still bounds
	// every container within the profile, fitProfile, and the admin's quota there applies).
	Quota *corev1.ResourceQuota
	// NetworkPolicy selects this target's pods and admits only this TestRun's runners, and the
	// target's own traffic; out, only DNS, the target's own pods and spec.target.egress.
	NetworkPolicy *networkingv1.NetworkPolicy
	// Env points runners at the components: TARGET_<NAME>_URL, _HOST and _PORT.
	Env []corev1.EnvVar
}

// Options are facts about the cluster the objects are built for.
type Options struct {
	// PodLevelResources: the cluster honours pod.spec.resources (Kubernetes 1.34+ by default).
	// One-machine targets then put the profile on the pod and let its components share it, as
	// the processes of the seeds' C1 machine did; without it the profile is split evenly.
	PodLevelResources bool
	// SharedNamespace: ns holds the targets of other TestRuns too (the operator's
	// --target-namespace). Every object's name then carries the run (naming.SharedTargetObject),
	// and the namespace itself is neither built nor fenced by a quota.
	SharedNamespace bool
	// Admitted is where Kueue's admission puts the target's pods (the Workload's target pod
	// set): its flavors' node labels and tolerations, on every Deployment; nil: none.
	Admitted *v1alpha1.AdmittedPodSet
}

// Build makes the target of a TestRun in namespace ns, sized by profile.
func Build(tr *v1alpha1.TestRun, profile *v1alpha1.ProfileSpec, ns string, opts Options) (*Objects, error) {
	components := tr.Spec.Target.Components
	if opts.SharedNamespace {
		if err := refuseSecretRefs(components); err != nil {
			return nil, err
		}
	}
	if err := validEgress(tr); err != nil {
		return nil, err
	}
	level := podSecurity(tr)
	names := objectNames{tr: tr, shared: opts.SharedNamespace}
	out := &Objects{}
	if !opts.SharedNamespace {
		out.Namespace = namespace(tr, ns, level)
	}

	containers := make([]corev1.Container, len(components))
	volumes := make([][]corev1.Volume, len(components))
	for i := range components {
		c, err := container(&components[i], level)
		if err != nil {
			return nil, err
		}
		containers[i] = c
		if components[i].Image == "" {
			for j, path := range builtins[engineOf(&components[i])].writable {
				name := fmt.Sprintf("%s-scratch-%d", components[i].Name, j)
				volumes[i] = append(volumes[i], corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
				containers[i].VolumeMounts = append(containers[i].VolumeMounts, corev1.VolumeMount{Name: name, MountPath: path})
			}
		}
	}

	onePod := tr.Spec.Target.Sizing != v1alpha1.SizingPerComponent
	if onePod {
		if err := portsDisjoint(components, containers); err != nil {
			return nil, err
		}
	}
	var podResources *corev1.ResourceRequirements
	switch {
	case !onePod:
		for i := range components {
			res, err := componentResources(&components[i], profile)
			if err != nil {
				return nil, err
			}
			containers[i].Resources = res
		}
		if err := fillUnstated(components, containers, profile); err != nil {
			return nil, err
		}
	case opts.PodLevelResources:
		// One machine, one budget: a busy web server may take what an idle database leaves.
		// The pod cannot hold ephemeral-storage: each container gets its share of the disk.
		pod := evenShare(profile, 1)
		delete(pod.Requests, corev1.ResourceEphemeralStorage)
		delete(pod.Limits, corev1.ResourceEphemeralStorage)
		podResources = &pod
		disk := fraction(profileAmount(profile, corev1.ResourceEphemeralStorage), corev1.ResourceEphemeralStorage, 1, int64(len(containers)))
		for i := range containers {
			list := corev1.ResourceList{corev1.ResourceEphemeralStorage: disk}
			containers[i].Resources = corev1.ResourceRequirements{Requests: list, Limits: list.DeepCopy()}
		}
	default:
		// One machine without pod-level resources: the profile is split evenly.
		for i := range containers {
			containers[i].Resources = evenShare(profile, len(containers))
		}
	}

	if err := fitProfile(containers, podResources, profile); err != nil {
		return nil, err
	}

	out.Env = componentEnv(components, containers, ns, names)
	for i := range containers {
		// Components find each other the way runners find them; listed first so a component's
		// own env can refer to them, e.g. DATABASE_URL=postgres://…@$(TARGET_DB_HOST):$(TARGET_DB_PORT)/….
		containers[i].Env = append(append([]corev1.EnvVar{}, out.Env...), containers[i].Env...)
	}
	if onePod {
		var all []corev1.Volume
		for _, v := range volumes {
			all = append(all, v...)
		}
		out.Deployments = append(out.Deployments, deployment(tr, ns, names, stackName, profile, level, podResources, all, containers...))
	} else {
		for i := range components {
			out.Deployments = append(out.Deployments, deployment(tr, ns, names, components[i].Name, profile, level, nil, volumes[i], containers[i]))
		}
	}
	for _, d := range out.Deployments {
		place.Place(&d.Spec.Template.Spec, opts.Admitted)
	}

	for i := range components {
		c := &components[i]
		workload := c.Name
		if onePod {
			workload = stackName
		}
		port := containers[i].Ports[0].ContainerPort
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: names.service(c.Name), Namespace: ns, Labels: ownedLabels(tr, targetLabels(tr, c.Name))},
			Spec: corev1.ServiceSpec{
				// Components reach each other before their pod is Ready: in one machine the app's
				// health check waits on the database, and the pod's readiness on the app.
				// Runners come only after the whole target is Ready.
				PublishNotReadyAddresses: true,
				Selector:                 targetLabels(tr, workload),
				Ports:                    []corev1.ServicePort{{Name: "main", Port: port, TargetPort: intstr.FromInt32(port)}},
			},
		}
		if len(tr.Spec.Zones) > 0 {
			// Load zones in other clusters reach the target by a node's address and this port.
			svc.Spec.Type = corev1.ServiceTypeNodePort
		}
		out.Services = append(out.Services, svc)
	}
	if !opts.SharedNamespace {
		out.Quota = quota(tr, ns, profile)
	}
	out.NetworkPolicy = networkPolicy(tr, ns, names)
	if len(tr.Spec.Zones) > 0 {
		// A zone's runners come from another cluster, by an address this one cannot name: the
		// components' ports are open to any source, for the run's lifetime (README, Load zones).
		rule := networkingv1.NetworkPolicyIngressRule{}
		for i := range containers {
			port := intstr.FromInt32(containers[i].Ports[0].ContainerPort)
			rule.Ports = append(rule.Ports, networkingv1.NetworkPolicyPort{Port: &port})
		}
		out.NetworkPolicy.Spec.Ingress = append(out.NetworkPolicy.Spec.Ingress, rule)
	}
	return out, nil
}

// portsDisjoint refuses two components of one machine listening on the same port: they share
// the pod's network, so the second could never bind.
func portsDisjoint(components []v1alpha1.Component, containers []corev1.Container) error {
	owner := map[int32]string{}
	for i := range containers {
		for _, p := range containers[i].Ports {
			if other, taken := owner[p.ContainerPort]; taken {
				return fmt.Errorf("components %q and %q both listen on port %d in one machine; give one of them other ports, "+
					"or set spec.target.sizing: perComponent", other, components[i].Name, p.ContainerPort)
			}
			owner[p.ContainerPort] = components[i].Name
		}
	}
	return nil
}

// componentEnv is TARGET_<NAME>_URL, _HOST and _PORT for every component, at its Service.
func componentEnv(components []v1alpha1.Component, containers []corev1.Container, ns string, names objectNames) []corev1.EnvVar {
	var env []corev1.EnvVar
	for i := range components {
		c := &components[i]
		port := containers[i].Ports[0].ContainerPort
		host := fmt.Sprintf("%s.%s.svc", names.service(c.Name), ns)
		key := "TARGET_" + strings.ToUpper(strings.ReplaceAll(c.Name, "-", "_"))
		env = append(env,
			corev1.EnvVar{Name: key + "_URL", Value: fmt.Sprintf("%s://%s:%d", scheme(c), host, port)},
			corev1.EnvVar{Name: key + "_HOST", Value: host},
			corev1.EnvVar{Name: key + "_PORT", Value: fmt.Sprint(port)})
	}
	return env
}

// ExternalEnv points runners at an external target.
func ExternalEnv(ext *v1alpha1.ExternalTarget) []corev1.EnvVar {
	return []corev1.EnvVar{{Name: "TARGET_URL", Value: ext.URL}}
}

func targetLabels(tr *v1alpha1.TestRun, workload string) map[string]string {
	return map[string]string{
		naming.LabelTestRun:   tr.Name,
		naming.LabelTestRunNS: tr.Namespace,
		naming.LabelRole:      naming.RoleTarget,
		naming.LabelComponent: workload,
	}
}

func engineOf(c *v1alpha1.Component) string {
	if c.Engine != "" {
		return c.Engine
	}
	return defaultEngine[c.Kind]
}

func scheme(c *v1alpha1.Component) string {
	b := builtins[engineOf(c)]
	s := b.scheme
	if s == "" {
		s = "http"
	}
	if ptr.Deref(c.TLS, false) {
		switch s {
		case "http":
			s = "https"
		case "ws":
			s = "wss"
		}
	}
	return s
}

func podSecurity(tr *v1alpha1.TestRun) v1alpha1.PodSecurityLevel {
	if tr.Spec.Target.PodSecurity == v1alpha1.PodSecurityBaseline {
		return v1alpha1.PodSecurityBaseline
	}
	return v1alpha1.PodSecurityRestricted
}

// securityContext is what the namespace's Pod Security level asks of a container. Built-in
// images also get a read-only root filesystem: they write only to their emptyDirs.
func securityContext(c *v1alpha1.Component, level v1alpha1.PodSecurityLevel) *corev1.SecurityContext {
	sc := &corev1.SecurityContext{RunAsUser: c.RunAsUser}
	if level == v1alpha1.PodSecurityRestricted {
		sc.RunAsNonRoot = ptr.To(true)
		sc.AllowPrivilegeEscalation = ptr.To(false)
		sc.Capabilities = &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}
	}
	if c.Image == "" {
		sc.ReadOnlyRootFilesystem = ptr.To(true)
	}
	return sc
}

func container(c *v1alpha1.Component, level v1alpha1.PodSecurityLevel) (corev1.Container, error) {
	b, known := builtins[engineOf(c)]
	image := c.Image
	if image == "" {
		if !known {
			return corev1.Container{}, fmt.Errorf("component %q of kind %s needs an image", c.Name, c.Kind)
		}
		image = b.image
	}
	ports := c.Ports
	if len(ports) == 0 {
		if !known {
			return corev1.Container{}, fmt.Errorf("component %q of kind %s needs ports: the first is the one runners use", c.Name, c.Kind)
		}
		port := b.port
		if ptr.Deref(c.TLS, false) && b.scheme == "http" {
			port = 443
		}
		// Unnamed: the components of one machine share a pod, where names must be unique.
		ports = []corev1.ContainerPort{{ContainerPort: port}}
	}
	probe := c.ReadinessProbe
	if probe == nil {
		probe = &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(ports[0].ContainerPort)}},
			PeriodSeconds: 2,
		}
	}
	env := c.Env
	switch {
	case c.Kind == v1alpha1.ComponentDatabase:
		env = append(databaseEnv(c.Database), env...)
	case c.Kind == v1alpha1.ComponentXMPPBroker:
		env = append(xmppEnv(c.XMPP), env...)
	case c.Kind == v1alpha1.ComponentWebServer && ptr.Deref(c.TLS, false):
		// The built-in web server images make a certificate and listen on 443 when asked.
		env = append([]corev1.EnvVar{{Name: "FLEETBENCH_TLS", Value: "1"}}, env...)
	}
	return corev1.Container{
		Name:            c.Name,
		Image:           image,
		Command:         c.Command,
		Args:            c.Args,
		Env:             env,
		Ports:           ports,
		ReadinessProbe:  probe,
		SecurityContext: securityContext(c, level),
		// Locally built images are imported, never pulled.
		ImagePullPolicy: corev1.PullIfNotPresent,
	}, nil
}

// databaseEnv configures the built-in database images: the database to create and SQL to run
// once it is up.
func databaseEnv(db *v1alpha1.DatabaseSettings) []corev1.EnvVar {
	name := "fleetbench"
	var initSQL string
	if db != nil {
		if db.Name != "" {
			name = db.Name
		}
		initSQL = db.InitSQL
	}
	env := []corev1.EnvVar{{Name: "DB_NAME", Value: name}, {Name: "DB_USER", Value: "fleetbench"}, {Name: "DB_PASSWORD", Value: "fleetbench"}}
	if initSQL != "" {
		env = append(env, corev1.EnvVar{Name: "INIT_SQL", Value: initSQL})
	}
	return env
}

// xmppEnv configures the built-in XMPP broker images: the domain and the accounts to
// provision, named <prefix><n> for n from 0, so each emulated robot logs in as itself.
func xmppEnv(x *v1alpha1.XMPPSettings) []corev1.EnvVar {
	domain, prefix, users := "fleetbench.local", "device", int32(0)
	if x != nil {
		if x.Domain != "" {
			domain = x.Domain
		}
		if x.UserPrefix != "" {
			prefix = x.UserPrefix
		}
		users = x.Users
	}
	return []corev1.EnvVar{
		{Name: "XMPP_DOMAIN", Value: domain},
		{Name: "XMPP_USERS", Value: fmt.Sprint(users)},
		{Name: "XMPP_USER_PREFIX", Value: prefix},
		{Name: "XMPP_PASSWORD", Value: "secret"},
	}
}

func deployment(tr *v1alpha1.TestRun, ns string, names objectNames, workload string, profile *v1alpha1.ProfileSpec, level v1alpha1.PodSecurityLevel,
	resources *corev1.ResourceRequirements, volumes []corev1.Volume, containers ...corev1.Container) *appsv1.Deployment {
	labels := targetLabels(tr, workload)
	podSC := &corev1.PodSecurityContext{
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		// Web servers bind 80 and 443 without root or NET_BIND_SERVICE; a safe sysctl, allowed
		// by every Pod Security level, scoped to the pod's network namespace.
		Sysctls: []corev1.Sysctl{{Name: "net.ipv4.ip_unprivileged_port_start", Value: "0"}},
	}
	if level == v1alpha1.PodSecurityRestricted {
		podSC.RunAsNonRoot = ptr.To(true)
	}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: names.deployment(workload), Namespace: ns, Labels: ownedLabels(tr, labels)},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			// A restarted target would blur the measurement; Recreate never runs two at once.
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					Containers:      containers,
					Volumes:         volumes,
					Resources:       resources,
					SecurityContext: podSC,
					// A target never calls the API server, so it gets no token: none to steal
					// from a tenant's image, and no wait on the start's path, where the kubelet
					// holds a pod in a namespace this new until the namespace's root CA
					// ConfigMap reaches it (a second, measured in hack/bench/first-request).
					AutomountServiceAccountToken: ptr.To(false),
					NodeSelector:                 profile.NodeSelector,
					Tolerations:                  profile.Tolerations,
					// Copies of the TestRun's Secrets, made in this namespace (PullSecret).
					ImagePullSecrets: names.pullSecrets(tr.Spec.Target.ImagePullSecrets),
				},
			},
		},
	}
}

// evenShare splits the profile's CPU, memory and ephemeral storage into n equal requests and limits.
func evenShare(p *v1alpha1.ProfileSpec, n int) corev1.ResourceRequirements {
	return shareOf(p, 1, int64(n))
}

// shareOf is num/den of every standard resource of the profile, as equal requests and limits.
func shareOf(p *v1alpha1.ProfileSpec, num, den int64) corev1.ResourceRequirements {
	list := corev1.ResourceList{}
	for _, name := range standard {
		list[name] = fraction(profileAmount(p, name), name, num, den)
	}
	return corev1.ResourceRequirements{Requests: list, Limits: list.DeepCopy()}
}

func componentResources(c *v1alpha1.Component, p *v1alpha1.ProfileSpec) (corev1.ResourceRequirements, error) {
	switch {
	case c.Resources != nil:
		res := *c.Resources.DeepCopy()
		// The namespace quota caps limits, so every container needs them: default to requests.
		// What it leaves out entirely, fillUnstated bounds.
		for name, q := range res.Requests {
			if _, ok := res.Limits[name]; !ok {
				if res.Limits == nil {
					res.Limits = corev1.ResourceList{}
				}
				res.Limits[name] = q
			}
		}
		// As the API server would: a limit without a request requests the limit.
		for name, q := range res.Limits {
			if _, ok := res.Requests[name]; !ok {
				if res.Requests == nil {
					res.Requests = corev1.ResourceList{}
				}
				res.Requests[name] = q
			}
		}
		return res, nil
	case c.Share != nil:
		return shareOf(p, int64(*c.Share), 100), nil
	}
	return corev1.ResourceRequirements{}, fmt.Errorf("component %q: perComponent sizing needs share or resources", c.Name)
}
