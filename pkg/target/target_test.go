package target

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
)

var c1 = &v1alpha1.ProfileSpec{CPU: resource.MustParse("1"), Memory: resource.MustParse("512Mi")}

func envMap(env []corev1.EnvVar) map[string]string {
	m := map[string]string{}
	for _, e := range env {
		m[e.Name] = e.Value
	}
	return m
}

func TestOneMachineSharesTheProfile(t *testing.T) {
	app := v1alpha1.Component{Name: "app", Kind: v1alpha1.ComponentCustom, Image: "sut:dev", Ports: []corev1.ContainerPort{{ContainerPort: 8080}}}
	tr := tw.MakeTestRun("stab", "team").Components(
		v1alpha1.Component{Name: "web", Kind: v1alpha1.ComponentWebServer, TLS: ptr.To(true)}, app,
		v1alpha1.Component{Name: "db", Kind: v1alpha1.ComponentDatabase, Engine: "mariadb"}).Obj()
	objs, err := Build(tr, c1, "fb-team-stab", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(objs.Deployments) != 1 || len(objs.Deployments[0].Spec.Template.Spec.Containers) != 3 {
		t.Fatalf("one machine must be one pod with 3 containers, got %d deployments", len(objs.Deployments))
	}
	var cpu, mem int64
	for _, c := range objs.Deployments[0].Spec.Template.Spec.Containers {
		cpu += c.Resources.Limits.Cpu().MilliValue()
		mem += c.Resources.Limits.Memory().Value()
	}
	if cpu > 1000 || mem > 512<<20 || cpu < 990 || mem < 511<<20 {
		t.Errorf("containers share %dm CPU and %d bytes, want about the profile's 1000m and 512Mi", cpu, mem)
	}
	env := envMap(objs.Env)
	for k, want := range map[string]string{
		"TARGET_WEB_URL": "https://web.fb-team-stab.svc:443",
		"TARGET_APP_URL": "http://app.fb-team-stab.svc:8080",
		"TARGET_DB_URL":  "mysql://db.fb-team-stab.svc:3306",
		"TARGET_DB_PORT": "3306",
	} {
		if env[k] != want {
			t.Errorf("%s = %q, want %q", k, env[k], want)
		}
	}
	if len(objs.Services) != 3 || objs.Services[1].Spec.Selector["fleetbench.dev/component"] != "stack" {
		t.Errorf("services must select the shared pod: %+v", objs.Services)
	}
}

func TestPerComponentSizing(t *testing.T) {
	tr := tw.MakeTestRun("raja", "team").Sizing(v1alpha1.SizingPerComponent).Components(
		v1alpha1.Component{Name: "web", Kind: v1alpha1.ComponentWebServer, Share: ptr.To[int32](25)},
		v1alpha1.Component{Name: "xmpp", Kind: v1alpha1.ComponentXMPPBroker, Engine: "ejabberd", Resources: &corev1.ResourceRequirements{
			Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("8Gi")}}}).Obj()
	h3 := &v1alpha1.ProfileSpec{CPU: resource.MustParse("12"), Memory: resource.MustParse("32Gi")}
	objs, err := Build(tr, h3, "ns", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(objs.Deployments) != 2 {
		t.Fatalf("want a pod per component, got %d", len(objs.Deployments))
	}
	web := objs.Deployments[0].Spec.Template.Spec.Containers[0].Resources.Limits
	if web.Cpu().MilliValue() != 3000 || web.Memory().Value() != 8<<30 {
		t.Errorf("25%% of H3 = 3 CPU / 8Gi, got %v / %v", web.Cpu(), web.Memory())
	}
	xmpp := objs.Deployments[1].Spec.Template.Spec.Containers[0]
	if xmpp.Image != "fleetbench/ejabberd:dev" || xmpp.Resources.Limits.Memory().String() != "8Gi" {
		t.Errorf("xmpp container = %s %v", xmpp.Image, xmpp.Resources.Limits)
	}
	if envMap(objs.Env)["TARGET_XMPP_URL"] != "ws://xmpp.ns.svc:5280" {
		t.Errorf("xmpp url = %q", envMap(objs.Env)["TARGET_XMPP_URL"])
	}
}

// TestAdmittedFlavorReachesEveryTargetPod: the node labels and tolerations of the Kueue flavors
// the target's pod set was admitted on are on every Deployment's pods, beside the Profile's,
// which are not changed.
func TestAdmittedFlavorReachesEveryTargetPod(t *testing.T) {
	tr := tw.MakeTestRun("q", "team").Sizing(v1alpha1.SizingPerComponent).Components(
		v1alpha1.Component{Name: "web", Kind: v1alpha1.ComponentWebServer, Share: ptr.To[int32](50)},
		v1alpha1.Component{Name: "db", Kind: v1alpha1.ComponentDatabase, Share: ptr.To[int32](50)}).Obj()
	profile := &v1alpha1.ProfileSpec{CPU: resource.MustParse("2"), Memory: resource.MustParse("4Gi"), NodeSelector: map[string]string{"zone": "a"}}
	admitted := &v1alpha1.AdmittedPodSet{Name: "target", NodeSelector: map[string]string{"pool": "reserved"},
		Tolerations: []v1alpha1.SnapshotToleration{{Key: "reserved", Operator: "Exists", Effect: "NoSchedule"}}}
	objs, err := Build(tr, profile, "ns", Options{Admitted: admitted})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range objs.Deployments {
		pod := d.Spec.Template.Spec
		if pod.NodeSelector["pool"] != "reserved" || pod.NodeSelector["zone"] != "a" || len(pod.Tolerations) != 1 || pod.Tolerations[0].Key != "reserved" {
			t.Errorf("%s: nodeSelector %v tolerations %+v, want the Profile's zone=a and the flavor's", d.Name, pod.NodeSelector, pod.Tolerations)
		}
	}
	if len(profile.NodeSelector) != 1 {
		t.Errorf("building the target changed the Profile's nodeSelector: %v", profile.NodeSelector)
	}
}

func TestTargetIsFencedAndWired(t *testing.T) {
	app := v1alpha1.Component{Name: "app", Kind: v1alpha1.ComponentCustom, Image: "fleetbench/sut:dev",
		Ports: []corev1.ContainerPort{{ContainerPort: 8080}},
		Env:   []corev1.EnvVar{{Name: "DATABASE_URL", Value: "postgres://fleetbench:fleetbench@$(TARGET_DB_HOST):$(TARGET_DB_PORT)/iot"}}}
	db := v1alpha1.Component{Name: "db", Kind: v1alpha1.ComponentDatabase, Database: &v1alpha1.DatabaseSettings{Name: "iot", InitSQL: "CREATE TABLE t (x int);"},
		Resources: &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}}}
	tr := tw.MakeTestRun("iot", "team").Sizing(v1alpha1.SizingPerComponent).Components(func() v1alpha1.Component { app.Share = ptr.To[int32](50); return app }(), db).Obj()
	objs, err := Build(tr, &v1alpha1.ProfileSpec{CPU: resource.MustParse("2"), Memory: resource.MustParse("4Gi")}, "fb-team-iot", Options{})
	if err != nil {
		t.Fatal(err)
	}
	hard := objs.Quota.Spec.Hard
	if hard.Name(corev1.ResourceLimitsCPU, resource.DecimalSI).String() != "2" || hard.Name(corev1.ResourceLimitsMemory, resource.BinarySI).String() != "4Gi" {
		t.Errorf("quota = %v, want the profile", hard)
	}
	from := objs.NetworkPolicy.Spec.Ingress[0].From
	if len(from) != 2 || from[0].PodSelector.MatchLabels["fleetbench.dev/role"] != "runner" || from[0].NamespaceSelector.MatchLabels["kubernetes.io/metadata.name"] != "team" {
		t.Errorf("network policy admits %+v", from)
	}
	appEnv := objs.Deployments[0].Spec.Template.Spec.Containers[0].Env
	if appEnv[len(appEnv)-1].Name != "DATABASE_URL" || envMap(appEnv)["TARGET_DB_HOST"] != "db.fb-team-iot.svc" {
		t.Errorf("the app must see TARGET_DB_* before its own DATABASE_URL: %+v", appEnv)
	}
	dbc := objs.Deployments[1].Spec.Template.Spec.Containers[0]
	if e := envMap(dbc.Env); e["DB_NAME"] != "iot" || e["INIT_SQL"] != "CREATE TABLE t (x int);" {
		t.Errorf("database env = %v", e)
	}
	if dbc.Resources.Limits.Memory().String() != "1Gi" {
		t.Errorf("limits must default to requests under a quota: %v", dbc.Resources.Limits)
	}
	if objs.Namespace.Labels["pod-security.kubernetes.io/warn"] != "restricted" {
		t.Errorf("namespace labels = %v", objs.Namespace.Labels)
	}
}

