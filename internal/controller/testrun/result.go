package testrun

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	rc "fleetbench.dev/fleetbench/internal/controller/reconcile"
	"fleetbench.dev/fleetbench/pkg/naming"
	"fleetbench.dev/fleetbench/pkg/report"
)

// ResultKey is the full result's key in the result ConfigMap.
const ResultKey = "summary.json.gz"

// maxResultBytes keeps the ConfigMap under the API server's 1 MiB object limit.
const maxResultBytes = 900 << 10

// storeResult keeps the full merged result, in k6's summary shape, in a ConfigMap the TestRun
// owns, and points status at it; a result too large for a ConfigMap is a warning instead.
func (r *Reconciler) storeResult(ctx context.Context, run *v1alpha1.TestRun, summary report.K6Summary) error {
	raw, err := json.Marshal(summary)
	if err != nil {
		return fmt.Errorf("encoding the full result: %w", err)
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	_, _ = zw.Write(raw)
	_ = zw.Close()
	res := run.Status.Results
	if z.Len() > maxResultBytes {
		res.Warnings = append(res.Warnings, fmt.Sprintf("the full result (%d KiB gzipped) is too large for a ConfigMap and was not kept", z.Len()>>10))
		return nil
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: naming.ResultConfigMap(run.Name), Namespace: run.Namespace,
			Labels: map[string]string{naming.LabelTestRun: run.Name, naming.LabelRole: naming.RoleResults}},
		BinaryData: map[string][]byte{ResultKey: z.Bytes()},
	}
	if err := controllerutil.SetControllerReference(run, cm, r.scheme); err != nil {
		return err
	}
	// Collection runs once per run; a repeat after a lost status write finds the same result.
	if err := rc.CreateOrGet(ctx, r.Client, cm); err != nil {
		return err
	}
	res.FullResult = &v1alpha1.FullResultRef{ConfigMap: cm.Name, Key: ResultKey}
	return nil
}
