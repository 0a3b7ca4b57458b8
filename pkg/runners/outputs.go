package runners

import (
	"strings"

	corev1 "k8s.io/api/core/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/naming"
)

// k6's names of its built-in outputs (k6 v2 internal/cmd/outputs.go).
const (
	k6PrometheusRW   = "experimental-prometheus-rw"
	k6OpenTelemetry  = "opentelemetry"
	otlpHTTPProtocol = "http/protobuf"
)

// OutputArgs adds k6's own outputs of spec.outputs next to fleetbench's, configured through
// k6's environment variables (one output of each type, as admission allows), and tags every
// sample with testid so the runners of one run are one test in the receiver.
func OutputArgs(tr *v1alpha1.TestRun) (args []string, env []corev1.EnvVar) {
	if len(tr.Spec.Outputs) == 0 {
		return nil, nil
	}
	testID := tr.Status.TestID
	if testID == "" {
		testID = naming.TestID(tr.Name, string(tr.UID))
	}
	args = []string{"--tag", "testid=" + testID}
	for _, o := range tr.Spec.Outputs {
		switch o.Type {
		case v1alpha1.OutputPrometheusRemoteWrite:
			args = append(args, "--out", k6PrometheusRW)
			env = append(env, corev1.EnvVar{Name: "K6_PROMETHEUS_RW_SERVER_URL", Value: o.URL})
			if o.Insecure {
				env = append(env, corev1.EnvVar{Name: "K6_PROMETHEUS_RW_INSECURE_SKIP_TLS_VERIFY", Value: "true"})
			}
			if len(o.TrendStats) > 0 {
				env = append(env, corev1.EnvVar{Name: "K6_PROMETHEUS_RW_TREND_STATS", Value: strings.Join(o.TrendStats, ",")})
			}
		case v1alpha1.OutputOpenTelemetry:
			args = append(args, "--out", k6OpenTelemetry)
			if o.Protocol == "http" {
				env = append(env,
					corev1.EnvVar{Name: "K6_OTEL_EXPORTER_PROTOCOL", Value: otlpHTTPProtocol},
					corev1.EnvVar{Name: "K6_OTEL_HTTP_EXPORTER_ENDPOINT", Value: o.URL})
				if o.Insecure {
					env = append(env, corev1.EnvVar{Name: "K6_OTEL_HTTP_EXPORTER_INSECURE", Value: "true"})
				}
			} else {
				env = append(env,
					corev1.EnvVar{Name: "K6_OTEL_EXPORTER_PROTOCOL", Value: "grpc"},
					corev1.EnvVar{Name: "K6_OTEL_GRPC_EXPORTER_ENDPOINT", Value: o.URL})
				if o.Insecure {
					env = append(env, corev1.EnvVar{Name: "K6_OTEL_GRPC_EXPORTER_INSECURE", Value: "true"})
				}
			}
		}
	}
	return args, env
}