func TestBuiltinDatabasesGetScratchSpace(t *testing.T) {
	tr := tw.MakeTestRun("db", "team").Components(
		v1alpha1.Component{Name: "app", Kind: v1alpha1.ComponentCustom, Image: "fleetbench/sut:dev", Ports: []corev1.ContainerPort{{ContainerPort: 8080}}},
		v1alpha1.Component{Name: "db", Kind: v1alpha1.ComponentDatabase, Engine: "mariadb"}).Obj()
	objs, err := Build(tr, c1, "ns", Options{})
	if err != nil {
		t.Fatal(err)
	}
	pod := objs.Deployments[0].Spec.Template.Spec
	if len(pod.Volumes) != 3 || len(pod.Containers[1].VolumeMounts) != 3 || pod.Containers[1].VolumeMounts[1].MountPath != "/run/mysqld" {
		t.Errorf("volumes %+v mounts %+v", pod.Volumes, pod.Containers[1].VolumeMounts)
	}
	if len(pod.Containers[0].VolumeMounts) != 0 {
		t.Errorf("a custom image gets no scratch volumes: %+v", pod.Containers[0].VolumeMounts)
	}
	if !objs.Services[1].Spec.PublishNotReadyAddresses {
		t.Error("components must reach each other before the pod is Ready")
	}
}

