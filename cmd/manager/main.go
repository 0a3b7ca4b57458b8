// Command manager runs the fleetbench operator.
package main

import (
	"bytes"
	"errors"
	"flag"
	"io/fs"
	"os"
	"runtime/debug"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	fleetbenchv1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/controller"
	"fleetbench.dev/fleetbench/internal/controller/capacityplan"
	"fleetbench.dev/fleetbench/internal/controller/orphans"
	"fleetbench.dev/fleetbench/internal/controller/testrun"
	"fleetbench.dev/fleetbench/internal/controller/testrun/admit"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	"fleetbench.dev/fleetbench/internal/controller/testrun/runenv"
	"fleetbench.dev/fleetbench/internal/controller/testrun/runio"
	"fleetbench.dev/fleetbench/pkg/memlimit"
	"fleetbench.dev/fleetbench/pkg/seal"
)

func envOr(key, fallback string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return fallback
}

func main() {
	var metricsAddr, probeAddr, runnerImage, runnerAccess, targetMetrics, defaultPodSecurity, watchNamespaces, targetNamespace string
	var metricsCertDir, pprofAddr, recordKeyFile, kubeletIdentity, kubeletCAFile string
	var leaderElect, podLevelResources, metricsSecure, requireQueue bool
	var apiQPS float64
	var orphanGrace time.Duration
	var apiBurst, maxTargetsPerNamespace, maxRunnersPerNamespace, workers, keptResults int
	flag.StringVar(&metricsAddr, "metrics-bind-address", ":8443", "Address the metrics endpoint binds to; 0 disables it.")
	flag.BoolVar(&metricsSecure, "metrics-secure", true, "Serve metrics over HTTPS to authenticated and authorized clients only "+
		"(a bearer token allowed to get /metrics); false serves plain HTTP to anyone, for a manager bound to 127.0.0.1 (make run).")
	flag.StringVar(&metricsCertDir, "metrics-cert-dir", "", "Directory holding tls.crt and tls.key for the metrics endpoint; empty or missing: self-signed.")
	flag.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "Address the health and readiness probes bind to.")
	flag.StringVar(&pprofAddr, "pprof-bind-address", "", "Address Go's pprof endpoints bind to (e.g. 127.0.0.1:6060, for the scale "+
		"benchmark's heap profiles); empty disables them. Unauthenticated: never bind it beyond localhost.")
	flag.BoolVar(&leaderElect, "leader-elect", false, "Elect a leader so only one replica reconciles at a time.")
	flag.StringVar(&runnerImage, "runner-image", envOr("FLEETBENCH_RUNNER_IMAGE", "fleetbench/runner:dev"), "Runner image for TestRuns that name none.")
	flag.StringVar(&runnerAccess, "runner-access", "auto", "How to reach runners' k6 API: direct (pod IPs, in-cluster), proxy (through the API server), or auto.")
	flag.StringVar(&targetMetrics, "target-metrics", runio.TargetMetricsAuto, "Where target CPU and memory come from: kubelet (each node's "+
		"kubelet summary, read from the kubelet: RSS, exact CPU time), metrics-api (metrics.k8s.io: working set, CPU rates), or auto (kubelet, else metrics-api).")
	flag.StringVar(&kubeletIdentity, "kubelet-stats-identity", "fleetbench-system/fleetbench-kubelet-stats", "namespace/name of the "+
		"ServiceAccount kubelet summaries are read as (it may get nodes/stats; the manager may create its tokens); not the manager's own.")
	flag.StringVar(&kubeletCAFile, "kubelet-ca-file", "", "PEM bundle of the CA that signs kubelets' serving certificates; empty: "+
		"the API server's CA. A kubelet whose certificate does not verify is not read (auto falls back to metrics-api).")
	flag.BoolVar(&podLevelResources, "pod-level-resources", true, "Size one-machine targets with pod-level resources (Kubernetes 1.34+); "+
		"where the API server drops them, targets fall back to splitting the profile among containers.")
	flag.StringVar(&defaultPodSecurity, "default-pod-security", runenv.DefaultPodSecurityLevel, "The Pod Security level the API server enforces in "+
		"namespaces without a pod-security.kubernetes.io/enforce label; a TestRun's target never gets a higher one than its namespace.")
	flag.StringVar(&watchNamespaces, "watch-namespaces", "", "Comma-separated namespaces whose TestRuns and CapacityPlans this manager "+
		"reconciles (a namespaced install); those elsewhere are never touched. Empty: all namespaces.")
	flag.StringVar(&targetNamespace, "target-namespace", "", "The namespace, made by an admin, every target goes into, shared by all "+
		"TestRuns: the manager never creates, labels or deletes it, and removes exactly each run's objects. Empty: a fresh namespace per TestRun.")
	flag.IntVar(&maxTargetsPerNamespace, "max-targets-per-namespace", 0, "The most provisioned targets the TestRuns of one namespace "+
		"hold at once; a run over it waits Pending TargetLimitReached until one ends, or fails so at its provisioning deadline. 0: no limit.")
	flag.IntVar(&maxRunnersPerNamespace, "max-runners-per-namespace", 0, "The most runners the TestRuns of one namespace have in flight "+
		"at once; a run that would pass it waits Pending RunnerLimitReached until enough end, or fails so at its provisioning deadline; "+
		"a run asking more alone ends NotPermitted, and parallelism auto chooses at most it. 0: no limit.")
	flag.BoolVar(&requireQueue, "require-queue", false, "Every TestRun must be admitted by Kueue: a run that names no LocalQueue, "+
		"in a namespace without a LocalQueue named default, ends Failed QueueRequired before it holds anything, whatever its spec says. "+
		"Without Kueue's API at start the manager still runs (deletions, cleanup), and every new run ends Failed KueueRequired.")
	flag.IntVar(&keptResults, "kept-results-per-namespace", admit.DefaultKeptRecords, "How many kept results (the records a later "+
		"TestRun's spec.baseline compares with, kept after their TestRun is deleted) a namespace holds; the oldest beyond it are deleted.")
	flag.DurationVar(&orphanGrace, "orphan-grace", orphans.DefaultGrace, "How long a target whose TestRun is gone without having removed it "+
		"(its finalizer stripped) keeps running before the manager deletes it; only what carries a TestRun's UID is ever deleted.")
	// client-go's 5 QPS (controller-runtime's 20) would queue a 1,000-runner fleet's Job creates
	// for a minute; the API server's priority and fairness still protects the cluster.
	flag.Float64Var(&apiQPS, "kube-api-qps", 200, "Queries per second the manager's client may send to the API server.")
	flag.IntVar(&apiBurst, "kube-api-burst", 400, "Burst of queries the manager's client may send above --kube-api-qps.")
	flag.IntVar(&workers, "max-concurrent-reconciles", runenv.DefaultWorkers, "TestRuns reconciled at once: a reconcile may "+
		"wait up to 2 minutes on a runner's setup() or teardown(), and other runs must not wait behind it.")
	flag.StringVar(&recordKeyFile, "record-key-file", "/etc/fleetbench/record-key/key", "File holding the key (at least 32 bytes) that seals the "+
		"records the manager keeps in tenants' namespaces (results, kept records) so that it reads back only its own; the chart mounts it "+
		"from a Secret. Missing: a random key for this process, and records sealed by an earlier one are refused as RecordTampered.")
	tenancy := bindTenancyFlags(flag.CommandLine)
	opts := zap.Options{}
	opts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))
	log := ctrl.Log.WithName("setup")
	// The GC collects before the heap outgrows the container (pkg/memlimit); GOMEMLIMIT wins.
	if d := memlimit.Decide(os.Getenv("GOMEMLIMIT"), os.ReadFile); d.Set {
		debug.SetMemoryLimit(d.Soft)
		log.Info(d.String())
	} else {
		log.Info(d.String(), "softMemoryLimitBytes", debug.SetMemoryLimit(-1))
	}
	switch defaultPodSecurity {
	case "restricted", "baseline", "privileged":
	default:
		log.Error(nil, "--default-pod-security must be restricted, baseline or privileged", "got", defaultPodSecurity)
		os.Exit(2)
	}
	recordKey, err := loadRecordKey(recordKeyFile)
	if err != nil {
		log.Error(err, "--record-key-file")
		os.Exit(2)
	}
	if recordKey == nil {
		log.Info("no record key file: records are sealed with a key of this process only", "file", recordKeyFile)
		recordKey = seal.NewKey()
	}
	namespaces, err := controller.ParseNamespaces(watchNamespaces, targetNamespace)
	if err != nil {
		log.Error(err, "--watch-namespaces and --target-namespace must name namespaces")
		os.Exit(2)
	}
	switch targetMetrics {
	case runio.TargetMetricsAuto, runio.TargetMetricsKubelet, runio.TargetMetricsMetricsAPI:
	default:
		log.Error(nil, "--target-metrics must be auto, kubelet or metrics-api", "got", targetMetrics)
		os.Exit(2)
	}

	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(fleetbenchv1alpha1.AddToScheme(scheme))
	// Kueue's Workloads queue TestRuns that name a LocalQueue, when Kueue is installed.
	utilruntime.Must(kueuev1beta2.AddToScheme(scheme))

	// How long the client's rate limiter held requests back (--kube-api-qps, --kube-api-burst).
	ctrlmetrics.RegisterRESTClientMetrics(ctrlmetrics.MetricRateLimiterLatency)
	cfg := ctrl.GetConfigOrDie()
	cfg.QPS, cfg.Burst = float32(apiQPS), apiBurst
	// Asked once: the cache and the TestRun controller's watches both follow this answer.
	kueue, err := controller.KueueServed(cfg)
	if err != nil {
		log.Error(err, "looking for Kueue's Workload API")
		os.Exit(1)
	}
	if requireQueue && !kueue {
		log.Error(nil, "--require-queue is set but Kueue's API (kueue.x-k8s.io/v1beta2 Workloads and LocalQueues) is not served: "+
			"every new TestRun will end Failed KueueRequired; install Kueue and restart the manager")
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsOptions(metricsAddr, metricsSecure, metricsCertDir),
		HealthProbeBindAddress: probeAddr,
		PprofBindAddress:       pprofAddr,
		LeaderElection:         leaderElect,
		LeaderElectionID:       "fleetbench.dev",
		// The process exits right after Start returns: hand the lease over at once, so a
		// rolled-out manager does not sit idle for the lease duration (about 15 s).
		LeaderElectionReleaseOnCancel: true,
		Cache:                         controller.WithKueue(controller.CacheOptions(namespaces), kueue),
	})
	if err != nil {
		log.Error(err, "creating manager")
		os.Exit(1)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		log.Error(err, "adding health check")
		os.Exit(1)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		log.Error(err, "adding readiness check")
		os.Exit(1)
	}

	cfg = mgr.GetConfig()
	// Logs and the pod proxy pass on what a pod answers: no redirects.
	clientset, _, err := runio.NoRedirectClientset(cfg)
	if err != nil {
		log.Error(err, "creating clientset")
		os.Exit(1)
	}
	kubeletStats, err := kubeletSummaries(targetMetrics, kubeletIdentity, kubeletCAFile, cfg, clientset)
	if err != nil {
		log.Error(err, "reading kubelet summaries")
		os.Exit(2)
	}
	api := runio.NewDirectRunnerAPI()
	if runnerAccess == "proxy" || (runnerAccess == "auto" && os.Getenv("KUBERNETES_SERVICE_HOST") == "") {
		// Outside the cluster pod IPs are usually unreachable; the API server's proxy is not.
		if api, err = runio.NewProxyRunnerAPI(cfg); err != nil {
			log.Error(err, "creating the runner proxy client")
			os.Exit(1)
		}
	}
	runOpts := runenv.Options{
		RunnerAPI:          api,
		Logs:               &runio.APILogReader{Clientset: clientset},
		Stats:              &runio.APITargetStats{Clientset: clientset, Kubelet: kubeletStats},
		RunnerImage:        runnerImage,
		Timeouts:           decide.DefaultTimeouts,
		PodLevelResources:  podLevelResources,
		TargetMetrics:      targetMetrics,
		DefaultPodSecurity: defaultPodSecurity,
		TargetNamespace:    namespaces.Target,

		// The admin's caps per namespace (TargetLimitReached, RunnerLimitReached).
		MaxTargetsPerNamespace: maxTargetsPerNamespace,
		MaxRunnersPerNamespace: maxRunnersPerNamespace,
		KeptRecords:            keptResults,
		Workers:                workers,
		Kueue:                  kueue,
		RecordKey:              recordKey,
		RequireQueue:           requireQueue,
	}
	if err := tenancy.apply(&runOpts); err != nil {
		log.Error(err, "the target tenancy flags")
		os.Exit(2)
	}
	if err := testrun.New(mgr, runOpts).SetupWithManager(mgr); err != nil {
		log.Error(err, "setting up the TestRun controller")
		os.Exit(1)
	}

	if err := capacityplan.New(mgr, capacityplan.Options{TargetNamespace: namespaces.Target}).SetupWithManager(mgr); err != nil {
		log.Error(err, "setting up the CapacityPlan controller")
		os.Exit(1)
	}

	if err := orphans.New(mgr, orphans.Options{Namespaces: namespaces, Grace: orphanGrace}).SetupWithManager(mgr); err != nil {
		log.Error(err, "setting up the orphan sweeper")
		os.Exit(1)
	}

	log.Info("starting manager", "kueue", kueue, "requireQueue", requireQueue, "runnerImage", runnerImage, "runnerAccess", runnerAccess, "targetMetrics", targetMetrics,
		"watchNamespaces", namespaces.Watch, "targetNamespace", namespaces.Target)
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		log.Error(err, "running manager")
		os.Exit(1)
	}
}

// loadRecordKey reads the record key; nil without error when the file does not exist.
func loadRecordKey(path string) (seal.Key, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return seal.ParseKey(bytes.TrimSpace(raw))
}
