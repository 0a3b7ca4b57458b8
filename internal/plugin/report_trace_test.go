package plugin

import (
	"bytes"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// TestReportRefusesATraceURLThatIsNotHTTP: report --trace-url (and $FLEETBENCH_TRACE_URL, its
// default) takes only an absolute http(s) URL with {traceID}, before it reads the cluster.
func TestReportRefusesATraceURLThatIsNotHTTP(t *testing.T) {
	for _, args := range [][]string{
		{"report", "any", "--trace-url", "javascript:alert('{traceID}')"},
		{"report", "any", "--trace-url", "http://jaeger.example/trace/"},
	} {
		var stdout, stderr bytes.Buffer
		code := Run(ctx, append(args, "--kubeconfig", kubeconfig), genericiooptions.IOStreams{In: strings.NewReader(""), Out: &stdout, ErrOut: &stderr})
		if code == 0 || !strings.Contains(stderr.String(), "--trace-url") {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr.String())
		}
	}
	t.Setenv(TraceURLEnv, "ftp://x/{traceID}")
	var stderr bytes.Buffer
	if code := Run(ctx, []string{"report", "any", "--kubeconfig", kubeconfig}, genericiooptions.IOStreams{In: strings.NewReader(""),
		Out: &bytes.Buffer{}, ErrOut: &stderr}); code == 0 || !strings.Contains(stderr.String(), "--trace-url") {
		t.Errorf("$%s: exit %d, stderr %q", TraceURLEnv, code, stderr.String())
	}
}