func TestXMPPBrokerGetsItsAccounts(t *testing.T) {
	tr := tw.MakeTestRun("raja", "team").Components(v1alpha1.Component{Name: "xmpp", Kind: v1alpha1.ComponentXMPPBroker,
		XMPP: &v1alpha1.XMPPSettings{Domain: "robots.local", Users: 65000, UserPrefix: "robot"}}).Obj()
	objs, err := Build(tr, c1, "ns", Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := objs.Deployments[0].Spec.Template.Spec.Containers[0]
	env := envMap(c.Env)
	if c.Image != "fleetbench/prosody:dev" || env["XMPP_DOMAIN"] != "robots.local" || env["XMPP_USERS"] != "65000" || env["XMPP_USER_PREFIX"] != "robot" {
		t.Errorf("xmpp container %s env %v", c.Image, env)
	}
}

func TestOneMachineWithPodLevelResourcesSharesOneBudget(t *testing.T) {
	tr := tw.MakeTestRun("stab", "team").Components(
		v1alpha1.Component{Name: "web", Kind: v1alpha1.ComponentWebServer},
		v1alpha1.Component{Name: "db", Kind: v1alpha1.ComponentDatabase}).Obj()
	objs, err := Build(tr, c1, "ns", Options{PodLevelResources: true})
	if err != nil {
		t.Fatal(err)
	}
	pod := objs.Deployments[0].Spec.Template.Spec
	if pod.Resources == nil || pod.Resources.Limits.Cpu().String() != "1" || pod.Resources.Limits.Memory().String() != "512Mi" ||
		pod.Resources.Requests.Memory().String() != "512Mi" {
		t.Fatalf("the pod must hold the whole profile: %+v", pod.Resources)
	}
	for _, c := range pod.Containers {
		// Only the disk is the container's own: the pod cannot hold ephemeral-storage.
		_, cpu := c.Resources.Limits[corev1.ResourceCPU]
		_, mem := c.Resources.Limits[corev1.ResourceMemory]
		if cpu || mem || len(c.Resources.Requests) != 1 || c.Resources.Limits.StorageEphemeral().String() != "1Gi" {
			t.Errorf("container %s must share the pod's budget and half the profile's 2Gi disk, has %+v", c.Name, c.Resources)
		}
	}

	// Per component, each pod is one container: its own resources, no pod-level ones.
	per := tw.MakeTestRun("per", "team").Sizing(v1alpha1.SizingPerComponent).Components(
		v1alpha1.Component{Name: "web", Kind: v1alpha1.ComponentWebServer, Share: ptr.To[int32](50)}).Obj()
	objs, err = Build(per, c1, "ns", Options{PodLevelResources: true})
	if err != nil {
		t.Fatal(err)
	}
	if pod := objs.Deployments[0].Spec.Template.Spec; pod.Resources != nil || pod.Containers[0].Resources.Limits.Memory().String() != "256Mi" {
		t.Errorf("per component: pod %+v container %+v", pod.Resources, pod.Containers[0].Resources)
	}
}

func TestPodSecurityLevels(t *testing.T) {
	web := v1alpha1.Component{Name: "web", Kind: v1alpha1.ComponentWebServer}
	app := v1alpha1.Component{Name: "app", Kind: v1alpha1.ComponentCustom, Image: "legacy:1", RunAsUser: ptr.To[int64](1000),
		Ports: []corev1.ContainerPort{{ContainerPort: 8080}}}
	rootApp := app
	rootApp.RunAsUser = ptr.To[int64](0)
	for _, tc := range []struct {
		name           string
		level          v1alpha1.PodSecurityLevel
		components     []v1alpha1.Component
		enforce        string
		nonRoot        bool
		wantAppUser    int64
		wantAppDropAll bool
	}{
		{name: "default is restricted", components: []v1alpha1.Component{web, app}, enforce: "restricted", nonRoot: true, wantAppUser: 1000, wantAppDropAll: true},
		{name: "baseline lets an image run as root", level: v1alpha1.PodSecurityBaseline, components: []v1alpha1.Component{web, rootApp}, enforce: "baseline", wantAppUser: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := tw.MakeTestRun("sec", "team").Components(tc.components...).Obj()
			tr.Spec.Target.PodSecurity = tc.level
			objs, err := Build(tr, c1, "ns", Options{})
			if err != nil {
				t.Fatal(err)
			}
			labels := objs.Namespace.Labels
			if labels["pod-security.kubernetes.io/enforce"] != tc.enforce || labels["pod-security.kubernetes.io/warn"] != "restricted" ||
				labels["pod-security.kubernetes.io/audit"] != "restricted" {
				t.Errorf("namespace labels = %v", labels)
			}
			pod := objs.Deployments[0].Spec.Template.Spec
			if ptr.Deref(pod.SecurityContext.RunAsNonRoot, false) != tc.nonRoot || pod.SecurityContext.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
				t.Errorf("pod security context = %+v", pod.SecurityContext)
			}
			if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
				t.Errorf("a target never calls the API server: want no service account token, got automount %v", pod.AutomountServiceAccountToken)
			}
			if s := pod.SecurityContext.Sysctls; len(s) != 1 || s[0].Name != "net.ipv4.ip_unprivileged_port_start" || s[0].Value != "0" {
				t.Errorf("web servers need the low ports without root: sysctls %+v", s)
			}
			builtin, custom := pod.Containers[0].SecurityContext, pod.Containers[1].SecurityContext
			if !ptr.Deref(builtin.ReadOnlyRootFilesystem, false) || ptr.Deref(custom.ReadOnlyRootFilesystem, false) {
				t.Errorf("only built-in images (which know their writable paths) get a read-only root: %+v / %+v", builtin, custom)
			}
			if ptr.Deref(custom.RunAsUser, -1) != tc.wantAppUser {
				t.Errorf("custom runAsUser = %v, want %d", custom.RunAsUser, tc.wantAppUser)
			}
			dropsAll := custom.Capabilities != nil && len(custom.Capabilities.Drop) == 1 && custom.Capabilities.Drop[0] == "ALL"
			if dropsAll != tc.wantAppDropAll || (tc.wantAppDropAll && ptr.Deref(custom.AllowPrivilegeEscalation, true)) {
				t.Errorf("custom container security context = %+v", custom)
			}
		})
	}
}

func TestOneMachineRefusesTwoComponentsOnOnePort(t *testing.T) {
	tr := tw.MakeTestRun("two", "team").Components(
		v1alpha1.Component{Name: "a", Kind: v1alpha1.ComponentXMPPBroker},
		v1alpha1.Component{Name: "b", Kind: v1alpha1.ComponentXMPPBroker, Engine: "ejabberd"}).Obj()
	_, err := Build(tr, c1, "ns", Options{})
	if err == nil || !strings.Contains(err.Error(), `components "a" and "b" both listen on port 5280`) || !strings.Contains(err.Error(), "perComponent") {
		t.Fatalf("err = %v", err)
	}
	tr.Spec.Target.Sizing = v1alpha1.SizingPerComponent
	tr.Spec.Target.Components[0].Share = ptr.To[int32](50)
	tr.Spec.Target.Components[1].Share = ptr.To[int32](50)
	if _, err := Build(tr, c1, "ns", Options{}); err != nil {
		t.Fatalf("per component each has its own pod: %v", err)
	}
}

// TestZonedTargetIsExposedByNodePorts: a zoned run's target is reached from other clusters:
// every component's Service is a NodePort, and the NetworkPolicy opens the components' ports
// to any source beside its rule for the run's own runners; without zones neither.
func TestZonedTargetIsExposedByNodePorts(t *testing.T) {
	tr := tw.MakeTestRun("zoned", "team").Obj()
	plain, err := Build(tr, c1, "fb-team-zoned", Options{})
	if err != nil {
		t.Fatal(err)
	}
	tr.Spec.Zones = []v1alpha1.ZoneSpec{{Name: "home", Runners: 1}, {Name: "c2", Cluster: "cluster-2", Runners: 1}}
	zoned, err := Build(tr, c1, "fb-team-zoned", Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, svc := range zoned.Services {
		if svc.Spec.Type != corev1.ServiceTypeNodePort || plain.Services[i].Spec.Type == corev1.ServiceTypeNodePort {
			t.Errorf("service %s: %q zoned, %q without zones; want NodePort only zoned", svc.Name, svc.Spec.Type, plain.Services[i].Spec.Type)
		}
	}
	in := zoned.NetworkPolicy.Spec.Ingress
	if len(in) != len(plain.NetworkPolicy.Spec.Ingress)+1 {
		t.Fatalf("ingress rules %+v, want the plain ones and one more", in)
	}
	open := in[len(in)-1]
	if len(open.From) != 0 || len(open.Ports) != len(zoned.Services) || open.Ports[0].Port.IntValue() != int(zoned.Services[0].Spec.Ports[0].Port) {
		t.Errorf("the zones' rule %+v: want every component's port from any source", open)
	}
}
